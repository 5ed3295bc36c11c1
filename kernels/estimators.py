"""Estimator tails shared by every target: from the raw energy gradient to the entropy / STL / score estimators.

Formulas (seed 000 Eqs. 4, 6, 8 and §5), with V_s = C^{-T} u_s:

* energy:  (gm, proj_V gC)
* entropy: (gm, proj_V(gC - C^{-T}))                          (grad h = -proj_V C^{-T}, Lemma 16.2)
* stl:     (gm - mean_s V_s, proj_V(gC - mean_s V_s u_s^T))     (grad_z log q(C u + m) = -C^{-T} u)
* score:   (mean_s f_s V_s, proj_V(mean_s f_s V_s u_s^T - mean_s f_s C^{-T})), f_s = -log p(z_s)
"""

from __future__ import annotations

import numpy as np

from refvi.kernels._jit import jit
from refvi.kernels.structure import project_V


@jit
def finish_energy(gm, gC, code):
    return gm, project_V(gC, code)


@jit
def finish_entropy(gm, gC, C, code):
    return gm, project_V(gC - np.linalg.inv(C).T, code)


@jit
def finish_stl(gm, gC, C, U, code):
    S, d = U.shape
    V = np.linalg.solve(C.T, U.T).T  # rows C^{-T} u_s
    vm = np.zeros(d)
    for s in range(S):
        for i in range(d):
            vm[i] += V[s, i]
    vm /= S
    return gm - vm, project_V(gC - np.dot(V.T, U) / S, code)


@jit
def score_from_values(f, C, U, code):
    """Score estimator from f_s = -log p(z_s) (the caller computes f with a neglogp kernel)."""
    S, d = U.shape
    V = np.ascontiguousarray(np.linalg.solve(C.T, U.T).T)
    gm = np.zeros(d)
    fbar = 0.0
    for s in range(S):
        fbar += f[s]
        for i in range(d):
            V[s, i] *= f[s]  # V_s <- f_s V_s
            gm[i] += V[s, i]
    gm /= S
    fbar /= S
    gC = np.dot(V.T, U) / S - fbar * np.linalg.inv(C).T
    return gm, project_V(gC, code)
