"""Prox-SGD (seed 000 Def. 5): w^{t+1} = prox_{gamma_t h}(w^t - gamma_t g^t), g^t an unbiased estimator of grad l.

C is lower triangular (V = T^d, Cor 11) or diagonal, where h = -sum log C_ii is convex and its prox is Lemma 31.
The estimator must estimate grad l (not grad f, whose entropy part the prox already handles): ``"energy"``
(Eq. 6; quadratically bounded by Thm 26, so Thms 6, 7 and Cor 11 apply) or ``"score"`` (Eq. 4; unbiased but not
covered by the paper's theorems).
"""

from __future__ import annotations

from refvi.optim._common import Combinations, SGDRun, run_sgd

ESTIMATORS = ("energy", "score")
COVERED = ("energy",)
STRUCTURES = ("tril", "diag")
_COMBINATIONS = Combinations(
    "Prox-SGD",
    ESTIMATORS,
    COVERED,
    STRUCTURES,
    estimates="grad l",
    misuse="grad f = grad l + grad h and would count the entropy twice (use Proj-SGD for it)",
    uncovered="estimator {estimator!r} is unbiased but has no quadratic bound in seed 000 (Thm 26 covers 'energy'): "
    "the rate theorems do not cover this run",
    structure_reason=" (the prox of h is Lemma 31 on triangular C)",
)


def check_combination(estimator: str, structure: str) -> list[str]:
    """Raise for combinations that are not Prox-SGD; return notes for those the theory does not cover."""
    return _COMBINATIONS.check(estimator, structure)


def prox_sgd(
    target, m0, C0, gammas, U, *, estimator: str = "energy", structure: str = "tril", weights=None, fast: bool = True
) -> SGDRun:
    """Run Prox-SGD for len(gammas) steps on pre-drawn base samples U (T, S, d); step t uses U[t].

    ``weights`` (T + 1,) over w^0..w^T define the returned average (default: the last iterate).  Raises
    :class:`~refvi.optim.fastpath.DivergenceError` (a ValueError) naming the step and last finite state if an
    iterate stops being finite.
    """
    check_combination(estimator, structure)
    return run_sgd(
        "prox", target, m0, C0, gammas, U, estimator=estimator, structure=structure, weights=weights, fast=fast
    )
