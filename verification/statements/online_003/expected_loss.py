"""Chérief-Abdellatif, Alquier & Khan (seed 003): the expected losses bar L_t(m, sigma) = E_{theta ~ N(m, diag
sigma^2)} ell_t(theta) and their gradients, for every loss the learners run on, through the implementation's
``expected_loss``.

Every learner of the paper (SVA eq. 9, SVB eq. 10, NGVI eq. 15, OGA-EL) updates from (gm, gs); the replays in
:mod:`.sva`, :mod:`.svb`, :mod:`.ngvi` recompute the updates from the implementation's own gradients, so a wrong
gradient would be replayed faithfully.  Here every loss is compared with the split-quadrature oracle
(:mod:`refvi.verification.oracles.online_quadrature`, Bonnet / Price in integral form, 1e-10 relative) or, for the
quadratic loss, the closed form bar L = H/2 (||m - x||^2 + ||sigma||^2) (Assumption 4.2); batches of rows exercise
the vectorized path, and sigma = 0 the point loss.

The full-covariance expected loss E ell(<m + C u, x>) (the SVA-full learner's objective, ``expected_loss_full``) is
compared with the same oracle on the ridge reduction <theta, x> ~ N(<m, x>, ||C^T x||^2), for triangular and full C
whose ||C x|| differs from ||C^T x||.

Statements: 003.claim-expected-loss, 003.claim-expected-loss-full.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import online_quadrature as oq
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.online_003._common import _floats

LOSSES = ("hinge", "squared", "absolute", "quadratic")


@st.composite
def batches(draw, max_d=4, max_T=4):
    """(loss, X (T, d), y (T,), m, sigma, H): features 0 or of magnitude >= 1e-2, sigma in [1e-2, 3] (or exactly 0
    in every coordinate), labels +-1 for the hinge and real otherwise."""
    loss = draw(st.sampled_from(LOSSES))
    d, T = draw(st.integers(1, max_d)), draw(st.integers(1, max_T))
    vec = lambda n, lo, hi: np.array(draw(st.lists(_floats(lo, hi), min_size=n, max_size=n)))
    X = vec(T * d, -3.0, 3.0).reshape(T, d)
    X[np.abs(X) < 1e-2] = 0.0
    X[~np.any(X, axis=1), 0] = 1.0  # every row has a feature (b = ||sigma x|| > 0)
    y = np.where(vec(T, -1, 1) < 0, -1.0, 1.0) if loss == "hinge" else vec(T, -3.0, 3.0)
    sigma = np.zeros(d) if draw(st.booleans()) and draw(st.booleans()) else vec(d, 1e-2, 3.0)
    return loss, X, y, vec(d, -3.0, 3.0), sigma, draw(_floats(0.2, 5.0))


def _oracle(loss, x, y, m, sigma, H):
    if loss == "quadratic":
        r = m - x
        return 0.5 * H * (r @ r + sigma @ sigma), H * r, H * sigma
    if not np.any(sigma * x):  # a point mass: the loss itself (the gradient is a subgradient)
        a = scalar(m @ x)
        return {"hinge": max(0.0, 1.0 - y * a), "squared": (y - a) ** 2, "absolute": abs(y - a)}[loss], None, None
    return oq.expected_loss_quad(loss, x, y, m, sigma)


_FIXED = [
    ("absolute", np.array([[1.0, -2.0]]), np.array([0.3]), np.array([0.2, 0.1]), np.array([0.5, 1.5]), 1.0),
    (
        "hinge",
        np.array([[0.5, 1.0], [2.0, -1.0]]),
        np.array([1.0, -1.0]),
        np.array([0.3, -0.2]),
        np.array([1.0, 0.2]),
        1.0,
    ),
    ("squared", np.array([[1.0], [-0.5]]), np.array([0.7, -1.2]), np.array([0.4]), np.array([0.8]), 1.0),
    ("quadratic", np.array([[1.0, 2.0, -1.0]]), None, np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.1, 2.0]), 2.5),
    ("absolute", np.array([[1.0, 1.0]]), np.array([1.0]), np.array([0.5, 0.5]), np.zeros(2), 1.0),
]


@statement("003.claim-expected-loss")
def claim_expected_loss(ctx):
    on = ctx.adapter("online")

    def check(inst):
        loss, X, y, m, sigma, H = inst
        yy = None if loss == "quadratic" else y
        v, gm, gs = (np.asarray(a, dtype=np.float64) for a in on.expected_loss(loss, X, yy, m, sigma, H))
        for t in range(X.shape[0]):
            ov, om, osg = _oracle(loss, X[t], None if yy is None else scalar(y[t]), m, sigma, H)
            what = f"{loss}, row {t}, sigma = {np.round(sigma, 3).tolist()}"
            ctx.close(v[t], ov, rtol=1e-9, atol=1e-11, label=f"{what}: bar L")
            if om is not None:
                scale = 1e-11 * (1.0 + scalar(np.abs(np.concatenate([om, osg])).max()))
                ctx.close(gm[t], om, rtol=1e-9, atol=scale, label=f"{what}: grad_m bar L")
                ctx.close(gs[t], osg, rtol=1e-9, atol=scale, label=f"{what}: grad_sigma bar L")

    ctx.forall(batches(), check, fixed=_FIXED, max_examples=max(60, ctx.profile.max_examples))


@st.composite
def full_instances(draw, max_d=4):
    """(loss, x, y, m, C): a feature vector with entries of magnitude >= 1e-2 (not all 0), C lower triangular with a
    diagonal in [0.1, 2] or (half the time) a full matrix, labels +-1 for the hinge and real otherwise."""
    loss = draw(st.sampled_from(LOSSES[:3]))
    d = draw(st.integers(1, max_d))
    vec = lambda n, lo, hi: np.array(draw(st.lists(_floats(lo, hi), min_size=n, max_size=n)))
    x = vec(d, -3.0, 3.0)
    x[np.abs(x) < 1e-2] = 0.0
    if not np.any(x):
        x[0] = 1.0
    C = vec(d * d, -2.0, 2.0).reshape(d, d)
    if draw(st.booleans()):
        C = np.tril(C, -1) + np.diag(vec(d, 0.1, 2.0))
    if not np.linalg.norm(C.T @ x) > 1e-3:  # the ridge scale the oracle needs (b > 0)
        C = C + np.eye(d)
    y = (-1.0 if vec(1, -1, 1)[0] < 0 else 1.0) if loss == "hinge" else scalar(vec(1, -3.0, 3.0)[0])
    return loss, x, y, vec(d, -3.0, 3.0), C


_FULL_FIXED = [
    ("hinge", np.array([1.0, 0.0]), 1.0, np.array([0.2, -0.1]), np.array([[1.0, 0.0], [2.0, 0.5]])),
    (
        "absolute",
        np.array([0.0, 1.0, 0.5]),
        0.3,
        np.zeros(3),
        np.array([[0.5, 1.0, 0.0], [0.0, 0.2, 0.0], [1.5, 0.0, 0.4]]),
    ),
    ("squared", np.array([1.0, -1.0]), -0.4, np.array([0.3, 0.3]), np.array([[0.3, 0.0], [1.2, 0.8]])),
]


@statement("003.claim-expected-loss-full")
def claim_expected_loss_full(ctx):
    on = ctx.adapter("online")

    def check(inst):
        loss, x, y, m, C = inst
        got = scalar(on.expected_loss_full(loss, x, y, m, C))
        want = oq.expected_loss_full_quad(loss, x, y, m, C)[0]
        what = (
            f"{loss}, d = {len(x)}, ||C^T x|| = {np.linalg.norm(C.T @ x):.3g} (||C x|| = {np.linalg.norm(C @ x):.3g})"
        )
        ctx.close(got, want, rtol=1e-9, atol=1e-11, label=f"{what}: E ell(<m + C u, x>)")

    ctx.forall(full_instances(), check, fixed=_FULL_FIXED, max_examples=max(40, ctx.profile.max_examples))
