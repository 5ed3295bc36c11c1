"""Validation and the run shared by Prox-SGD and Proj-SGD (seed 000 Defs. 5 and 8)."""

from __future__ import annotations

import dataclasses

import numpy as np

from refvi._checks import as_vector, check_scale, check_structure
from refvi.optim import fastpath


@dataclasses.dataclass
class SGDRun:
    """Result of a run on pre-drawn samples: last iterate (m, C), weighted average (m_avg, C_avg), fast-path flag."""

    m: np.ndarray
    C: np.ndarray
    m_avg: np.ndarray
    C_avg: np.ndarray
    fast_path: bool


@dataclasses.dataclass(frozen=True)
class Combinations:
    """The estimators and structures of C a method takes (``estimators`` estimate ``estimates``; any other estimator
    estimates ``misuse``; ``structure_reason`` says why these structures), and the estimators its theorems cover
    (``uncovered``: the note for another one, formatted with ``estimator``)."""

    method: str
    estimators: tuple[str, ...]
    covered: tuple[str, ...]
    structures: tuple[str, ...]
    estimates: str
    misuse: str
    uncovered: str
    structure_reason: str = ""

    def check(self, estimator: str, structure: str) -> list[str]:
        """Raise a ValueError for a combination the method does not take; return notes for those its theorems do not
        cover."""
        if estimator not in self.estimators:
            raise ValueError(
                f"{self.method} needs an estimator of {self.estimates}, one of {self.estimators}; {estimator!r} "
                f"estimates {self.misuse}"
            )
        if structure not in self.structures:
            raise ValueError(
                f"{self.method} needs C in {self.structures}{self.structure_reason}; got structure={structure!r}"
            )
        return [] if estimator in self.covered else [self.uncovered.format(estimator=estimator)]


def check_gammas(gammas, T: int | None = None) -> np.ndarray:
    g = np.ascontiguousarray(np.asarray(gammas, dtype=np.float64))
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"step sizes must be a non-empty 1-D array, got shape {g.shape}")
    if not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise ValueError("step sizes must be finite and > 0")
    if T is not None and g.size != T:
        raise ValueError(f"expected {T} step sizes, got {g.size}")
    return g


def check_base_samples(U, T: int, d: int) -> np.ndarray:
    """U must have shape (T, S, d): step t uses the S rows U[t]."""
    U = np.asarray(U, dtype=np.float64)
    if U.ndim == 2 and U.shape == (T, d):
        U = U[:, None, :]
    if U.ndim != 3 or U.shape[0] != T or U.shape[2] != d or U.shape[1] < 1:
        raise ValueError(f"base samples U must have shape (T, S, d) = ({T}, S, {d}), got {np.shape(U)}")
    if not np.all(np.isfinite(U)):
        raise ValueError("base samples U contain non-finite values")
    return np.ascontiguousarray(U)


def check_weights(weights, T: int) -> np.ndarray:
    if weights is None:
        w = np.zeros(T + 1)
        w[T] = 1.0
        return w
    w = np.ascontiguousarray(np.asarray(weights, dtype=np.float64))
    if w.shape != (T + 1,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"weights must be T + 1 = {T + 1} finite non-negative numbers with a positive sum")
    return w / w.sum()


def run_sgd(method, target, m0, C0, gammas, U, *, estimator, structure, weights=None, M=0.0, fast=True) -> SGDRun:
    check_structure(structure)
    d = target.dim
    gammas = check_gammas(gammas)
    T = gammas.size
    U = check_base_samples(U, T, d)
    w = check_weights(weights, T)
    m = as_vector(m0, "m0", d).copy()
    C = check_scale(C0, d, structure, "C0").copy()
    acc_m, acc_C = w[0] * m, w[0] * C
    status = fastpath.run(method, target, estimator, structure, m, C, U, gammas, w, acc_m, acc_C, M, fast)
    if status >= 0:
        raise fastpath.DivergenceError(status, m, C, "Prox-SGD" if method == "prox" else "Proj-SGD")
    return SGDRun(m, C, acc_m, acc_C, fast and fastpath.has_fast_path(target, estimator))
