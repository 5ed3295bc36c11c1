"""Reparameterization gradient estimators for the Gaussian family (seed 000 Eqs. 6, 8; §5), batched over U.

Every estimator takes pre-drawn base samples U (S x d, rows u_s ~ N(0, I)) and returns the *mean* over rows of a
per-sample estimate, as ``(gm, gC)`` with gC projected onto V (seed 000 Lemma 15):

* ``energy``  g_energy(u) = T*(-grad log p(C u + m))                         unbiased for grad l   (Eq. 6)
* ``entropy`` g_ent(u)    = g_energy(u) + grad h(w), grad h = (0, -proj_V C^{-T}) unbiased for grad f (Eq. 8)
* ``stl``     T*(-grad log p(z) + grad_z log q_w(z)), z = C u + m, q held fixed  unbiased for grad f (§5)
* ``score``   -log p(z) * grad_w log q_w(z)                                   unbiased for grad l (Eq. 4)

Targets that carry compiled kernels (``Target.kernels()``: the built-in Gaussian, LinearRegression,
LogisticRegression, HierarchicalLogisticRegression, CosineQuadratic, and CallableTargets whose functions are
numba-compiled) run fused Numba kernels (:mod:`refvi.kernels`); every other target takes the generic NumPy path
(``target.grad_logp`` / ``target.logp`` on the whole batch), which the kernels' reference in
``tests/_numpy_reference.py`` also uses.
The result is a deterministic function of (target, m, C, U).  ``energy`` and ``entropy`` are unbiased for any
standardized location-scale base (pass its samples as U, seed 002); ``stl`` and ``score`` use the Gaussian score and
assume u ~ N(0, I).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import NonFiniteError, as_samples, as_vector, check_scale, check_structure, check_target
from refvi.families.gaussian import proj_V
from refvi.kernels import checked as _kchk
from refvi.kernels import energy as _ke
from refvi.kernels import estimators as _kest
from refvi.kernels.structure import DIAG, TRIL, structure_code
from refvi.targets.base import _NO_PLAN, _PLAN_ATTR, Target


def _validate(target, m, C, U, structure):
    check_target(target)
    check_structure(structure)
    m = as_vector(m, "m", target.dim)
    C = check_scale(C, target.dim, structure)
    U = as_samples(U, target.dim)
    return m, C, U


# ---------------------------------------------------------------------------------------------- kernel dispatch
# Each target carries its own kernels (Target.kernels(), a KernelPlan); anything else takes the generic NumPy path.


def _plan(target):
    return target.kernels() if isinstance(target, Target) else _NO_PLAN


def _energy_kernel(target):
    """(kernel, extra args) computing the raw mean energy gradient for ``target``, or None (generic path)."""
    return _plan(target).energy


def _neglogp_kernel(target):
    """(kernel, extra args) computing -log p on the rows of Z, or None (generic path)."""
    return _plan(target).neglogp


def _energy_raw(target, m, C, U):
    """Mean over rows of (-grad log p(z_s), -grad log p(z_s) u_s^T), before projection onto V."""
    plan = _energy_kernel(target)
    if plan is None:
        return _energy_raw_numpy(target, m, C, U)
    kernel, args = plan
    gm, gC = kernel(m, C, U, *args)
    if not (np.all(np.isfinite(gm)) and np.all(np.isfinite(gC))):
        raise NonFiniteError("grad_logp returned non-finite values at the sampled points")
    return gm, gC


# ---------------------------------------------------------------------------------------------- fast path
_F8 = np.dtype(np.float64)
_FAST_CODES = {"tril": TRIL, "diag": DIAG}


def _checked_energy_plan(target):
    """(fused validated kernel, extra args) of a target's plan, None for anything else."""
    if isinstance(target, Target):
        plan = target.__dict__.get(_PLAN_ATTR)  # the hit is one dict lookup (the public path's hot spot)
        return (plan if plan is not None else target.kernels()).energy_checked
    return None


def _plain(a, ndim):
    return type(a) is np.ndarray and a.dtype is _F8 and a.ndim == ndim and a.flags.c_contiguous


def energy(target, m, C, U, structure: str = "tril"):
    """g_energy averaged over the rows of U (seed 000 Eq. 6); gC projected onto V."""
    code = _FAST_CODES.get(structure) if type(structure) is str else None
    if code is not None and _plain(m, 1) and _plain(C, 2) and _plain(U, 2):
        plan = _checked_energy_plan(target)
        if plan is not None:
            status, gm, gC = plan[0](m, C, U, target.dim, code, *plan[1])
            if status == _kchk.OK:
                return gm, gC
            # a check failed: the full validation below raises the error that names it
    m, C, U = _validate(target, m, C, U, structure)
    gm, gC = _energy_raw(target, m, C, U)
    return _kest.finish_energy(gm, gC, structure_code(structure))


def entropy(target, m, C, U, structure: str = "sym"):
    """g_ent = g_energy + grad h (seed 000 Eq. 8, Lemma 16.2)."""
    m, C, U = _validate(target, m, C, U, structure)
    gm, gC = _energy_raw(target, m, C, U)
    return _finite(_kest.finish_entropy(gm, gC, C, structure_code(structure)), "entropy")


def stl(target, m, C, U, structure: str = "tril"):
    """Sticking the landing: g_energy + T*(grad_z log q(z)) with grad_z log q(C u + m) = -C^{-T} u."""
    m, C, U = _validate(target, m, C, U, structure)
    gm, gC = _energy_raw(target, m, C, U)
    return _finite(_kest.finish_stl(gm, gC, C, U, structure_code(structure)), "stl")


def score(target, m, C, U, structure: str = "tril"):
    """Score-function estimator of grad l: mean of -log p(z_s) * (C^{-T} u_s, proj_V(C^{-T}(u_s u_s^T - I)))."""
    m, C, U = _validate(target, m, C, U, structure)
    plan = _neglogp_kernel(target)
    if plan is None:
        return _finite(_score_numpy(target, m, C, U, structure), "score")
    kernel, args = plan
    f = kernel(_ke.transform(m, C, U), *args)
    if not np.all(np.isfinite(f)):
        raise NonFiniteError("logp returned non-finite values at the sampled points")
    return _finite(_kest.score_from_values(f, C, U, structure_code(structure)), "score")


def _finite(g, name):
    """The C^{-1} terms overflow for a C that is in the domain but numerically singular (e.g. 1e-310 I)."""
    gm, gC = g
    if not (np.all(np.isfinite(gm)) and np.all(np.isfinite(gC))):
        raise NonFiniteError(f"the {name} estimate is not finite: C is too close to singular (its inverse overflows)")
    return gm, gC


ESTIMATORS = {"energy": energy, "entropy": entropy, "stl": stl, "score": score}


# ------------------------------------------------------------------------------------------- generic NumPy path


def _energy_raw_numpy(target, m, C, U):
    Z = U @ C.T + m
    G = -np.asarray(target.grad_logp(Z), dtype=np.float64).reshape(U.shape)
    if not np.all(np.isfinite(G)):
        raise NonFiniteError("grad_logp returned non-finite values at the sampled points")
    S = U.shape[0]
    return G.mean(axis=0), (G.T @ U) / S


def _score_numpy(target, m, C, U, structure):
    Z = U @ C.T + m
    f = -np.asarray(target.logp(Z), dtype=np.float64).reshape(U.shape[0])
    if not np.all(np.isfinite(f)):
        raise NonFiniteError("logp returned non-finite values at the sampled points")
    V = np.linalg.solve(C.T, U.T).T
    S = U.shape[0]
    gm = (f[:, None] * V).mean(axis=0)
    CinvT = np.linalg.inv(C).T
    gC = (V.T * f) @ U / S - f.mean() * CinvT
    return gm, proj_V(gC, structure)
