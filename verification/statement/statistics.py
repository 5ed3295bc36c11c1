"""Statistical checks: a mean below a bound (:meth:`.Context.mean_leq`), a mean equal to a target
(:meth:`.Context.mean_close`) and a rate's decay exponent (:meth:`.Context.decay`), each with a stated
false-alarm probability (the slack is the distance from the confidence bound to the claimed bound) and its power
recorded: the smallest violation, relative to the bound, detected with probability at least 0.8.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.statement.evidence import CheckFailed, EvidenceLog


class Statistics(EvidenceLog):
    """The statistical checks of a :class:`~refvi.verification.statement.Context`."""

    rates: list[dict]

    def mean_leq(self, values, bound: float, *, alpha: float = 1e-6, label: str = "") -> None:
        """Statistical claim E[X] <= bound from i.i.d. draws ``values``.

        Fails only if the one-sided (1 - alpha) *lower* confidence bound of the mean exceeds ``bound``, so a true claim
        is rejected with probability at most ``alpha`` (CLT normal approximation; stated false-alarm rate).  Its power
        is recorded: the smallest violation it detects with probability >= 80%, relative to the bound (or to the draws'
        mean magnitude when the bound is 0) (:attr:`power`).
        """
        self._note(label, "use", values, bound, True)
        x = np.asarray(values, dtype=np.float64).view(np.ndarray).ravel()
        if x.size < 2 or not np.all(np.isfinite(x)):
            raise CheckFailed(f"{label}: need >= 2 finite Monte Carlo values, got {x.size}")
        z = _normal_quantile(1.0 - alpha)
        mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
        lower = mean - z * se
        self._track(mean, float(bound), label)
        # a true mean of bound + r * scale is flagged with probability >= 80% when r * scale >= (z + z_0.8) * se; the
        # scale is the bound, or for a zero bound the mean magnitude of the draws
        scale = float(bound) if bound > 0 else float(np.mean(np.abs(x)))
        if scale > 0:
            self._note_power((z + _Z_POWER) * se / scale, label, x.size)
        self._record(
            label,
            lower,
            float(bound),
            "<= (stat)",
            float(bound) - lower,
            lower <= bound,
            f"mean={mean:.6g}, se={se:.3g}, z={z:.2f} (false-alarm <= {alpha:g})",
        )

    def decay(
        self, horizons, values, exponent: float, *, slack: float = 0.2, alpha: float = 1e-6, label: str = ""
    ) -> float:
        """A rate's exponent: ``E[X_T]`` measured at >= 3 horizons ``T`` (``values[i]``: the draws at ``horizons[i]``;
        one value each when exact) decays at least like ``T^exponent``.  The measured exponent is the least-squares
        slope of ``log mean`` on ``log T``; the claim fails if its one-sided (1 - alpha) lower confidence bound
        (delta method) exceeds ``exponent + slack``.  Use on instances in the theorem's asymptotic regime, where the
        rate is attained (noise-dominated): a wrong step rule or a missing average then shows as a slower decay.
        Returns the measured exponent."""
        self._note(label, "use", values, horizons, True)
        values = [np.asarray(v, dtype=np.float64).view(np.ndarray) for v in values]
        T = np.asarray(horizons, dtype=np.float64).view(np.ndarray)
        if T.size < 3 or len(values) != T.size:
            raise CheckFailed(f"{label}: a decay exponent needs >= 3 horizons with values, got {T.size}")
        means, var_log = [], []
        for v in values:
            x = np.asarray(v, dtype=np.float64).ravel()
            if x.size < 1 or not np.all(np.isfinite(x)) or x.mean() <= 0:
                raise CheckFailed(f"{label}: need positive finite values at every horizon")
            means.append(float(x.mean()))
            var_log.append(0.0 if x.size < 2 else float(x.var(ddof=1) / x.size) / means[-1] ** 2)
        lt = np.log(T)
        w = (lt - lt.mean()) / float(np.sum((lt - lt.mean()) ** 2))
        slope = float(w @ np.log(means))
        se = math.sqrt(float(w**2 @ np.asarray(var_log)))
        lower = slope - _normal_quantile(1.0 - alpha) * se
        self._record(
            label,
            lower,
            exponent + slack,
            "<= (stat)",
            exponent + slack - lower,
            lower <= exponent + slack,
            f"measured exponent {slope:.3f} (se {se:.2g}) over T = {[int(t) for t in T]}, theorem's "
            f"{exponent:g}, slack {slack:g}",
        )
        self.rates.append(
            {"label": label, "exponent": slope, "theorem": float(exponent), "horizons": [int(t) for t in T]}
        )
        return slope

    def mean_close(self, values, target, *, alpha: float = 1e-6, atol: float = 0.0, label: str = "") -> None:
        """Statistical claim E[X] == target for vector draws (rows = draws), per-coordinate z-tests with a
        Bonferroni correction so that the joint false-alarm rate is at most ``alpha``.  Its power is recorded: the
        smallest bias, relative to ``max |target|`` (or to the draws' magnitude for a zero target), detected with
        probability >= 80% (:attr:`power`)."""
        marked = (values, target)
        X = np.asarray(values, dtype=np.float64).view(np.ndarray)
        X = X.reshape(X.shape[0], -1)
        t = np.asarray(target, dtype=np.float64).view(np.ndarray).ravel()
        if X.shape[1] != t.size:
            raise CheckFailed(f"{label}: {X.shape[1]} coordinates drawn, target has {t.size}")
        z = _normal_quantile(1.0 - alpha / (2.0 * t.size))
        mean = X.mean(axis=0)
        se = X.std(axis=0, ddof=1) / math.sqrt(X.shape[0])
        excess = np.abs(mean - t) - z * se - atol
        scale = float(np.max(np.abs(t))) if t.size else 0.0
        scale = scale if scale > 0 else float(np.max(np.mean(np.abs(X), axis=0), initial=0.0))
        if scale > 0:
            # a bias of resolution * scale (max |target|, or the draws' magnitude for a zero target) in the worst
            # coordinate is flagged with probability >= 80%
            self._note_power((z + _Z_POWER) * float(np.max(se)) / scale, label, X.shape[0])
        i = int(np.argmax(excess))
        ok = bool(np.all(excess <= 0))
        self._note(label, "compare", *marked, ok)
        self._record(
            label,
            float(mean[i]),
            float(t[i]),
            "== (stat)",
            float(-np.max(excess)),
            ok,
            f"worst coordinate {i}: |mean - target| = {abs(mean[i] - t[i]):.3g}, z*se = {z * se[i]:.3g} "
            f"(joint false-alarm <= {alpha:g})",
        )


def _normal_quantile(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


#: z_{0.8}: a statistical check's resolution is stated at 80% power
_Z_POWER = 0.8416212335729143
