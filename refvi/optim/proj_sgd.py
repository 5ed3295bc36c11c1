"""Proj-SGD (seed 000 Def. 8): w^{t+1} = proj_{W_M}(w^t - gamma_t g^t), g^t an unbiased estimator of grad f.

C is symmetric (V = S^d, Cor 12): W_M = {lambda_min(C) >= 1/sqrt(M)} is closed and convex (Lemma 17) and the
projection clips eigenvalues (Lemma 32).  ``structure="full"`` uses seed 002's singular-value clip instead; W_M is
then not convex (erratum E002-4) and no theorem covers the run.  Estimators of grad f: ``"entropy"`` (Eq. 8,
quadratically bounded on W_M by Thm 26) and ``"stl"`` (unbiased, not covered by the paper's bounds).
"""

from __future__ import annotations

from refvi._checks import positive_scalar
from refvi.optim._common import Combinations, SGDRun, run_sgd

ESTIMATORS = ("entropy", "stl")
COVERED = ("entropy",)
STRUCTURES = ("sym", "full")
_COMBINATIONS = Combinations(
    "Proj-SGD",
    ESTIMATORS,
    COVERED,
    STRUCTURES,
    estimates="grad f = grad l + grad h",
    misuse="grad l only (use Prox-SGD for it)",
    uncovered="estimator {estimator!r} is unbiased for grad f but seed 000 gives no quadratic bound for it (Thm 26 "
    "covers 'entropy'): the rate theorems do not cover this run",
)


def check_combination(estimator: str, structure: str) -> list[str]:
    """Raise for combinations that are not Proj-SGD; return notes for those the theory does not cover."""
    notes = _COMBINATIONS.check(estimator, structure)
    if structure == "full":
        notes.append("full C with the singular-value clip: W_M is not convex (E002-4), no theorem covers this run")
    return notes


def proj_sgd(
    target, m0, C0, gammas, U, M, *, estimator: str = "entropy", structure: str = "sym", weights=None, fast: bool = True
) -> SGDRun:
    """Run Proj-SGD onto W_M for len(gammas) steps on pre-drawn base samples U (T, S, d); see ``prox_sgd``."""
    check_combination(estimator, structure)
    M = positive_scalar(M, "M")
    return run_sgd(
        "proj", target, m0, C0, gammas, U, estimator=estimator, structure=structure, weights=weights, M=M, fast=fast
    )
