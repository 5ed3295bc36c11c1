"""Shared oracles of the base-law statements (seed 002 §3.1): each law's characteristic function, entropy and log
density by closed forms, enumeration and ``scipy.stats``, and a random law."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from refvi.verification.oracles import charfun as cf
from refvi.verification.oracles import discrete
from refvi.verification.protocol.bases import BaseSpec
from refvi.verification.statement import scalar

LAWS = ("gaussian", "uniform", "laplace", "exponential", "rademacher", "two_point", "student_t")
_SCIPY_1D = {
    "gaussian": stats.norm(),
    "uniform": stats.uniform(-math.sqrt(3.0), 2.0 * math.sqrt(3.0)),
    "laplace": stats.laplace(scale=1.0 / math.sqrt(2.0)),
    "exponential": stats.expon(loc=-1.0),
}


def _affine(base: BaseSpec) -> tuple[BaseSpec, np.ndarray, np.ndarray]:
    """(inner, shift, scale) of an affine base (BaseSpec's constructor guarantees all three)."""
    if base.inner is None or base.shift is None or base.scale is None:
        raise ValueError(f"{base!r} is not a complete affine base")
    return base.inner, base.shift, base.scale


def _nu(base: BaseSpec) -> float:
    """The degrees of freedom of a student_t base."""
    if base.nu is None:
        raise ValueError(f"{base!r}: a student_t base needs nu")
    return base.nu


def oracle_charfun(base: BaseSpec, K: np.ndarray) -> np.ndarray:
    if base.kind == "affine":
        inner, shift, scale = _affine(base)
        return np.exp(1j * (K @ shift)) * oracle_charfun(inner, K @ scale)
    if base.kind in ("two_point", "rademacher"):
        U, w = discrete.two_point_atoms(K.shape[1], 0.5 if base.p is None else base.p)
        return np.exp(1j * (K @ U.T)) @ w
    if base.kind == "student_t" and not base.product:
        return np.array([cf.charfun("student_t", k, nu=base.nu, elliptical=True)[0] for k in K])
    return np.prod(cf.psi(base.kind, K, base.nu), axis=1)


def oracle_entropy(base: BaseSpec, d: int) -> float:
    if base.kind == "affine":
        inner, _, scale = _affine(base)
        return oracle_entropy(inner, d) + scalar(np.linalg.slogdet(scale)[1])
    if base.kind == "student_t":
        nu = _nu(base)
        if base.product:
            return d * scalar(stats.t(df=nu, scale=math.sqrt((nu - 2.0) / nu)).entropy())
        return scalar(stats.multivariate_t(shape=np.eye(d) * (nu - 2.0) / nu, df=nu).entropy())
    return d * scalar(_SCIPY_1D[base.kind].entropy())


def random_law(rng) -> BaseSpec:
    kind = LAWS[int(rng.integers(0, len(LAWS)))]
    if kind == "two_point":
        return BaseSpec(kind, p=scalar(rng.uniform(0.05, 0.95)))
    if kind == "student_t":
        return BaseSpec(kind, nu=scalar(rng.uniform(2.2, 30.0)), product=bool(rng.random() < 0.5))
    return BaseSpec(kind)


def oracle_log_density(base: BaseSpec, U: np.ndarray) -> np.ndarray:
    """log s(u) at the rows of U (n, d) by scipy.stats (continuous laws only)."""
    U = np.atleast_2d(np.asarray(U, dtype=float))
    if base.kind == "affine":
        inner, shift, scale = _affine(base)
        U0 = np.linalg.solve(scale, (U - shift).T).T
        return oracle_log_density(inner, U0) - scalar(np.linalg.slogdet(scale)[1])
    if base.kind == "student_t":
        nu, d = _nu(base), U.shape[1]
        if base.product:
            return stats.t(df=nu, scale=math.sqrt((nu - 2.0) / nu)).logpdf(U).sum(axis=1)
        return np.atleast_1d(stats.multivariate_t(loc=np.zeros(d), shape=np.eye(d) * (nu - 2.0) / nu, df=nu).logpdf(U))
    return _SCIPY_1D[base.kind].logpdf(U).sum(axis=1)


def oracle_moments(base: BaseSpec, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(E u, V u): (shift, A A^T) for an affine map of a standardized law, (0, I) for a standardized one."""
    if base.kind == "affine":
        _, shift, scale = _affine(base)
        return shift, scale @ scale.T
    return np.zeros(d), np.eye(d)
