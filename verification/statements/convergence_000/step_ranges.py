"""Domke, Garrigos & Gower (seed 000) and Domke (seed 002): the step-size hypotheses of the rate theorems, as the
implementation checks them before a run (``step_range_ok``, refvi's ``schedules.check_theorem`` behind ``fit``).

Statement: 000.claim-step-ranges.  The oracle is each theorem's hypothesis written out from the paper: Thm 6
constant gamma <= min(mu/(2a), 1/mu); Thm 7 constant gamma <= 1/M; Thm 9 constant gamma <= min(mu/(2a), 2/mu);
Thm 10 any constant gamma > 0; Cor 30 gamma = A log T / T with A >= 1/mu and T / log T >= 2aA/mu; seed 002 Thm 6
every step <= 1/M.  Each is probed just inside its boundary (relative 1e-9), just outside (1e-6), well inside, and
with a varying schedule where the theorem needs a constant step, so a bound off by any factor, a swapped constant or
a missing condition flips a verdict.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.statement import scalar, statement
from refvi.verification.strategies import RNG, rng_of

CONSTANT_STEP = ("000.thm6", "000.thm7", "000.thm9", "000.thm10")


def _constants(rng):
    """(M, mu, a): M in [0.5, 5], condition M/mu in [1, 5]; a = 2(d + 3) M^2 (Thm 26, energy, d = 1..3) or a small
    noise constant a in mu^2 [0.05, 2] (the theorems take any a of a quadratic bound), where the 1/mu and 2/mu caps
    of Thms 6 and 9 bind instead of mu/(2a)."""
    M = scalar(rng.uniform(0.5, 5.0))
    mu = M / scalar(rng.uniform(1.0, 5.0))
    d = int(rng.integers(1, 4))
    a = 2.0 * (d + 3) * M * M if rng.random() < 0.5 else mu * mu * scalar(rng.uniform(0.05, 2.0))
    return M, mu, a


def _bound(theorem, M, mu, a):
    """The largest constant step the theorem allows (inf: any)."""
    return {
        "000.thm6": min(mu / (2 * a), 1 / mu),
        "000.thm7": 1 / M,
        "000.thm9": min(mu / (2 * a), 2 / mu),
        "000.thm10": math.inf,
        "002.thm6": 1 / M,
    }[theorem]


def _cor30_horizon(a, A, mu):
    """The smallest T >= 3 with T / log T >= 2aA/mu (T / log T increases for T >= 3)."""
    need, T = 2 * a * A / mu, 3
    while T / math.log(T) < need:
        T *= 2
    lo, hi = T // 2, T
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if mid / math.log(mid) < need else (lo, mid)
    return max(hi, 3)


@statement("000.claim-step-ranges")
def claim_step_ranges(ctx):
    def check(source):
        rng = rng_of(source)
        M, mu, a = _constants(rng)
        T = int(rng.integers(2, 40))
        for theorem in ("000.thm6", "000.thm7", "000.thm9", "000.thm10", "002.thm6"):
            hi = _bound(theorem, M, mu, a)
            ref = hi if math.isfinite(hi) else 1e3
            cases = [(ref * (1 - 1e-9), True, "just inside"), (0.5 * ref, True, "well inside")]
            if math.isfinite(hi):
                cases.append((ref * (1 + 1e-6), False, "just outside"))
            for gam, ok, where in cases:
                got = ctx.impl.step_range_ok(theorem, np.full(T, gam), M=M, mu=mu, a=a)
                ctx.equal(got, ok, label=f"{theorem}: constant gamma {where} the range -> {ok}")
            varying = ref * np.linspace(0.5, 1 - 1e-9, T)
            want = theorem not in CONSTANT_STEP
            for order, steps in (("increasing", varying), ("decreasing", varying[::-1])):
                got = ctx.impl.step_range_ok(theorem, steps, M=M, mu=mu, a=a)
                ctx.equal(got, want, label=f"{theorem}: a schedule {order} inside the range -> {want}")
        # Cor 30: the two conditions on A and T, each probed at its boundary
        for A, ok in ((1 / mu * (1 + 1e-6), True), (1 / mu * (1 - 1e-6), False), (2 / mu, True)):
            Tn = _cor30_horizon(a, max(A, 1 / mu), mu)
            for Tk, ok_T in ((Tn, True), (Tn - 1, False)):
                if Tk < 3:
                    continue
                gam = np.full(Tk, A * math.log(Tk) / Tk)
                got = ctx.impl.step_range_ok("000.cor30", gam, M=M, mu=mu, a=a, A=A)
                want = ok and (ok_T or Tk / math.log(Tk) >= 2 * a * A / mu)
                ctx.equal(
                    got,
                    want,
                    label=f"000.cor30: A {'>=' if ok else '<'} 1/mu, T {'at' if ok_T else 'below'} "
                    f"the horizon 2aA/mu <= T/log T -> {want}",
                )

    ctx.forall(RNG, check, fixed=list(range(4)), max_examples=max(8, ctx.profile.max_examples // 4))
    # the boundary itself belongs to every range: dyadic constants make each bound exact in any order of operations
    M, mu = 2.0, 0.5
    for a, theorem, gam in (
        (4.0, "000.thm6", 1.0 / 16),
        (0.0625, "000.thm6", 2.0),
        (4.0, "000.thm9", 1.0 / 16),
        (0.0625, "000.thm9", 4.0),
        (4.0, "000.thm7", 0.5),
        (4.0, "002.thm6", 0.5),
    ):
        ctx.equal(
            ctx.impl.step_range_ok(theorem, np.full(8, gam), M=M, mu=mu, a=a),
            True,
            label=f"{theorem}: gamma exactly at the bound ({gam:g}; M = 2, mu = 1/2, a = {a:g}) is allowed",
        )
