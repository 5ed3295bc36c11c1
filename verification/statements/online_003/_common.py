"""Shared helpers, instances and constants of the online statements.

Seed 003 (Chérief-Abdellatif, Alquier, Khan, "A generalization bound for online variational inference").

Statements: Def. 2 / eq. (2) (tempered posterior), Lemma 1 (Donsker-Varadhan), Thm 1 and the per-step inequality (18)
(EWA), eqs. (9), (10) (SVA / SVB closed forms), Thm 2 with the stability inequality (22) and be-the-leader (21)
(SVA), Thm 3 (SVB; proven constant as the hard check, the printed constant as the separate claim
``003.claim-thm3-printed-constant``), Thm 4 (OGA-EL, corrected), Thm 5 (online-to-batch), Thm 6 (EWA generalization,
corrected; deep profile), Prop. 1 (convexity in the scale parametrization, negative control in variance and
expectation parameters), Prop. 2 (Lipschitz), Assumptions 4.1-4.3 (mean field), the SVA corollary with its exact
finite right side, eqs. (15), (16) (NGVI), the Gaussian KL formula, the OGA-EL / FTRL equivalence and the Thm 3 ball
diameter.

Errata (each defined beside the statement it corrects): E003-1 (NGVI beta), E003-2 (weights of (16)), E003-3
(Gaussian KL), E003-4 (Thm 3 constant: unproven, the failing proof step at T = 2), E003-5 (Thm 4 second penalty,
with a failing instance), E003-6 (Thm 6), E003-7 (SVA corollary), E003-8 (ball diameter), E003-9 (OGA-EL / FTRL
factor 2).

The algorithms under test are called only through ``ctx.impl.online`` (protocol
:mod:`refvi.verification.protocol.online`; refvi's own is :mod:`refvi.verification.protocol.refvi_online`);
comparators, exact right sides and quadratures come from :mod:`refvi.verification.oracles.online_comparators` /
``online_quadrature`` (numpy / scipy only).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.statement import scalar

RTOL = 1e-9  # relative tolerance of every regret bound


HINGE_LIP = math.sqrt(1.0 + 1.0 / (2.0 * math.pi))  # ||grad bar L_hinge|| <= HINGE_LIP ||x|| (Assumption 4.1)


# ------------------------------------------------------------------------------------------------------------------
# helpers and instance generators
# ------------------------------------------------------------------------------------------------------------------


def forall_online(ctx, strategy, check, **kw):
    """``ctx.forall`` for ``check(on, inst)``, ``on`` the online protocol under test (``ctx.adapter("online")``)."""
    on = ctx.adapter("online")
    ctx.forall(strategy, lambda inst: check(on, inst), **kw)


def grads_along(on, loss, X, y, M, S, H=1.0):
    """(values, gm, gs) of bar L_t at the recorded iterates (M[t], S[t]), t = 0..T-1."""
    T, d = X.shape
    val, gm, gs = np.empty(T), np.empty((T, d)), np.empty((T, d))
    for t in range(T):
        v, a, b = on.expected_loss(loss, X[t : t + 1], y[t : t + 1], M[t], S[t], H)
        val[t], gm[t], gs[t] = v[0], a[0], b[0]
    return val, gm, gs


def checked_grads(ctx, on, X, y, M, S, what=""):
    """:func:`grads_along` (the implementation's hinge bar L_t and gradients at the recorded iterates), each row
    compared with the oracle's closed form at the same state: values the statement may then use."""
    got = grads_along(on, "hinge", X, y, M, S)
    want = oracle_hinge_grads(X, y, M, S)
    for k, name in enumerate(("bar L_t", "grad_m bar L_t", "grad_sigma bar L_t")):
        ctx.close(got[k], want[k], rtol=1e-9, atol=1e-11, label=f"{what}: the implementation's {name} = oracle's")
    return got


def hinge_L(X):
    """Lipschitz constant of bar L_hinge over all (m, sigma) for the stream X (Assumption 4.1, checked in
    ``003.assumption1``): sqrt(1 + 1/(2 pi)) max_t ||x_t||."""
    return HINGE_LIP * scalar(np.max(np.linalg.norm(X, axis=1)))


def _floats(lo, hi):
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


@st.composite
def hinge_streams(draw, max_d=3, max_T=40):
    """A stream (X, y) with entries of X in [-2, 2] and labels in {-1, +1}, drawn element by element (so Hypothesis
    shrinks the data itself), plus a flag asking for the adaptive adversary instead of the drawn labels."""
    d = draw(st.integers(1, max_d))
    T = draw(st.integers(1, max_T))
    flat = draw(st.lists(_floats(-2.0, 2.0), min_size=T * d, max_size=T * d))
    X = np.array(flat, dtype=np.float64).reshape(T, d)
    X[np.abs(X) < 1e-3] = 0.0  # entries are 0 or of magnitude >= 1e-3 (no denormal-scale streams)
    if not np.any(X):
        X[0, 0] = 1.0
    y = np.array(draw(st.lists(st.sampled_from((-1.0, 1.0)), min_size=T, max_size=T)))
    adversarial = draw(st.booleans())
    return X, y, adversarial


@st.composite
def sva_instances(draw):
    X, y, adv = draw(hinge_streams())
    eta = draw(_floats(0.01, 2.0))
    s = draw(_floats(0.3, 3.0))
    boxed = draw(st.booleans())
    mbox = draw(_floats(0.2, 5.0)) if boxed else np.inf
    sbox = s * draw(_floats(1.0, 2.0)) if boxed else np.inf
    return dict(X=X, y=y, adv=adv, eta=eta, s=s, mbox=mbox, sbox=sbox)


def _labels(on, method, inst, **kw):
    if inst["adv"]:
        return on.run_adversarial(method, inst["X"], "hinge", **kw)
    return inst["y"]


def check_run_consistency(ctx, inst, X, y, res, kw):
    """What every learner's run must satisfy whatever the bound: the adaptive adversary's labels answer *this* run's
    predictions (y_t = -sign <m_t, x_t>, +1 at 0; margins within 1e-9 of 0 are ties), and the iterates stay in their
    boxes (|m| <= mbox, 0 <= sigma <= sbox) in every round."""
    M = np.asarray(res.M, dtype=np.float64)
    if inst.get("adv"):
        margin = np.einsum("td,td->t", M[:-1], X)
        want = np.where(margin > 0, -1.0, 1.0)
        clear = np.abs(margin) > 1e-9 * (1.0 + np.abs(M[:-1]).sum(1) * np.abs(X).sum(1))
        ctx.true(
            bool(np.all(np.asarray(y)[clear] == want[clear])),
            label="adversary's labels are -sign <m_t, x_t> of the run's own means",
        )
    mbox, sbox = kw.get("mbox", np.inf), kw.get("sbox", np.inf)
    ctx.true(bool(np.all(np.abs(M) <= mbox * (1 + 1e-12))), label=f"|m_t| <= mbox = {mbox} in every round")
    if res.S is not None:
        S = np.asarray(res.S, dtype=np.float64)
        ctx.true(
            bool(np.all(S >= 0) and np.all(S <= sbox * (1 + 1e-12))),
            label=f"0 <= sigma_t <= sbox = {sbox} in every round",
        )


def _lower_tri(rng, d):
    C = np.tril(rng.normal(0, 0.7, (d, d)))
    C[np.diag_indices(d)] = np.abs(C[np.diag_indices(d)]) + 0.05
    return C


# ------------------------------------------------------------------------------------------------------------------
# recompute, never trust: what a run reports, rebuilt from its iterates and the data
# ------------------------------------------------------------------------------------------------------------------


def point_losses(loss, X, y, M, H=1.0):
    """ell_t(theta_t) for the rows theta_t of M (the states used in rounds t = 0..T-1), from the losses' definitions
    (protocol: hinge, squared, absolute, quadratic H/2 ||theta - x||^2 with y unused)."""
    X, M = np.asarray(X, dtype=np.float64), np.asarray(M, dtype=np.float64)
    if loss == "quadratic":
        return 0.5 * H * np.sum((M - X) ** 2, axis=1)
    pred = np.einsum("td,td->t", M, X)
    y = np.asarray(y, dtype=np.float64)
    if loss == "hinge":
        return np.maximum(0.0, 1.0 - y * pred)
    if loss == "squared":
        return (y - pred) ** 2
    if loss == "absolute":
        return np.abs(y - pred)
    raise ValueError(f"point_losses: unknown loss {loss!r}")


def check_losses(ctx, loss, X, y, res, H=1.0, what=""):
    """The run's reported losses are ell_t at its own reported states m_t, at every round (a learner that
    under-reports its losses, or reports them at another state, fails here rather than passing a regret bound)."""
    M = np.asarray(res.M, dtype=np.float64)
    want = point_losses(loss, X, y, M[:-1], H)
    got = np.asarray(res.losses, dtype=np.float64)
    ctx.true(got.shape == want.shape, label=f"{what}: one reported loss per round")
    ctx.close(got, want, rtol=1e-12, atol=1e-14, label=f"{what}: reported loss of round t = ell_t(m_t), every t")


def oracle_hinge_grads(X, y, M, S):
    """(values, gm, gs) of the hinge's bar L_t at the recorded states (M[t], S[t]), t = 0..T-1, from the oracle's
    closed form (scipy's ndtr; never the implementation's expected loss)."""
    from refvi.verification.oracles import online_comparators as oc

    T, d = np.asarray(X).shape
    val, gm, gs = np.empty(T), np.empty((T, d)), np.empty((T, d))
    for t in range(T):
        val[t], gm[t], gs[t] = oc.hinge_value(X[t : t + 1], y[t : t + 1], M[t], S[t])
    return val, gm, gs


def sigma_step(sig, a, gs):
    """SVB's sigma step sigma h(a gs / (2 sigma)), h(x) = sqrt(1 + x^2) - x, written as sigma^2 / (sqrt(sigma^2 +
    (a gs / 2)^2) + a gs / 2) (exact; no cancellation for gs >= 0, and 0 at sigma = 0)."""
    u = a * gs / 2.0
    root = np.sqrt(sig**2 + u**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u >= 0, np.where(root + u > 0, sig**2 / (root + u), 0.0), root - u)


def _adversary_label(ctx, y_t, m_t, x_t):
    """The label the adaptive adversary owes the state m_t: -sign <m_t, x_t>, +1 at 0 (carrying the marks of m_t, so
    a reported label is checked only once the state it answers is).  A margin within rounding of 0 (not exactly 0)
    may get either label: the reported one is then declared an input."""
    margin = m_t @ x_t
    if margin != 0 and abs(margin) <= 1e-9 * (1.0 + scalar(np.abs(m_t) @ np.abs(x_t))):
        return ctx.given(y_t, "the adversary's label at a margin within rounding of 0: either answers the rule")
    return 1.0 - 2.0 * (margin > 0) + 0.0 * margin


def check_replay(ctx, method, X, y, res, hyper, *, loss="hinge", H=1.0, adversarial=False, what=""):
    """A learner's whole run record from the update rule the protocol states, by induction: M[0], S[0] the start
    (0 and sigma0 or s), and M[t+1], S[t+1] the rule applied to the reported (M[t], S[t]) with the oracle's gradients
    there (:func:`refvi.verification.oracles.online_rules.step`), row by row, so a state is checked once every earlier
    one is; the reported losses ell_t(m_t) at those states, the final (m, sigma) = the last row; with ``adversarial``
    the labels y_t = -sign <m_t, x_t> (+1 at 0) answering the run's own means.  The FTRL forms (SVA, OGA-EL lazy)
    recover their gradient sums from the previous state when no box face is active (``sums_from_state``), else carry
    them from every earlier round.  Returns (M, S) as float arrays."""
    from refvi.verification.oracles import online_rules as rules

    X = np.asarray(X, dtype=np.float64)
    T, d = X.shape
    M = np.asarray(res.M, dtype=np.float64)
    S = None if method == "oga" else np.asarray(res.S, dtype=np.float64)
    s0 = np.full(d, scalar(hyper.get("s", 1.0))) if hyper.get("sigma0") is None else np.asarray(hyper["sigma0"], float)
    ctx.close(M[0], np.zeros(d), atol=0.0, label=f"{what}: m_1 = 0, the prior mean")
    if S is not None:
        ctx.close(S[0], s0, rtol=1e-15, label=f"{what}: sigma_1 = the initial scale")
    want_m, want_s, want_y, want_loss = [], [], [], []
    sums = None
    for t in range(T):
        m, x = M[t], X[t]
        yt = None if y is None else y[t]
        if adversarial:
            want_y.append(_adversary_label(ctx, y[t], m, x))
        sg = None if S is None else S[t]
        if sg is not None and t > 0:
            sums = rules.sums_from_state(method, hyper, m, sg) or sums
        m2, s2, sums, lt = rules.step(method, hyper, x, yt, m, sg, sums, t, loss, H)
        if method == "oga" and loss == "hinge" and abs(1.0 - yt * (m @ x)) < 1e-12:  # a kink: either side
            alt = np.clip(m, -hyper.get("mbox", np.inf), hyper.get("mbox", np.inf))
            m2 = alt if np.max(np.abs(M[t + 1] - alt)) < np.max(np.abs(M[t + 1] - m2)) else m2
        want_m.append(m2)
        want_s.append(s2)
        want_loss.append(lt)
    rule = {"sva": "(9)", "svb": "(10)", "ngvi": "(15)", "oga": "OGA", "ogael": "OGA-EL"}[method]
    # one step of rounding from the reported state (SVA: the gradient sums recovered from it): 1e-12 for the
    # closed-form quadratic loss and OGA's clip, 1e-10 for the hinge's ndtr, 1e-9 for SVA's recovered sums
    if method == "oga" or loss == "quadratic":
        tm, ts = dict(rtol=1e-12, atol=1e-12 if method != "oga" else 1e-14), dict(rtol=1e-12, atol=1e-14)
    else:
        tm = ts = dict(rtol=1e-9, atol=1e-11) if method == "sva" else dict(rtol=1e-10, atol=1e-12)
    if T:
        ctx.close(M[1:], want_m, **tm, label=f"{what}: m_(t+1) = rule {rule} at (m_t, sigma_t)")
        if S is not None:
            ctx.close(S[1:], want_s, **ts, label=f"{what}: sigma_(t+1) = rule {rule}, every t")
        got = np.asarray(res.losses, dtype=np.float64)
        ctx.close(got, want_loss, rtol=1e-12, atol=1e-14, label=f"{what}: reported loss of round t = ell_t(m_t)")
        if adversarial:
            ctx.close(y, want_y, atol=0.0, label=f"{what}: adversary's y_t = -sign <m_t, x_t> of the run's own means")
    ctx.close(np.asarray(res.m, dtype=np.float64), M[-1], rtol=1e-15, label=f"{what}: the final mean m = m_(T+1)")
    if S is not None:
        ctx.close(np.asarray(res.sigma, dtype=np.float64), S[-1], rtol=1e-15, label=f"{what}: sigma = sigma_(T+1)")
    return M, S


def check_sva_runs(ctx, data, runs, hyper, what="SVA"):
    """Many SVA runs ``runs`` on the streams ``data`` [(X, y), ...] (equal lengths), each against the oracle's
    from-scratch replay of all of them at once (``online_rules.run_sva_batch``: states M, S and the losses, inputs
    only): one comparison per run."""
    from refvi.verification.oracles import online_rules as rules

    M, S, L = rules.run_sva_batch(np.array([X for X, _ in data]), np.array([y for _, y in data]), **hyper)
    for r, res in enumerate(runs):
        got = [np.ravel(np.asarray(v, dtype=np.float64)) for v in (res.M, res.S, res.losses, res.m, res.sigma)]
        want = [np.ravel(v) for v in (M[r], S[r], L[r], M[r, -1], S[r, -1])]
        ctx.close(
            np.concatenate(got),
            np.concatenate(want),
            rtol=1e-9,
            atol=1e-11,
            label=f"{what}: the run (M, S, losses, m, sigma) = the oracle's replay from scratch",
        )
