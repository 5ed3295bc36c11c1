"""refvi.kernels: fused Numba kernels (``@njit(cache=True)``, composable from other njit code).

Modules: :mod:`~refvi.kernels.energy` (mean energy gradient per built-in target), :mod:`~refvi.kernels.neglogp`
(-log p per target, for the score estimator), :mod:`~refvi.kernels.estimators` (entropy / STL / score tails),
:mod:`~refvi.kernels.structure` (codes of V and the projection onto V), :mod:`~refvi.kernels.prox` (Lemma 31,
Lemma 32, seed 002 Thm 7), :mod:`~refvi.kernels.constants` (M and mu), :mod:`~refvi.kernels.optim` (the whole
SGD loop of the built-in targets), :mod:`~refvi.kernels.fused` (the whole loop for any energy kernel passed as a
first-class function, and the cached loop of a user's per-point numba functions), :mod:`~refvi.kernels.composed`
(energy kernels built from other compiled functions: posteriordb models, affine frames, batched user callables) and
:mod:`~refvi.kernels.userfn` (a user's numba functions as fixed-signature pointers, so the kernels calling them are
cached).  Kernels take raw C-contiguous float64
arrays and assume validated input; the public, validating API is :mod:`refvi.estimators` and :mod:`refvi.prox`.

Numba's on-disk cache keys a kernel on its own source file only: a kernel that inlines or calls a helper from another
module (``_fastmath_exp``, ``structure``, ``prox`` and ``energy`` inside ``optim``) keeps its cached machine code when
only the helper's file changes.  After editing such a helper, delete ``kernels/__pycache__`` (or point
``NUMBA_CACHE_DIR`` at an empty directory) before testing; a fresh checkout, as in CI, has no cache.
"""

from refvi.kernels.constants import glm_constants, hierarchical_constants, hierarchical_precision
from refvi.kernels.energy import (
    callable_energy,
    cosine_energy,
    gaussian_energy,
    hierarchical_energy,
    linear_energy,
    logistic_energy,
    transform,
)
from refvi.kernels.prox import entropy_prox, project_singular, project_wm_sym
from refvi.kernels.structure import DIAG, FULL, SYM, TRIL, project_V, structure_code

__all__ = [
    "transform",
    "gaussian_energy",
    "linear_energy",
    "logistic_energy",
    "hierarchical_energy",
    "cosine_energy",
    "callable_energy",
    "entropy_prox",
    "project_wm_sym",
    "project_singular",
    "glm_constants",
    "hierarchical_constants",
    "hierarchical_precision",
    "project_V",
    "structure_code",
    "FULL",
    "TRIL",
    "SYM",
    "DIAG",
]
