"""The protocol an implementation must satisfy to be verified, and refvi's own implementation of it.

Statements never call refvi's algorithms directly: they call ``ctx.impl``.  To verify another library, write an
object with these methods (plain NumPy arrays in and out; ``target`` is a :mod:`refvi.targets` object, whose
``logp``, ``grad_logp`` and data attributes such as ``X`` and ``y`` your code may read) and run::

    python -m refvi.verification --impl mypackage.adapter:IMPL

Methods (a missing method makes the statements that need it report ``skip``; an exception raised inside a
method is reported as ``error``):

``energy(target, m, C, U, structure) -> (gm, gC)``
    mean over the rows u of U of g_energy(u) = T*(-grad log p(C u + m)), gC projected onto V (seed 000 Eq. 6).
``entropy(target, m, C, U, structure) -> (gm, gC)``
    g_ent = g_energy + grad h (seed 000 Eq. 8).
``stl(target, m, C, U, structure) -> (gm, gC)``
    sticking-the-landing: T*(-grad log p(z) + grad_z log q_w(z)) at z = C u + m, q's parameters held fixed.
``score(target, m, C, U, structure) -> (gm, gC)``
    score-function estimator of grad l: mean of -log p(z) * grad_w log q_w(z).
``grad_neg_entropy(C, structure) -> gC``
    grad_C h = -proj_V(C^{-T}) (seed 000 Lemma 16.2).
``entropy_prox(C, gamma) -> C'``
    prox of gamma*h for lower-triangular C (seed 000 Lemma 31).
``project_wm(C, M, structure) -> C'``
    Euclidean projection onto W_M = {sigma_min(C) >= 1/sqrt(M)} for symmetric C (seed 000 Lemma 32).
``project_singular(C, M) -> C'``
    the singular-value clip of seed 002 Thm 7 for a full matrix C.
``smoothness(target) -> float`` and ``strong_convexity(target) -> float``
    the constants M and mu the implementation uses for a target.

Optimizers (the rate statements of seed 000 §3 and the dynamics of seed 002 §5.3).  The base samples are pre-drawn,
so a run is a deterministic function of its arguments and the statements can average over seeded repetitions:

``prox_sgd(target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None) -> (m, C, m_avg, C_avg)``
    Prox-SGD (seed 000 Def. 5): for t = 0..T-1 (T = len(gammas)), w^{t+1} = prox_{gamma_t h}(w^t - gamma_t g^t),
    g^t the estimator ``estimator`` (mean over the S rows of U[t], U of shape (T, S, d)), h = -log det C.  Returns
    the last iterate w^T and the average sum_t weights[t] w^t over t = 0..T (weights of length T + 1 summing to 1;
    None: the last iterate).
``proj_sgd(target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None) -> (m, C, m_avg, C_avg)``
    Proj-SGD (seed 000 Def. 8) onto W_M = {lambda_min(C) >= 1/sqrt(M)}: w^{t+1} = proj(w^t - gamma_t g^t).
``gradient_descent(grad_l, m0, C0, step, steps, method, M=None) -> (ms, Cs)``
    seed 002 §5.3 with the exact energy gradient ``grad_l(m, C) -> (gm, gC)`` (full-matrix gC) supplied by the
    caller: method "naive" (w - step (grad l + grad h), full C), "prox" (prox_{step h}(w - step grad l), lower
    triangular C, grad l projected onto tril) or "projected" (singular-value clip onto W_M of the naive step).
    Returns the trajectory w^0..w^K as arrays of shape (K+1, d) and (K+1, d, d).

``refvi.verification.examples.numpy_adapter`` ships a complete adapter written from the papers in plain NumPy.
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

METHODS = ("energy", "entropy", "stl", "score", "grad_neg_entropy", "entropy_prox", "project_wm",
           "project_singular", "smoothness", "strong_convexity", "prox_sgd", "proj_sgd", "gradient_descent")


@runtime_checkable
class Implementation(Protocol):
    name: str

    def energy(self, target, m, C, U, structure="tril"): ...
    def entropy(self, target, m, C, U, structure="sym"): ...
    def stl(self, target, m, C, U, structure="tril"): ...
    def score(self, target, m, C, U, structure="tril"): ...
    def grad_neg_entropy(self, C, structure="tril"): ...
    def entropy_prox(self, C, gamma): ...
    def project_wm(self, C, M, structure="sym"): ...
    def project_singular(self, C, M): ...
    def smoothness(self, target): ...
    def strong_convexity(self, target): ...
    def prox_sgd(self, target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None): ...
    def proj_sgd(self, target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None): ...
    def gradient_descent(self, grad_l, m0, C0, step, steps, method, M=None): ...


class RefviImplementation:
    """refvi itself, through its public API (Numba kernels underneath)."""

    name = "refvi"

    def energy(self, target, m, C, U, structure="tril"):
        from refvi import estimators
        return estimators.energy(target, m, C, U, structure)

    def entropy(self, target, m, C, U, structure="sym"):
        from refvi import estimators
        return estimators.entropy(target, m, C, U, structure)

    def stl(self, target, m, C, U, structure="tril"):
        from refvi import estimators
        return estimators.stl(target, m, C, U, structure)

    def score(self, target, m, C, U, structure="tril"):
        from refvi import estimators
        return estimators.score(target, m, C, U, structure)

    def grad_neg_entropy(self, C, structure="tril"):
        from refvi.families.gaussian import grad_neg_entropy
        return grad_neg_entropy(C, structure)

    def entropy_prox(self, C, gamma):
        from refvi import prox
        return prox.entropy_prox(C, gamma)

    def project_wm(self, C, M, structure="sym"):
        from refvi import prox
        return prox.project_wm(C, M, structure)

    def project_singular(self, C, M):
        from refvi import prox
        return prox.project_singular_values(C, M)

    def smoothness(self, target):
        return float(target.smoothness)

    def strong_convexity(self, target):
        return float(target.strong_convexity)

    def prox_sgd(self, target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None):
        from refvi.optim.prox_sgd import prox_sgd
        r = prox_sgd(target, m0, C0, gammas, U, estimator=estimator, structure=structure, weights=weights)
        return r.m, r.C, r.m_avg, r.C_avg

    def proj_sgd(self, target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        from refvi.optim.proj_sgd import proj_sgd
        r = proj_sgd(target, m0, C0, gammas, U, M, estimator=estimator, structure=structure, weights=weights)
        return r.m, r.C, r.m_avg, r.C_avg

    def gradient_descent(self, grad_l, m0, C0, step, steps, method, M=None):
        from refvi.optim.gradient_descent import gradient_descent
        r = gradient_descent(None, method=method, steps=steps, step=step, m0=m0, C0=C0, M=M, grad_l=grad_l)
        return r.ms, r.Cs


REFVI = RefviImplementation()


def load_implementation(spec: str | None):
    """Load ``module:object`` (the ``--impl`` argument); ``None`` gives refvi's own implementation."""
    if spec is None or spec == "refvi":
        return REFVI
    if ":" not in spec:
        raise ValueError(f"--impl must look like 'module:object', got {spec!r}")
    mod_name, _, obj_name = spec.partition(":")
    obj = importlib.import_module(mod_name)
    for part in obj_name.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, type):
        obj = obj()
    if not hasattr(obj, "name"):
        try:
            obj.name = spec
        except AttributeError:
            pass
    return obj
