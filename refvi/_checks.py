"""Input validation shared by every public entry point.

Every function here either returns a clean float64 array or raises a ``ValueError`` / ``TypeError`` whose message
names the argument and the violated condition (bad input never silently yields NaN).
"""

from __future__ import annotations

import numbers

import numpy as np

STRUCTURES = ("full", "tril", "sym", "diag")


class NonFiniteError(ValueError):
    """A target or an estimator produced a non-finite value at finite inputs (overflow, a numerically singular C).

    Optimizers treat it as divergence of the run; any other ValueError is a bad input and propagates as is."""


def as_generator(rng, name: str = "rng") -> np.random.Generator:
    """``np.random.default_rng(rng)`` for None, a non-negative int (or sequence of them), a SeedSequence or a
    Generator; anything else is a TypeError / ValueError naming the argument."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is not None and not isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        vals = np.atleast_1d(np.asarray(rng, dtype=object))
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals.ravel()):
            raise TypeError(f"{name} must be None, a non-negative integer seed or a numpy Generator, got {rng!r}")
        if any(int(v) < 0 for v in vals.ravel()):
            raise ValueError(f"{name} must be a non-negative integer seed, got {rng!r}")
    return np.random.default_rng(rng)


def check_target(target, name: str = "target"):
    """A refvi target: an object with a positive integer ``dim`` and callable ``logp`` / ``grad_logp`` (every
    refvi.targets class, a CallableTarget around your own functions)."""
    dim = getattr(target, "dim", None)
    if (
        isinstance(dim, bool)
        or not isinstance(dim, (int, np.integer))
        or dim < 1
        or not callable(getattr(target, "logp", None))
        or not callable(getattr(target, "grad_logp", None))
    ):
        raise TypeError(
            f"{name} must be a refvi target (refvi.targets: Gaussian, LinearRegression, ..., or "
            f"CallableTarget(logp, grad_logp, dim) around your own functions), got "
            f"{type(target).__name__}"
        )
    return target


def as_vector(x, name: str, dim: int | None = None) -> np.ndarray:
    """Return ``x`` as a finite, C-contiguous float64 vector of length ``dim`` (if given)."""
    a = _as_float_array(x, name)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {a.shape}")
    if dim is not None and a.shape[0] != dim:
        raise ValueError(f"{name} must have length {dim}, got {a.shape[0]}")
    _check_finite(a, name)
    return a


def as_matrix(x, name: str, shape: tuple[int | None, int | None] | None = None) -> np.ndarray:
    """Return ``x`` as a finite, C-contiguous float64 matrix, checking ``shape`` where given (None = any)."""
    a = _as_float_array(x, name)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {a.shape}")
    if shape is not None:
        for axis, want in enumerate(shape):
            if want is not None and a.shape[axis] != want:
                raise ValueError(f"{name} must have shape {_fmt_shape(shape)}, got {a.shape}")
    _check_finite(a, name)
    return a


def as_samples(U, dim: int, name: str = "U") -> np.ndarray:
    """Pre-drawn base samples: a finite (S, dim) array with S >= 1 (a single (dim,) row is promoted)."""
    a = _as_float_array(U, name)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != dim:
        raise ValueError(f"{name} must have shape (S, {dim}), got {np.shape(U)}")
    if a.shape[0] < 1:
        raise ValueError(f"{name} must hold at least one sample row (S >= 1)")
    _check_finite(a, name)
    return a


def positive_scalar(x, name: str, allow_zero: bool = False) -> float:
    """A finite real number > 0 (or >= 0 with ``allow_zero``)."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    v = float(x)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {v}")
    return v


def check_structure(structure: str) -> str:
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}")
    return structure


def check_scale(C, dim: int, structure: str, name: str = "C", require_domain: bool = True) -> np.ndarray:
    """Validate a scale matrix: shape (d, d), finite, lying in the subspace V named by ``structure``.

    With ``require_domain`` the matrix must also lie in the domain W of seed 000 §2: positive diagonal for
    triangular / diagonal C, positive definite for symmetric C, invertible for full C.
    """
    check_structure(structure)
    C = as_matrix(C, name, (dim, dim))
    if structure in ("tril", "diag"):
        off = np.triu(C, 1) if structure == "tril" else C - np.diag(np.diag(C))
        if np.any(off != 0.0):
            kind = "lower triangular" if structure == "tril" else "diagonal"
            raise ValueError(f"{name} must be {kind} for structure={structure!r} (it has non-zero entries outside V)")
        if require_domain and not np.all(np.diag(C) > 0):
            raise ValueError(
                f"{name} must have a strictly positive diagonal for structure={structure!r} "
                f"(min diagonal entry {np.min(np.diag(C)):.3g})"
            )
    elif structure == "sym":
        C = symmetric(C, name, "for structure='sym'")
        if require_domain:
            lam_min = np.linalg.eigvalsh(C)[0]
            if not lam_min > 0:
                raise ValueError(
                    f"{name} must be positive definite for structure='sym' (smallest eigenvalue {lam_min:.3g})"
                )
    elif require_domain:
        s = np.linalg.svd(C, compute_uv=False)
        # numerically singular: sigma_min below the rounding level of sigma_max (the numerical-rank test of LAPACK)
        if not s[-1] > dim * np.finfo(np.float64).eps * s[0]:
            raise ValueError(
                f"{name} must be invertible for structure='full' (singular values {s[0]:.3g} ... "
                f"{s[-1]:.3g}: numerically singular)"
            )
    return C


def symmetric(A: np.ndarray, name: str, context: str = "") -> np.ndarray:
    """A square matrix that must be symmetric.  Rounding-level asymmetry (as left by Q diag(lambda) Q^T or A A^T,
    at most 16 d ulp of the largest entry) is not a wrong structure and is removed by symmetrizing; anything larger
    raises."""
    asym = float(np.max(np.abs(A - A.T))) if A.size else 0.0
    if asym == 0.0:
        return A
    if asym > 16 * A.shape[0] * np.finfo(np.float64).eps * float(np.max(np.abs(A))):
        where = f" {context}" if context else ""
        raise ValueError(f"{name} must be symmetric{where} (max |{name} - {name}^T| = {asym:.3g})")
    return 0.5 * (A + A.T)


def check_labels_pm1(y, name: str = "y") -> np.ndarray:
    y = as_vector(y, name)
    bad = ~np.isin(y, (-1.0, 1.0))
    if np.any(bad):
        raise ValueError(f"{name} must contain only -1 and +1 labels; found {np.unique(y[bad])[:5]}")
    return y


def _as_float_array(x, name: str) -> np.ndarray:
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be array-like of real numbers, got {type(x).__name__}")
    try:
        a = np.asarray(x)
    except Exception as exc:  # pragma: no cover - numpy raises many types here
        raise TypeError(f"{name} must be array-like of real numbers") from exc
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if np.iscomplexobj(a):
        raise TypeError(f"{name} must be real, got a complex array")
    return np.ascontiguousarray(a, dtype=np.float64)


def _check_finite(a: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(a)):
        n_nan = int(np.isnan(a).sum())
        n_inf = int(np.isinf(a).sum())
        raise ValueError(f"{name} contains non-finite values ({n_nan} NaN, {n_inf} infinite)")


def _fmt_shape(shape) -> str:
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
