"""Seed 002 §5.3: one step of each gradient-descent method, written from the paper with the oracles' prox and
projection (never refvi), and the replay of a reported trajectory by induction.

* ``"naive"``: w - lambda (grad l + grad h), grad h = (0, -C^{-T}), full C (Eq. 19);
* ``"prox"``: prox_{lambda h}(w - lambda grad l), lower-triangular C, grad_C l projected onto tril (Eq. 21, Thm 7's
  prox: the diagonal c -> (c + sqrt(c^2 + 4 lambda))/2, :func:`..oracles.sgd_reference.prox_entropy`);
* ``"projected"``: the naive step, then the singular-value clip onto W_M (Thm 7,
  :func:`..oracles.sgd_reference.project`); the start is clipped too.

:func:`replay` compares a trajectory w^0..w^K the implementation reported with the start and with one oracle step
from each reported w^k (a comparison row by row: w^{k+1} is checked once w^k is, so the whole trajectory is checked
by induction, and every later use of it speaks of checked values).
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import sgd_reference
from refvi.verification.statement import scalar


def largest_step(method: str, M: float) -> float:
    """Thm 6's largest step (the protocol's ``step=None``): 1/M for prox and naive, 1/(2M) for projected."""
    return 1.0 / (2.0 * M) if method == "projected" else 1.0 / M


def oracle_start(method: str, m0, C0, M):
    """w^0 of the descent: the start, its C clipped onto W_M for the projected method."""
    C0 = np.asarray(C0, dtype=np.float64)
    return np.asarray(m0, dtype=np.float64), sgd_reference.project(C0, M, "full") if method == "projected" else C0


def oracle_step(method: str, m, C, gm, gC, step: float, M):
    """One step of ``method`` from (m, C) along the full-matrix energy gradient (gm, gC)."""
    if method == "prox":
        return m - step * gm, sgd_reference.prox_entropy(np.tril(C - step * np.tril(gC)), step)
    Y = C - step * (gC - np.linalg.inv(C).T)
    if method == "naive":
        return m - step * gm, Y
    return m - step * gm, sgd_reference.project(Y, M, "full")


def replay(ctx, grad_l, ms, Cs, m0, C0, step, method: str, M, what: str, rtol: float = 1e-12):
    """The reported trajectory (ms (K+1, d), Cs (K+1, d, d)) against the oracle's: w^0 against the start, and each
    w^{k+1} against one oracle step from the reported w^k along ``grad_l`` (the exact energy gradient; the caller's
    oracle).  Two float64 evaluations of one step (BLAS vs loops, two inverses or SVDs): rounding, ``rtol`` of the
    iterates' scale times cond(C_k) for the steps that invert C.  ``step`` None is Thm 6's largest step.  Returns
    the checked (ms, Cs)."""
    ms, Cs = np.asarray(ms, dtype=np.float64), np.asarray(Cs, dtype=np.float64)
    step = largest_step(method, M) if step is None else step
    m_s, C_s = oracle_start(method, m0, C0, M)
    scale = 1.0 + scalar(np.abs(Cs).max()) + scalar(np.abs(ms).max())
    ctx.close(
        np.concatenate([ms[0], Cs[0].ravel()]),
        np.concatenate([m_s, C_s.ravel()]),
        rtol=rtol,
        atol=rtol * scale,
        label=f"{what}: w^0 is the start" + (" clipped onto W_M" if method == "projected" else ""),
    )
    K = ms.shape[0] - 1
    if K < 1:
        return ms, Cs
    cond = max(scalar(np.linalg.cond(Cs[k])) for k in range(K)) if method != "prox" else 1.0
    nxt = []
    for k in range(K):
        gm, gC = grad_l(ms[k], Cs[k])
        mk, Ck = oracle_step(method, ms[k], Cs[k], gm, gC, step, M)
        nxt.append(np.concatenate([mk, Ck.ravel()]))
    ctx.close(
        np.array([np.concatenate([ms[k + 1], Cs[k + 1].ravel()]) for k in range(K)]),
        np.array(nxt),
        rtol=rtol * cond,
        atol=rtol * cond * scale,
        label=f"{what}: w^(k+1) is one {method} step from the reported w^k, replayed for every k < K",
    )
    return ms, Cs
