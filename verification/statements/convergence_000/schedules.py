"""Seed 000 (Domke, Garrigos & Gower): the step-size rules and iterate averages the rate theorems prescribe, replayed
exactly against the printed formulas evaluated in 50-digit arithmetic (mpmath), through the implementation's
``step_sizes`` and ``average_weights``.

The rate statements (:mod:`.rates_strongly_convex`, :mod:`.rates_convex`) check the *optimizer* under the theorems'
schedules; these two check that the implementation *builds* those schedules as printed, on instances where an off-by-
one (t vs t + 1), a floor vs a ceiling, or a factor 2 shows: T from 1 to 400, the switching point of Thm 27 on both
sides of an integer L/mu, and theta weights over long horizons where a wrong exponent compounds.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
from hypothesis import strategies as st

from refvi.verification.statement import scalar, statement

DIGITS = 50


RTOL = 1e-13  # float64 evaluation of a closed form vs the 50-digit value: a few ulp, compounded over <= 400 powers


def _decay(t, mu, scale):
    return scale * mpmath.mpf(2 * t + 1) / (mu * mpmath.mpf(t + 1) ** 2)


def printed_steps(rule, T, *, gamma=None, M=None, mu=None, a=None, L=None, A=None) -> np.ndarray:
    """The rules as printed (Thm 6 Eq. 11, Thm 7, Thm 9 Eq. 13, Thm 10 Eq. 14, Thm 27, Cor 30), 50 digits."""
    with mpmath.workdps(DIGITS):
        mu_: Any
        a_: Any
        L_: Any  # mpmath numbers (mpmath has no type stubs), None where the rule does not use them
        mu_, a_, L_ = (None if x is None else mpmath.mpf(x) for x in (mu, a, L))
        if rule == "constant":
            out = [mpmath.mpf(gamma)] * T
        elif rule == "1/(M sqrt T)":
            out = [1 / (mpmath.mpf(M) * mpmath.sqrt(T))] * T
        elif rule == "1/sqrt T":
            out = [1 / mpmath.sqrt(T)] * T
        elif rule in ("thm6", "thm9"):
            scale = 1 if rule == "thm6" else 2
            out = [min(mu_ / (2 * a_), _decay(t, mu_, scale)) for t in range(T)]
        elif rule in ("thm27", "thm6-switch", "thm9-switch"):
            # Thm 27 itself, or with the proofs' mappings: Thm 6 (L = a/mu), Thm 9 (L = a/mu and mu/2 for mu)
            if rule != "thm27":
                L_ = a_ / mu_
                mu_ = mu_ / 2 if rule == "thm9-switch" else mu_
            t_star = 4 * int(mpmath.floor(L_ / mu_))
            out = [1 / (2 * L_) if t < t_star else _decay(t, mu_, 1) for t in range(T)]
        elif rule == "A log T / T":
            out = [mpmath.mpf(A) * mpmath.log(T) / T] * T
        else:
            raise ValueError(rule)
        return np.array([scalar(x) for x in out])


def printed_weights(kind, T, a=None, gamma=None, fraction=None) -> np.ndarray:
    """Thm 7: theta^{t+1} on w^t, t = 1..T, theta = 1/(1 + 2 a gamma^2); Thm 10: theta^{t+1} on w^t, t = 0..T-1,
    theta = 1/(1 + a gamma^2); "last", "uniform" (over w^1..w^T) and "tail" (uniform over the last
    k = max(1, ceil(fraction T)) iterates, fraction T within 1e-9 of an integer counting as that integer); normalised,
    50 digits."""
    with mpmath.workdps(DIGITS):
        w = [mpmath.mpf(0)] * (T + 1)
        if kind == "last":
            w[T] = mpmath.mpf(1)
        elif kind == "tail":
            x = mpmath.mpf(fraction) * T  # the float's exact value times T
            r = mpmath.nint(x)
            k = max(1, int(r) if abs(x - r) <= mpmath.mpf("1e-9") * max(1, x) else int(mpmath.ceil(x)))
            w[T - k + 1 :] = [mpmath.mpf(1)] * k
        elif kind == "uniform":
            w[1:] = [mpmath.mpf(1)] * T
        else:
            th = 1 / (1 + (2 if kind == "theta7" else 1) * mpmath.mpf(a) * mpmath.mpf(gamma) ** 2)
            ts = range(1, T + 1) if kind == "theta7" else range(0, T)
            for t in ts:
                w[t] = th ** (t + 1)
        total = mpmath.fsum(w)
        return np.array([scalar(x / total) for x in w])


_RULES = st.sampled_from(
    ("constant", "1/(M sqrt T)", "1/sqrt T", "thm6", "thm9", "thm27", "thm6-switch", "thm9-switch", "A log T / T")
)


_STEPS = st.fixed_dictionaries(
    {
        "rule": _RULES,
        "T": st.integers(1, 400),
        "mu": st.floats(0.05, 5.0),
        "ratio": st.floats(1.0, 40.0),
        "gamma": st.floats(1e-4, 1.0),
        "M": st.floats(0.1, 20.0),
        "A_mult": st.floats(1.0, 5.0),
    }
)


def _step_args(inst):
    mu, r = inst["mu"], inst["ratio"]
    if inst["rule"].endswith("-switch") and abs(r - round(r)) < 1e-6:
        # t* = 4 floor(a/mu^2) with a = r mu^2 rounded: at an integer r the floor depends on the rounding of a, not
        # on the rule (the integer boundary itself is probed by Thm 27's fixed instances, where L/mu is exact)
        r += 1e-3
    args = {
        "constant": {"gamma": inst["gamma"]},
        "1/(M sqrt T)": {"M": inst["M"]},
        "1/sqrt T": {},
        "thm6": {"mu": mu, "a": r * mu * mu},
        "thm9": {"mu": mu, "a": r * mu * mu},
        "thm27": {"mu": mu, "L": r * mu},
        "thm6-switch": {"mu": mu, "a": r * mu * mu},
        "thm9-switch": {"mu": mu, "a": r * mu * mu},
        "A log T / T": {"A": inst["A_mult"] / mu},
    }[inst["rule"]]
    return inst["rule"], max(inst["T"], 2 if inst["rule"] == "A log T / T" else 1), args


# switching points on both sides of an integer L/mu (t* = 4 floor(L/mu): 8 for L/mu = 2.999..., 12 for 3), the
# minimum of Thm 6 / Thm 9 changing branch inside the horizon, and every other rule once (Hypothesis need not draw it)
_FIXED_STEPS = [
    {"rule": "thm27", "T": 20, "mu": 1.0, "ratio": 3.0 - 1e-9, "gamma": 0.1, "M": 1.0, "A_mult": 1.0},
    {"rule": "thm27", "T": 20, "mu": 1.0, "ratio": 3.0, "gamma": 0.1, "M": 1.0, "A_mult": 1.0},
    {"rule": "thm6", "T": 60, "mu": 0.5, "ratio": 8.0, "gamma": 0.1, "M": 1.0, "A_mult": 1.0},
    {"rule": "thm9", "T": 60, "mu": 0.5, "ratio": 8.0, "gamma": 0.1, "M": 1.0, "A_mult": 1.0},
    {"rule": "thm6-switch", "T": 40, "mu": 1.0, "ratio": 3.25, "gamma": 0.1, "M": 1.0, "A_mult": 1.0},
    {"rule": "thm9-switch", "T": 40, "mu": 1.0, "ratio": 3.25, "gamma": 0.1, "M": 1.0, "A_mult": 1.0},
    {"rule": "1/(M sqrt T)", "T": 7, "mu": 1.0, "ratio": 1.0, "gamma": 0.1, "M": 3.0, "A_mult": 1.0},
    {"rule": "A log T / T", "T": 2, "mu": 0.3, "ratio": 1.0, "gamma": 0.1, "M": 1.0, "A_mult": 2.0},
    {"rule": "1/sqrt T", "T": 9, "mu": 1.0, "ratio": 1.0, "gamma": 0.1, "M": 1.0, "A_mult": 1.0},
    {"rule": "constant", "T": 3, "mu": 1.0, "ratio": 1.0, "gamma": 0.37, "M": 1.0, "A_mult": 1.0},
]


@statement("000.claim-step-rules")
def step_rules(ctx):
    def check(inst):
        rule, T, args = _step_args(inst)
        got = np.asarray(ctx.impl.step_sizes(rule, T, **args), dtype=np.float64)
        ctx.close(got, printed_steps(rule, T, **args), rtol=RTOL, label=f"{rule}, T = {T}: gamma_0..gamma_(T-1)")

    ctx.forall(_STEPS, check, fixed=_FIXED_STEPS, max_examples=max(60, ctx.profile.max_examples))


_AVERAGES = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(("last", "uniform", "tail", "theta7", "theta10")),
        "T": st.integers(1, 300),
        "a": st.floats(0.5, 200.0),
        "gamma": st.floats(1e-3, 0.5),
        "fraction": st.floats(0.01, 1.0),
    }
)


def _avg(kind, T, a=1.0, gamma=0.1, fraction=0.5):
    return {"kind": kind, "T": T, "a": a, "gamma": gamma, "fraction": fraction}


# T = 1 for every kind; theta weights over 50 steps; the tail where f T is an integer that floats round up
# (0.07 * 100 = 7.000000000000001, 0.28 * 25: 7 iterates, not 8) or whose float f exceeds k/T (0.2 * 5: 1 iterate, not
# 2), a half-integer (0.5 * 7: 4 iterates), all (f = 1), one iterate, and f T = 3000.0000001 (within 1e-9 relative of
# 3000, not within 1e-9 absolute: the tolerance is relative)
_FIXED_AVERAGES = [
    _avg("theta7", 1, 2.0, 0.3),
    _avg("theta10", 1, 2.0, 0.3),
    _avg("theta7", 50, 1.0, 0.05),
    _avg("theta10", 50, 1.0, 0.05),
    _avg("uniform", 3),
    _avg("tail", 100, fraction=0.07),
    _avg("tail", 25, fraction=0.28),
    _avg("tail", 5, fraction=0.2),
    _avg("tail", 7),
    _avg("tail", 4, fraction=1.0),
    _avg("tail", 3, fraction=0.01),
    _avg("tail", 1),
    _avg("tail", 10_000, fraction=0.3 + 1e-11),
]


@statement("000.claim-theta-averages")
def theta_averages(ctx):
    def check(inst):
        kind, T, a, g, f = inst["kind"], inst["T"], inst["a"], inst["gamma"], inst["fraction"]
        extra = {"tail_fraction": f} if kind == "tail" and f != 0.5 else {}  # 1/2: the documented default
        got = np.asarray(ctx.impl.average_weights(kind, T, a=a, gamma=g, **extra), dtype=np.float64)
        what = f"tail fraction {f!r}" if kind == "tail" else f"theta from a = {a:.4g}, gamma = {g:.4g}"
        ctx.close(
            got,
            printed_weights(kind, T, a, g, f),
            rtol=RTOL,
            atol=1e-300,
            label=f"{kind}, T = {T}, {what}: weights over w^0..w^T",
        )
        ctx.close(scalar(np.sum(got)), 1.0, rtol=1e-13, label="weights sum to 1")

    ctx.forall(_AVERAGES, check, fixed=_FIXED_AVERAGES, max_examples=max(40, ctx.profile.max_examples))
    ctx.true(math.isfinite(RTOL), label="tolerance stated")
