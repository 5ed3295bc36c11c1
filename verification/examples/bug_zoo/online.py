"""Planted bugs in the seed 003 (online VI) sub-adapter of the example implementation."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from refvi.verification.examples.bug_zoo import corrupts, mutant


def _hyper_override(method, change):
    def make(orig, owner):
        def run(m, X, y, loss="hinge", **hyper):
            return orig(m, X, y, loss, **(change(dict(hyper)) if m == method else hyper))

        return run

    return make


mutant("online-sva-eta-s", "003", "online.run", "SVA steps with eta s instead of eta s^2")(
    _hyper_override("sva", lambda h: {**h, "eta": h["eta"] / h.get("s", 1.0)})
)
mutant("online-ngvi-printed-beta", "003", "online.run", "online NGVI with beta = alpha (eq. 15 as printed, E003-1)")(
    _hyper_override(
        "ngvi",
        lambda h: (
            {**{k: v for k, v in h.items() if k != "alpha"}, "beta": min(h["alpha"], 1.0)}
            if "alpha" in h
            else {**h, "beta": h["beta"] * 0.9}
        ),
    )
)
mutant("online-oga-unprojected", "003", "online.run", "OGA ignores its box (no projection)")(
    _hyper_override("oga", lambda h: {**h, "mbox": np.inf})
)
mutant("online-ogael-lazy-is-greedy", "003", "online.run", "OGA-EL 'lazy' runs the greedy projection")(
    _hyper_override("ogael", lambda h: {**h, "projection": "greedy"})
)
mutant("online-svb-schedule-index", "003", "online.run", "SVB's convex schedule K/sqrt(t+1) instead of K/sqrt(t)")(
    _hyper_override(
        "svb",
        lambda h: (
            {**h, "K": h["K"] * np.sqrt(0.5)}
            if h.get("schedule", "convex") == "convex" and "K" in h
            else {**h, "D": h["D"] * np.sqrt(0.5)}
            if "D" in h
            else h
        ),
    )
)


mutant(
    "online-svb-strong-half-step",
    "003",
    "online.run",
    "SVB's strongly convex schedule a = 1/(H t), the textbook OGD step, instead of 2/(H t)",
)(_hyper_override("svb", lambda h: {**h, "H_sc": 2.0 * h["H_sc"]} if h.get("schedule") == "strong" else h))
mutant(
    "online-svb-D-L-no-sqrt2", "003", "online.run", "SVB given Thm 3's D and L takes K = D / L (the sqrt 2 dropped)"
)(
    _hyper_override(
        "svb",
        lambda h: {**{k: v for k, v in h.items() if k not in ("D", "L")}, "K": h["D"] / h["L"]} if "D" in h else h,
    )
)


@mutant("online-record-after-update", "003", "online.run", "row t of M holds the state after round t, not before")
def _(orig, owner):
    def run(method, X, y, loss="hinge", **hyper):
        r = orig(method, X, y, loss, **hyper)
        M = np.vstack([r.M[1:], r.M[-1:]])
        S = None if r.S is None else np.vstack([r.S[1:], r.S[-1:]])
        return SimpleNamespace(losses=r.losses, M=M, S=S, m=r.m, sigma=r.sigma)

    return run


@corrupts("online-hinge-gs-no-sigma", "003", "online.expected_loss", "hinge d/dsigma drops the sigma factor")
def _(out, loss, sigma, **_):
    if loss != "hinge":
        return out
    v, gm, gs = out
    s = np.asarray(sigma)
    return v, gm, np.where(s > 0, np.asarray(gs) / np.where(s > 0, s, 1.0), gs)


@corrupts(
    "online-absolute-gs-half",
    "003",
    "online.expected_loss",
    "absolute loss d/dsigma_j = sigma_j x_j^2 phi(r/b) / b (the factor 2 of 2 b phi(r/b) dropped)",
)
def _(out, loss, **_):
    return (out[0], out[1], 0.5 * np.asarray(out[2])) if loss == "absolute" else out


@corrupts(
    "online-squared-value-no-variance",
    "003",
    "online.expected_loss",
    "squared loss bar L = (y - m^T x)^2, the variance term ||sigma x||^2 dropped",
)
def _(out, loss, X, sigma, **_):
    if loss != "squared":
        return out
    return np.asarray(out[0]) - np.sum((np.asarray(X) * np.asarray(sigma)) ** 2, axis=1), out[1], out[2]


@mutant(
    "online-expected-loss-full-Cx",
    "003",
    "online.expected_loss_full",
    "the full-covariance expected loss reduces to the ridge scale ||C x|| instead of ||C^T x||",
)
def _(orig, owner):
    def expected_loss_full(loss, x, y, m, C):
        return orig(loss, x, y, m, np.asarray(C, dtype=float).T)  # ||C^T x|| of C^T = ||C x||

    return expected_loss_full


@mutant("online-kl-printed-quadratic", "003", "online.kl_gaussian", "Gaussian KL with Sbar for Sbar^-1 (E003-3)")
def _(orig, owner):
    def kl_gaussian(m, C, mbar, Cbar):
        Sb = Cbar @ Cbar.T
        r = np.asarray(m, float) - mbar
        return orig(m, C, mbar, Cbar) - 0.5 * r @ np.linalg.solve(Sb, r) + 0.5 * r @ Sb @ r

    return kl_gaussian


@mutant("online-ewa-prior-ignored", "003", "online.ewa_1d", "EWA ignores the prior (uniform always)")
def _(orig, owner):
    def ewa_1d(loss, data, eta, lo, hi, log_prior=None, n_nodes=2000, breaks=()):
        return orig(loss, data, eta, lo, hi, None, n_nodes, breaks)

    return ewa_1d


@mutant(
    "online-kl-prior-log-s", "003", "online.kl_prior", "KL to the prior with log(s/sigma) instead of log(s^2/sigma^2)"
)
def _(orig, owner):
    def kl_prior(m, sigma, s):
        return orig(m, sigma, s) - 0.25 * float(np.sum(np.log(s**2 / np.asarray(sigma, float) ** 2)))

    return kl_prior


@corrupts(
    "online-ewa-mix-loss-unnormalized",
    "003",
    "online.ewa_1d",
    "the mix loss -(1/eta) log E exp(-eta l) taken against the unnormalized weights (log N_t dropped)",
)
def _(out, eta, **_):
    import dataclasses

    ln = np.asarray(out.log_norm, dtype=float)
    return dataclasses.replace(out, mix_loss=np.asarray(out.mix_loss, dtype=float) - ln[:-1] / eta)


@mutant("online-ewa2d-prior-ignored", "003", "online.ewa_2d", "2-D EWA ignores the prior (uniform always)")
def _(orig, owner):
    def ewa_2d(loss, data, eta, lo, hi, log_prior=None, n_nodes=64):
        return orig(loss, data, eta, lo, hi, None, n_nodes)

    return ewa_2d


@mutant("online-ewa2d-coarse-grid", "003", "online.ewa_2d", "2-D EWA on a 6-point-per-axis grid whatever is asked")
def _(orig, owner):
    def ewa_2d(loss, data, eta, lo, hi, log_prior=None, n_nodes=64):
        return orig(loss, data, eta, lo, hi, log_prior, 6)

    return ewa_2d


@mutant(
    "online-adversary-other-learner",
    "003",
    "online.run_adversarial",
    "the adaptive adversary answers a learner with a 10% larger step, not the one that is run",
)
def _(orig, owner):
    def run_adversarial(method, X, loss="hinge", **hyper):
        h = dict(hyper)
        for k in ("eta", "K", "D"):  # (SVB's K = D sqrt(2) / L when given D and L)
            if h.get(k) is not None:
                h[k] = 1.1 * h[k]
        return orig(method, X, loss, **h)

    return run_adversarial


def _with_scales(run, Cs):
    return SimpleNamespace(losses=run.losses, M=run.M, Cs=Cs, m=run.m, C=Cs[-1])


@corrupts(
    "online-full-offdiag-dropped",
    "003",
    "online.run_full",
    "full-covariance SVA keeps only the diagonal of C (the mean-field update in disguise)",
)
def _(out, **_):
    return _with_scales(out, np.asarray(out.Cs) * np.eye(np.asarray(out.Cs).shape[-1]))


@corrupts(
    "online-full-diag-root-eta",
    "003",
    "online.run_full",
    "full-covariance SVA's diagonal root with eta s G instead of eta s G / 2 (a 2x in the shrinkage)",
)
def _(out, eta, s, **_):
    Cs = np.array(out.Cs, dtype=float)
    for t in range(1, Cs.shape[0]):
        c = np.diag(Cs[t])
        g = (s * s / c - c) / (eta * s * s)  # the gradient sum G_ii the root came from
        np.fill_diagonal(Cs[t], s * (np.sqrt(1 + (eta * s * g) ** 2) - eta * s * g))
    return _with_scales(out, Cs)


@mutant(
    "online-nn-svb-step-constant",
    "003",
    "online.run_nn",
    "ReLU-network SVB with its step constant K scaled by 1/sqrt(2)",
)
def _(orig, owner):
    def run_nn(method, X, y, h, U, **hyper):
        if method == "svb":
            hyper = {**hyper, "K": hyper.get("K", 1.0) * np.sqrt(0.5)}
        return orig(method, X, y, h, U, **hyper)

    return run_nn


@mutant("online-nn-sigma-unboxed", "003", "online.run_nn", "ReLU-network learners never clip sigma to its box")
def _(orig, owner):
    def run_nn(method, X, y, h, U, **hyper):
        return orig(method, X, y, h, U, **{**hyper, "sbox": np.inf})

    return run_nn


@mutant(
    "online-nn-predict-no-output-bias",
    "003",
    "online.nn_predict",
    "the ReLU network's prediction drops its output bias c",
)
def _(orig, owner):
    return lambda theta, X, h: np.asarray(orig(theta, X, h)) - np.asarray(theta)[-1]


@mutant(
    "online-ngvi-prior-scale-inverted",
    "003",
    "online.run",
    "online NGVI pulls toward the prior with precision s^2 instead of 1/s^2",
)
def _(orig, owner):
    def run(method, X, y=None, loss="hinge", **hyper):
        if method == "ngvi" and "s" in hyper:
            hyper = {**hyper, "s": 1.0 / hyper["s"]}
        return orig(method, X, y, loss, **hyper)

    return run


@mutant(
    "online-svb-loss-after-update",
    "003",
    "online.run",
    "SVB reports the hinge loss of round t at the updated mean m_(t+1), not at the m_t it predicted with (an "
    "under-reported loss: the update has already moved towards the label)",
)
def _(orig, owner):
    def run(method, X, y, loss="hinge", **hyper):
        r = orig(method, X, y, loss, **hyper)
        if method != "svb" or loss != "hinge":
            return r
        M, X_ = np.asarray(r.M, dtype=float), np.asarray(X, dtype=float)
        losses = np.maximum(0.0, 1.0 - np.asarray(y, dtype=float) * np.einsum("td,td->t", M[1:], X_))
        return (
            SimpleNamespace(**{**vars(r), "losses": losses})
            if hasattr(r, "__dict__")
            else SimpleNamespace(losses=losses, M=r.M, S=r.S, m=r.m, sigma=r.sigma)
        )

    return run


@mutant(
    "online-full-second-round-newton-root",
    "003",
    "online.run_full",
    "full-covariance SVA (d >= 2; d = 1 delegates to the mean-field closed form) solves the diagonal root "
    "c^2 + g c - s^2 = 0 of C_2 by one Newton step warm-started at C_1 instead of exactly (an iterative root "
    "stopped early); the running sums, and every other iterate, stay right",
)
def _(orig, owner):
    import math

    from refvi.verification.examples.numpy_online import _expected

    def run_full(X, y, loss="hinge", *, eta, s=1.0):
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        T, d = X.shape
        m, C = np.zeros(d), s * np.eye(d)
        Gm, GC = np.zeros(d), np.zeros((d, d))
        M, Cs, losses = [m.copy()], [C.copy()], []
        low = np.tril(np.ones((d, d)), -1).astype(bool)
        for t in range(T):
            x = X[t]
            losses.append(float(_expected(loss, x, y[t], m, np.zeros(d), 1.0)[0]))
            v = C.T @ x
            b = math.sqrt(v @ v)
            _, ga, gb = _expected(loss, np.array([1.0]), y[t], np.array([m @ x]), np.array([b]), 1.0)
            g_t = np.tril(np.outer(x, v)) * (gb[0] / b if b > 0 else 0.0)
            Gm += ga[0] * x
            GC += g_t
            m = -eta * s * s * Gm
            C = np.where(low, -eta * s * s * GC, 0.0)
            g = eta * s * s * np.diag(GC)
            c_prev = np.diag(Cs[-1])
            np.fill_diagonal(
                C,
                c_prev - (c_prev**2 + g * c_prev - s * s) / (2 * c_prev + g)
                if t == 1 and d >= 2
                else (-g + np.sqrt(g * g + 4 * s * s)) / 2,
            )
            M.append(m.copy())
            Cs.append(C.copy())
        return SimpleNamespace(losses=np.array(losses), M=np.array(M), Cs=np.array(Cs), m=m, C=C)

    return run_full


@mutant(
    "online-svb-convex-m-step-next-index",
    "003",
    "online.run",
    "SVB's convex schedule moves m with K / sqrt(t + 1) (the next round's step) while sigma keeps K / sqrt(t)",
)
def _(orig, owner):
    from refvi.verification.examples.numpy_online import _h, _Learner

    class _Late(_Learner):
        def update(self, x, y):
            if self.method != "svb" or self.schedule != "convex":
                return super().update(x, y)
            lt = self.point_loss(x, y)
            self.t += 1
            gm, gs = self.expected_gradients(x, y)
            a = self.K / np.sqrt(self.t)
            self.m = np.clip(self.m - self.K / np.sqrt(self.t + 1) * gm, -self.mbox, self.mbox)
            self.sigma = np.clip(_h(self.sigma, 0.5 * a * gs), 0, self.sbox)
            return lt

    def run(method, X, y, loss="hinge", **hyper):
        if method != "svb":
            return orig(method, X, y, loss, **hyper)
        X = np.asarray(X, dtype=float)
        return _Late(method, X.shape[1], loss, **hyper).record(
            X, np.zeros(len(X)) if y is None else np.asarray(y, dtype=float)
        )

    def run_adversarial(method, X, loss="hinge", **hyper):  # the same learner answers the adversary
        if method != "svb":
            return owner.run_adversarial(method, X, loss, **hyper)
        X = np.asarray(X, dtype=float)
        lr, y = _Late(method, X.shape[1], loss, **hyper), np.empty(len(X))
        for t in range(len(X)):
            y[t] = -1.0 if float(lr.m @ X[t]) > 0 else 1.0
            lr.update(X[t], y[t])
        return y

    return {"run": run, "run_adversarial": run_adversarial}


@mutant(
    "online-svb-ball-as-box",
    "003",
    "online.run",
    "SVB on Thm 3's balls projects each coordinate onto [-Mbar, Mbar] and [0, Sbar] (the box the ball sits in, the "
    "box code reused) instead of scaling (m, sigma) back onto the balls; the adversary's learner shares the bug",
)
def _(orig, owner):
    def as_box(hyper):
        if "mball" not in hyper:
            return hyper
        box = {k: v for k, v in hyper.items() if k not in ("mball", "sball")}
        return {**box, "mbox": hyper["mball"], "sbox": hyper["sball"]}

    def run(method, X, y, loss="hinge", **hyper):
        return orig(method, X, y, loss, **(as_box(hyper) if method == "svb" else hyper))

    def run_adversarial(method, X, loss="hinge", **hyper):
        return owner.run_adversarial(method, X, loss, **(as_box(hyper) if method == "svb" else hyper))

    return {"run": run, "run_adversarial": run_adversarial}


# ---- trust holes closed by issue #37: each passed the certificate before the statements checked the values ------


@corrupts(
    "online-ewa-lookahead-decision",
    "003",
    "online.ewa_1d",
    "EWA decides round t with the posterior that has already seen D_t (the mean of p_(t+1), a look-ahead), its "
    "reported losses consistent with those decisions: Thm 1 and (18) only get easier",
)
def _(out, loss, data, **_):
    import dataclasses

    means = np.asarray(out.means, dtype=float)
    final = float(np.exp(np.asarray(out.log_post, dtype=float)) @ np.asarray(out.nodes, dtype=float))
    ahead = np.append(means[1:], final)[: means.size]  # no data: no decisions
    losses = np.array([float(np.ravel(loss(np.array([m]), D))[0]) for m, D in zip(ahead, data, strict=True)])
    return (
        dataclasses.replace(out, means=ahead, losses=losses)
        if dataclasses.is_dataclass(out) and not isinstance(out, type)
        else SimpleNamespace(**{**vars(out), "means": ahead, "losses": losses})
    )


@mutant(
    "online-sva-window-40",
    "003",
    "online.run",
    "SVA keeps its gradient sums in a buffer of 40 rounds: the sums restart at rounds 41, 81, ... (streams of at "
    "most 40 rounds are right)",
)
def _(orig, owner):
    from refvi.verification.examples.numpy_online import _Learner

    class _Windowed(_Learner):
        def update(self, x, y):
            if self.method == "sva" and self.t > 0 and self.t % 40 == 0:
                self.Gm, self.Gs = np.zeros_like(self.Gm), np.zeros_like(self.Gs)
            return super().update(x, y)

    def run(method, X, y, loss="hinge", **hyper):
        if method != "sva":
            return orig(method, X, y, loss, **hyper)
        X = np.asarray(X, dtype=float)
        return _Windowed(method, X.shape[1], loss, **hyper).record(
            X, np.zeros(len(X)) if y is None else np.asarray(y, dtype=float)
        )

    return run


@mutant(
    "online-record-final-state-stale",
    "003",
    "online.run",
    "the SVB and NGVI run records return the final (m, sigma) copied before the last update (the state of round T, "
    "not T + 1); M and S are right",
)
def _(orig, owner):
    def run(method, X, y, loss="hinge", **hyper):
        r = orig(method, X, y, loss, **hyper)
        if method not in ("svb", "ngvi") or len(r.losses) == 0:
            return r
        return SimpleNamespace(losses=r.losses, M=r.M, S=r.S, m=np.array(r.M[-2]), sigma=np.array(r.S[-2]))

    return run
