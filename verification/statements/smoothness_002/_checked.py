"""The implementation's values that seed 002's bounds use, each compared with an oracle first (so no bound takes a
reported value on trust, :mod:`refvi.verification.statement.provenance`).

* :func:`grad_h`: ``grad_neg_entropy`` against -proj_V(C^{-T}) (seed 002 §2.3: grad_C h = -C^{-T}), the same check
  as seed 000's (Lemma 16.2), imported from :mod:`..convergence_000._structure`;
* :func:`project_singular`: ``project_singular`` against the singular-value clip at 1/sqrt(M) (Thm 7), from
  :func:`..oracles.sgd_reference.project`;
* :func:`energy_atoms`: ``energy`` over the rows U of a discrete base's atoms (or any sample) against the same
  mean computed from the target record's closed-form gradient, (mean -grad log p(z), proj_V mean -grad log p(z) u^T)
  at z = C u + m (seed 002 §3.1: l's gradient is the expectation of the chain rule through t_w).
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import sgd_reference
from refvi.verification.oracles.matrices import proj_V as _proj
from refvi.verification.statements.convergence_000._structure import grad_h  # noqa: F401  (re-exported)


def project_singular(ctx, C, M: float, what: str = "") -> np.ndarray:
    """The implementation's projection of a full C onto W_M, compared with the singular-value clip at 1/sqrt(M): two
    SVDs, rounding 1e-13 relative to the spectrum's scale."""
    P = np.asarray(ctx.impl.project_singular(C, M), dtype=np.float64)
    ref = sgd_reference.project(np.asarray(C, dtype=np.float64), M, "full")
    scale = 1.0 + np.abs(C).max() + 1.0 / np.sqrt(M)
    ctx.close(P, ref, atol=1e-13 * scale, label=f"proj_(W_M)(C) == singular-value clip at 1/sqrt(M) (oracle){what}")
    return P


def energy_atoms(ctx, target, m, C, U, structure: str = "full", what: str = ""):
    """The implementation's energy gradient (gm, gC) averaged over the rows of U, compared with the same average of
    the target record's closed-form gradient (sums of len(U) <= 1024 terms: rounding 1e-13 of their scale)."""
    gm, gC = ctx.impl.energy(target, m, C, U, structure)
    gm, gC = np.asarray(gm, dtype=np.float64), np.asarray(gC, dtype=np.float64)
    Z = np.asarray(U, dtype=np.float64) @ np.asarray(C, dtype=np.float64).T + m
    G = -np.array([np.asarray(target.grad_logp(z), dtype=np.float64) for z in Z])
    rm, rC = G.mean(axis=0), _proj(G.T @ U / len(U), structure)
    scale = 1.0 + np.abs(G).max() * (1.0 + np.abs(U).max())
    ctx.close(
        np.concatenate([gm, gC.ravel()]),
        np.concatenate([rm, rC.ravel()]),
        rtol=1e-12,
        atol=1e-13 * scale,
        label=f"energy over the atoms == the mean of the target's closed-form gradient (oracle){what}",
    )
    return gm, gC
