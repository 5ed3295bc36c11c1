"""Deterministic gradient descent with exact gradients (seed 002 §5.3, Thm 6, Figs 1 and 3).

Three methods on F(w) = l(w) + h(w), h = -log|det C| (entropy constant dropped):

* ``"naive"``     w <- w - lambda (grad l(w) + grad h(w)), full C (Eq. 19; no guarantee, may cycle, statement
  002.claim-naive-cycle);
* ``"prox"``      w <- prox_{lambda h}(w - lambda grad l(w)), lower-triangular C (Eq. 21, Thm 7; Thm 6 with
  lambda <= 1/M);
* ``"projected"`` w <- proj_{W_M}(w - lambda (grad l + grad h)), full C, singular-value clip (Thm 7; Thm 6 with
  lambda <= 1/(2M) -- unproven, W_M is not convex: errata E002-4).

Gradients: either the exact energy of a built-in target (:mod:`refvi.optim.exact`) or a caller's function
``grad_l(m, C) -> (gm, gC)`` (full-matrix gradient of l; it is projected onto V here).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from refvi import prox as _prox
from refvi._checks import as_vector, check_scale, positive_scalar
from refvi.optim import exact
from refvi.optim.schedules import check_steps

METHODS = ("naive", "prox", "projected")
_STRUCT = {"naive": "full", "prox": "tril", "projected": "full"}


@dataclasses.dataclass
class GDResult:
    """Trajectory of seed 002 gradient descent: ``ms`` (K+1, d), ``Cs`` (K+1, d, d), ``objective`` (K+1,) where
    the exact F is known (NaN-free: None when no exact objective exists)."""

    method: str
    step: float
    ms: np.ndarray
    Cs: np.ndarray
    objective: np.ndarray | None

    @property
    def m(self) -> np.ndarray:
        return self.ms[-1]

    @property
    def C(self) -> np.ndarray:
        return self.Cs[-1]


def gd_step(method: str, m, C, gm, gC, step: float, M: float | None = None):
    """One step of ``method`` from (m, C) with the full-matrix energy gradient (gm, gC) (no validation)."""
    if method == "prox":
        return m - step * gm, _prox.entropy_prox(np.tril(C - step * np.tril(gC)), step)
    Y = C - step * (gC - np.linalg.inv(C).T)
    if method == "naive":
        return m - step * gm, Y
    if M is None:
        raise ValueError("the projected step needs the smoothness constant M")
    return m - step * gm, _prox.project_singular_values(Y, M)


def gradient_descent(
    target=None,
    *,
    method: str = "prox",
    steps: int = 100,
    step: float | None = None,
    m0=None,
    C0=None,
    M: float | None = None,
    grad_l=None,
    theorem: bool = False,
) -> GDResult:
    """Run ``steps`` iterations of seed 002's ``method`` (see the module docstring).

    ``step`` defaults to 1/M (prox, naive; the Figs' choice) or 1/(2M) (projected).  ``M`` defaults to the target's
    smoothness.  With ``theorem=True`` the step must lie in seed 002 Thm 6's range (prox: (0, 1/M], projected:
    (0, 1/(2M)]); ``naive`` has no theorem.  A non-finite iterate or a singular C stops the run with a ValueError
    naming the step and the last finite state.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    K = check_steps(steps)
    if grad_l is None:
        if target is None:
            raise ValueError("give a target with an exact energy or a gradient function grad_l(m, C)")
        if not exact.supports(target):
            raise TypeError(f"no exact gradient for {type(target).__name__}: pass grad_l=")
        grad_l = lambda m, C: exact.energy(target, m, C)[1:]  # noqa: E731
    if M is None:
        M = None if target is None else target.smoothness
    if M is None and (step is None or method == "projected" or theorem):
        raise ValueError(f"method {method!r} needs the smoothness constant M (the target has none; pass M=)")
    M = None if M is None else positive_scalar(M, "M")
    if step is None:
        assert M is not None  # the check above raised otherwise
        step = 1.0 / (2.0 * M) if method == "projected" else 1.0 / M
    step = positive_scalar(step, "step")
    if theorem:
        if method == "naive":
            raise ValueError(
                "naive gradient descent has no convergence theorem (seed 002 Thm 6 covers prox and projected)"
            )
        assert M is not None  # the check above raised otherwise
        hi = 1.0 / M if method == "prox" else 1.0 / (2.0 * M)
        if step > hi:
            raise ValueError(
                f"seed 002 Thm 6 ({method}) needs lambda in (0, {'1/M' if method == 'prox' else '1/(2M)'}]"
                f" = (0, {hi:.6g}]; got {step:.6g}"
            )
    d = target.dim if target is not None else np.shape(m0)[0]
    m = np.zeros(d) if m0 is None else as_vector(m0, "m0", d)
    # naive GD needs C0 in the domain (invertible); prox and projected map any start into it (prox of a real
    # diagonal is positive; the projection clips singular values), so C0 = 0 is allowed there
    C = np.eye(d) if C0 is None else check_scale(C0, d, _STRUCT[method], "C0", require_domain=(method == "naive"))
    if method == "projected":
        assert M is not None  # the check above raised otherwise
        C = _prox.project_singular_values(C, M)
    ms, Cs = [m.copy()], [C.copy()]
    have_obj = target is not None and exact.supports(target)
    objs = [exact.objective(target, m, C)] if have_obj else None
    for k in range(K):
        with np.errstate(over="ignore", invalid="ignore"):
            gm, gC = (np.asarray(g, float) for g in grad_l(m, C))
            # the gradient step of C (before the prox or the projection, which refuse a non-finite matrix; a
            # non-finite m is caught with the new iterate below)
            stepped = np.all(np.isfinite(C - step * gC))
        if not stepped:
            raise ValueError(_diverged(method, k, m, C))
        m_new, C_new = gd_step(method, m, C, gm, gC, step, M)
        if (
            not (np.all(np.isfinite(m_new)) and np.all(np.isfinite(C_new)))
            or np.linalg.svd(C_new, compute_uv=False)[-1] == 0.0
        ):
            raise ValueError(_diverged(method, k, m, C))
        m, C = m_new, C_new
        ms.append(m.copy())
        Cs.append(C.copy())
        if objs is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                objs.append(exact.objective(target, m, C))
    return GDResult(method, step, np.array(ms), np.array(Cs), None if objs is None else np.array(objs))


def _diverged(method: str, k: int, m, C) -> str:
    return (
        f"{method} gradient descent diverged at step {k}: the iterate is not finite or C is singular; last finite "
        f"state m = {m}, C = {C}"
    )
