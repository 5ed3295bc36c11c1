"""Shared helpers, instances and constants of the boosting statements.

Seed 001 (Locatello, Khanna, Ghosh, Ratsch, "Boosting Variational Inference: an Optimization Perspective").

Statements: the Bregman identity D(y, q) = KL(y||q) behind C_f, Lemma 1 (corrected), Eq. (5), Thm 2, Cor 3, Thm 4
(step condition explicit), Thm 5 (empirical), Thm 6, Cor 7 and Thm 8 (corrected), Thm 9 / Thm' 9 (the linear rates
(12) and (13) with the exact pyramidal width) and Eq. (14), Eq. (10) (score-function unbiasedness with the truncation
normalizer), the closed-form weights of the fixed step, the invariance of LMO / step / QP to additive constants in
log p, the FW-gap certificate, and exact recovery of a Gaussian-mixture target whose components are atoms
(f* = -log P(A)).

Errata: E001-1 (Lemma 1 constant, P1), E001-2 (Thm 4 step 2/(t+2) with delta < 1, P4), E001-3
(Cor 7 denominator, P5), E001-4 (Thm 8 algebra, P6), E001-5 (Thm 5 for the open-loop step, P7).

The implementation under test is reached through ``ctx.impl.boosting`` (protocol
:mod:`refvi.verification.protocol.boosting`): it receives plain instance records and returns plain run records;
every constant a bound needs (eps, M, the Gram matrix, C_f bounds, f*) comes from the oracles,
:mod:`refvi.verification.oracles.boosting` (numpy / scipy / mpmath / sympy), never from the implementation.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import boosting as ob
from refvi.verification.protocol.boosting import BoostingInstance, BoostingTarget

# ------------------------------------------------------------------------------------------------------------------
# the fixed instances as plain records
# ------------------------------------------------------------------------------------------------------------------

I1_TARGET = ((0.4, 0.6), (-0.5, 0.6), (0.5, 0.5))  # f* = -log P(A) = 0.2126087 on [-1, 1]


def log_prob_box_mog(weights, means, scales, lo, hi) -> float:
    """log P_{p_x}(A) of a Gaussian mixture by scipy.stats (oracle side)."""
    return math.log(sum(w * ob.box_probability(m, s, lo, hi) for w, m, s in zip(weights, means, scales, strict=True)))


def optimal_weights(inst) -> np.ndarray:
    """p_A = sum_j [w_j P_j(A) / P(A)] TN_j when every target component is an atom (Eq. 5): the weights on the atom
    set (oracle side, scipy.stats)."""
    p = inst.target.params
    a = np.zeros(inst.K)
    for w, m, s in zip(p["weights"], p["means"], p["scales"], strict=True):
        k = int(np.argmin(np.sum((inst.means - m) ** 2, axis=1) + (inst.scales - s) ** 2))
        a[k] += w * ob.box_probability(m, s, inst.lo, inst.hi)
    return a / a.sum()


@functools.cache
def i1(stride: float = 0.025):
    """I1: atoms TN(mu_k, 0.5^2; [-1, 1]) on the lattice of ``stride``, target 0.4 N(-0.5, 0.5^2) + 0.6 N(0.6, 0.5^2)
    (both components are atoms): (instance, its oracle, f* = -log P(A))."""
    inst = BoostingInstance.grid(-1.0, 1.0, stride, 0.5, BoostingTarget.mixture(*I1_TARGET))
    return inst, ob.QuadratureProblem(inst), -log_prob_box_mog(*I1_TARGET, -1.0, 1.0)


def check_run_records(ctx, oracle, res, label: str):
    """A run's records are what they claim: the final weights lie on the simplex, and the reported f(q^T) and FW
    gap are the oracle's f and gap of those weights (quadrature accuracy ~1e-12; atol 1e-10).  When the run kept its
    weights (``weights_history``), the whole traces are recomputed: f(q^t) and gap_t at every iterate t (the rate
    statements bound h_t = f(q^t) - f* at every t, so no entry of the trace is taken on trust)."""
    a = np.asarray(res.weights, dtype=float)
    ctx.true(bool(np.all(a >= 0) and abs(a.sum() - 1.0) < 1e-12), label=f"{label}: final weights on the simplex")
    ctx.close(res.f[-1], oracle.f(a), rtol=1e-10, atol=1e-10, label=f"{label}: reported f(q^T) = f(weights)")
    ctx.close(res.gap[-1], oracle.gap(a), rtol=1e-8, atol=1e-10, label=f"{label}: reported gap = FW gap(weights)")
    W = getattr(res, "weights_history", None)
    if W is None:
        return
    W = np.asarray(W, dtype=float)
    f, gap = np.asarray(res.f, dtype=float), np.asarray(res.gap, dtype=float)
    ctx.true(W.shape[0] == f.shape[0] == gap.shape[0], label=f"{label}: one weight vector per reported f and gap")
    ctx.true(
        bool(np.all(W >= -1e-15) and np.all(np.abs(W.sum(1) - 1.0) < 1e-12)),
        label=f"{label}: every iterate's weights on the simplex",
    )
    ctx.close(
        f,
        [oracle.f(w) for w in W],
        rtol=1e-10,
        atol=1e-10,
        label=f"{label}: the reported trace f(q^t) = f(weights^t), every t",
    )
    ctx.close(
        gap,
        [oracle.gap(w) for w in W],
        rtol=1e-8,
        atol=1e-10,
        label=f"{label}: the reported gap_t = FW gap(weights^t), every t",
    )


def mixtures(n_atoms: int, max_components: int = 3):
    """Hypothesis: (component indices, positive weights) of a random mixture over an atom set of size n_atoms."""
    comp = st.lists(st.integers(0, n_atoms - 1), min_size=1, max_size=max_components, unique=True)
    return comp.flatmap(
        lambda c: st.tuples(st.just(c), st.lists(st.floats(0.05, 1.0), min_size=len(c), max_size=len(c)))
    )


def n_examples(ctx, ci: int) -> int:
    """Hypothesis draws per forall: ``ci`` in the ci profile (quadrature oracles cost ~10 ms each), 8x in deep."""
    return min(ctx.profile.max_examples, ci if ctx.profile.name == "ci" else 8 * ci)


def dense(K, comp, wts):
    a = np.zeros(K)
    a[list(comp)] = np.asarray(wts) / np.sum(wts)
    return a
