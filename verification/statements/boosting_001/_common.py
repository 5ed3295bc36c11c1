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
from refvi.verification.statement import derived, hint, scalar

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
    """A run's final records are what they claim: the final weights lie on the simplex, and the reported f(q^T) and
    FW gap are the oracle's f and gap of those weights (quadrature accuracy ~1e-12; atol 1e-10).  A run that kept its
    weights is replayed instead (:func:`replay_fw`, :func:`replay_corrective`), which checks every record."""
    a = np.asarray(res.weights, dtype=float)
    ctx.true(bool(np.all(a >= 0) and abs(a.sum() - 1.0) < 1e-12), label=f"{label}: final weights on the simplex")
    ctx.close(res.f[-1], oracle.f(a), rtol=1e-10, atol=1e-10, label=f"{label}: reported f(q^T) = f(weights)")
    ctx.close(res.gap[-1], oracle.gap(a), rtol=1e-8, atol=1e-10, label=f"{label}: reported gap = FW gap(weights)")


#: two LMO scores closer than this (relative to the largest) are a tie: either atom is a right answer
TIE = 1e-9


def default_start(oracle) -> int:
    """The protocol's default start: the atom with the smallest f(s_k) (oracle)."""
    return int(np.argmin([oracle.f(np.eye(oracle.K)[k]) for k in range(oracle.K)]))


@derived
def lmo_answers(oracle, alpha, lmo: str = "exact", delta: float = 1.0):
    """The atoms the LMO may answer at the weights ``alpha`` (an array of indices, marked by ``alpha``): ``"exact"``
    the argmin of the oracle's scores (ties within :data:`TIE`); ``"adversarial"`` with ``delta`` the protocol's worst
    delta-admissible atom, <grad, s - q> <= delta min <grad, s - q> (Eq. 9) with the largest <grad, s - q>, every atom
    within :data:`TIE` of that boundary admitted (the exact argmin when the gap is 0)."""
    sc = oracle.scores(alpha)
    lin = sc - alpha @ sc
    best = lin.min()
    tol = TIE * max(1.0, scalar(np.max(np.abs(sc))))
    if lmo == "exact" or delta == 1.0 or best >= -tol:
        return np.flatnonzero(lin <= best + tol)
    clear = lin <= delta * best - tol
    worst_ok = np.max(lin[clear]) if np.any(clear) else best
    return np.flatnonzero((lin <= delta * best + tol) & (lin >= worst_ok - tol))


@derived
def line_search(oracle, alpha, k):
    """argmin over gamma in [0, 1] of f((1 - gamma) q + gamma s_k) by the root of the derivative
    <grad f(q_gamma), s_k - q> (the oracle's scores; f is convex along the segment), Brent to 1e-14."""
    from scipy.optimize import brentq

    a = np.asarray(alpha, dtype=float).view(np.ndarray)
    e = np.zeros_like(a)
    e[int(k)] = 1.0

    def slope(g):
        q = (1 - g) * a + g * e
        sc = np.asarray(oracle.scores(q)).view(np.ndarray)
        return scalar(sc[int(k)] - a @ sc)

    lo, hi = slope(0.0), slope(1.0)
    if lo >= 0:
        return 0.0
    if hi <= 0:
        return 1.0
    return brentq(slope, 0.0, 1.0, xtol=1e-14, rtol=1e-14)


@derived
def step_rule(oracle, alpha, k, t: int, step: str, delta: float | None, curvature: float | None, L: float | None):
    """gamma_t of the protocol's step rule at (weights alpha, atom k, step t)."""
    if step == "fixed":
        return 2.0 / (t + 2.0)
    if step == "fixed_delta":
        return 2.0 / ((1.0 if delta is None else delta) * t + 2.0)
    sc = oracle.scores(alpha)
    descent = -(sc[k] - alpha @ sc)  # <-grad f(q), s_k - q>
    if step == "curvature":
        return np.minimum(1.0, np.maximum(0.0, descent) / curvature)
    if step == "local":
        L = 1.0 / oracle.eps if L is None else L
        return np.minimum(1.0, np.maximum(0.0, descent) / (L * oracle.sq_dist(alpha, k)))
    if step == "line_search":
        return line_search(oracle, alpha, k)
    raise ValueError(f"unknown step rule {step!r}")


def replay_fw(
    ctx,
    oracle,
    res,
    label: str,
    *,
    step: str,
    lmo: str = "exact",
    delta: float | None = None,
    curvature: float | None = None,
    L: float | None = None,
    init: int | None = None,
):
    """Replay a Frank-Wolfe run (Algorithm 1) from its records, by induction on t, with the oracle: nothing it reports
    is taken on trust.  weights^0 is the start atom; at step t the atom is an answer of the LMO at weights^t
    (:func:`lmo_answers`), gamma_t is the step rule's at (weights^t, atom t) (:func:`step_rule`), and weights^{t+1} =
    (1 - gamma_t) weights^t + gamma_t e_(atom t); f(q^t) and the FW gap are the oracle's at every weights^t (the rate
    statements bound h_t = f(q^t) - f*).  Tolerances: quadrature ~1e-12, a line search's root to ~1e-10."""
    W = np.asarray(res.weights_history, dtype=float)
    atoms = np.asarray(res.atom)
    gamma = np.asarray(res.gamma, dtype=float)
    T = atoms.shape[0]
    ctx.equal(W.shape, (T + 1, oracle.K), label=f"{label}: one weight vector per step and one to start")
    start = default_start(oracle) if init is None else int(init)
    ctx.close(W[0], np.eye(oracle.K)[start], label=f"{label}: weights^0 = the start atom {start}")
    ctx.member(atoms, [lmo_answers(oracle, W[t], lmo, delta or 1.0) for t in range(T)], label=f"{label}: LMO atoms")
    tol = 1e-9 if step == "line_search" else 1e-12
    ctx.close(
        gamma,
        [step_rule(oracle, W[t], atoms[t], t, step, delta, curvature, L) for t in range(T)],
        rtol=tol,
        atol=tol,
        label=f"{label}: gamma_t is the step rule {step}",
    )
    if T:
        steps = [fw_step(W[t], gamma[t], atoms[t]) for t in range(T)]
        label_w = f"{label}: weights^(t+1) = (1 - gamma_t) weights^t + gamma_t e_(atom t)"
        ctx.close(W[1:], steps, rtol=1e-12, atol=1e-15, label=label_w)
    _check_traces(ctx, oracle, res, W, label)


@derived
def fw_step(alpha, gamma, k):
    """(1 - gamma) alpha + gamma e_k."""
    out = (1.0 - gamma) * np.asarray(alpha, dtype=float)
    out[int(k)] += gamma
    return out


def replay_corrective(
    ctx,
    oracle,
    res,
    label: str,
    *,
    variant: str,
    lmo: str = "exact",
    delta: float | None = None,
    L: float | None = None,
    init: int | None = None,
):
    """Replay a corrective run (Algorithm 3) by induction on t with the oracle: the atom is an LMO answer at
    weights^t, and weights^(t+1), supported on S = supp(weights^t) + {atom}, is the corrective step's minimiser on S:
    ``"norm"`` the quadratic model's (the oracle's exact simplex QP, :func:`ob.simplex_qp_enumerate`), ``"full"``
    f's (its value within 1e-9 of the oracle's minimum of f over the simplex on S: f is strictly convex there, so
    the value pins the weights); f and gap as in :func:`replay_fw`."""
    W = np.asarray(res.weights_history, dtype=float)
    atoms = np.asarray(res.atom)
    T = atoms.shape[0]
    ctx.equal(W.shape, (T + 1, oracle.K), label=f"{label}: one weight vector per step and one to start")
    start = default_start(oracle) if init is None else int(init)
    ctx.close(W[0], np.eye(oracle.K)[start], label=f"{label}: weights^0 = the start atom {start}")
    ctx.member(atoms, [lmo_answers(oracle, W[t], lmo, delta or 1.0) for t in range(T)], label=f"{label}: LMO atoms")
    L = 1.0 / oracle.eps if L is None else L
    want, outside = [], []
    for t in range(T):
        S = np.union1d(np.flatnonzero(W[t] > 0), [atoms[t]]).astype(int)
        outside.append(np.delete(W[t + 1], S))
        if variant == "norm":
            want.append(_norm_step(oracle, W[t], S, L, hint(W[t + 1])))
        else:
            want.append(_full_minimum(oracle, S, hint(W[t + 1])))
    ctx.leq(
        scalar(np.max(np.abs(np.concatenate(outside)))) if T else 0.0,
        0.0,
        label=f"{label}: weights^(t+1) supported on S = supp(weights^t) + {{atom t}}",
    )
    if variant == "norm":
        ctx.close(W[1:], want, rtol=1e-9, atol=1e-11, label=f"{label}: weights^(t+1) = the model's minimiser on S")
    else:
        ctx.close(
            [oracle.f(W[t + 1]) for t in range(T)],
            want,
            rtol=1e-9,
            atol=1e-9,
            label=f"{label}: f(weights^(t+1)) = min of f on the simplex on S",
        )
    _check_traces(ctx, oracle, res, W, label)


@derived
def _norm_step(oracle, alpha, S, L: float, guess):
    """Variant 0's weights: argmin over the simplex on S of <grad f(q), a - alpha> + (L/2)||sum (a - alpha)_i s_i||^2
    (the oracle's scores and Gram matrix; exact simplex QP, :func:`ob.simplex_qp`, started from the support of
    ``guess``, a hint only)."""
    sc = oracle.scores(alpha)
    G = oracle.gram[np.ix_(S, S)]
    # (L/2) a^T G a + (sc_S - L G alpha_S)^T a, minimised over the simplex on S
    b = sc[S] - L * G @ alpha[S]
    start = np.flatnonzero(hint(guess)[S] > 0)
    a = ob.simplex_qp(L * G, b, support=start)
    out = np.zeros(oracle.K)
    out[S] = a
    return out


@derived
def _full_minimum(oracle, S, guess) -> float:
    """min of f over the simplex on the atoms S (oracle: SLSQP on the quadrature f with the oracle's gradient, to
    ~1e-13, started from ``guess``, a hint only; f is convex, so the start does not change the minimum)."""
    from scipy.optimize import minimize

    S = np.asarray(S).view(np.ndarray).astype(int)
    if S.size == 1:
        return scalar(oracle.f(np.eye(oracle.K)[S[0]]))

    def f(a):
        w = np.zeros(oracle.K)
        w[S] = a
        return scalar(oracle.f(w))

    def grad(a):
        w = np.zeros(oracle.K)
        w[S] = a
        return np.asarray(oracle.scores(w)).view(np.ndarray)[S]

    a0 = np.maximum(hint(guess)[S], 0.0) + 1e-3
    r = minimize(
        f,
        a0 / a0.sum(),
        jac=grad,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * S.size,
        constraints=[{"type": "eq", "fun": lambda a: np.sum(a) - 1.0, "jac": lambda a: np.ones_like(a)}],
        options={"ftol": 1e-16, "maxiter": 1000},
    )
    return scalar(r.fun)


def _check_traces(ctx, oracle, res, W, label: str):
    f, gap = np.asarray(res.f, dtype=float), np.asarray(res.gap, dtype=float)
    ctx.close(f, [oracle.f(w) for w in W], rtol=1e-10, atol=1e-10, label=f"{label}: f(q^t) = f(weights^t), every t")
    ctx.close(gap, [oracle.gap(w) for w in W], rtol=1e-8, atol=1e-10, label=f"{label}: gap_t = FW gap(weights^t)")
    ctx.close(res.weights, W[-1], rtol=0, atol=0, label=f"{label}: weights = weights^T")


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
