"""Boosting variational inference as Frank-Wolfe in L2 (seed 001: Locatello, Khanna, Ghosh, Ratsch).

Build a finite set of truncated Gaussian atoms on a box, a target, and the exact (quadrature) problem; then run
Algorithm 1 or 3::

    from refvi.boosting import AtomSet, Box, BoostingProblem, GaussianMixtureTarget, frank_wolfe, corrective_frank_wolfe
    atoms = AtomSet.grid(Box(-1, 1), stride=0.025, sigma=0.5)
    target = GaussianMixtureTarget([0.4, 0.6], [-0.5, 0.6], [0.5, 0.5])
    prob = BoostingProblem(atoms, target)
    res = corrective_frank_wolfe(prob, 10, variant="full")      # res.f[-1] -> -log P(A), res.gap certifies

Modules: :mod:`~refvi.boosting.atoms` (atoms, box, eps, M, Gram, diameter), :mod:`~refvi.boosting.mixtures`,
:mod:`~refvi.boosting.problem` (quadrature problem, f, gradient, FW gap), :mod:`~refvi.boosting.lmo` (exact,
delta-approximate, stochastic Alg 2), :mod:`~refvi.boosting.frank_wolfe` (Alg 1, Alg 3),
:mod:`~refvi.boosting.constants`
(the paper's bounds), :mod:`~refvi.boosting.targets_1d` (experiment targets), :mod:`~refvi.boosting.mc` (Monte Carlo
boosting for high-dimensional targets such as Bayesian logistic regression).
"""

from refvi.boosting.atoms import AtomSet, Box
from refvi.boosting.frank_wolfe import (
    BoostingResult,
    corrective_frank_wolfe,
    fixed_step_weights,
    frank_wolfe,
    fully_corrective_weights,
    initial_weights,
    norm_corrective_weights,
    sq_dist_to_atom,
)
from refvi.boosting.lmo import ApproxLMO, ExactLMO, StochasticLMO
from refvi.boosting.mixtures import Mixture, check_weights
from refvi.boosting.problem import BoostingProblem, gauss_legendre_box
from refvi.boosting.targets_1d import CauchyTarget, GaussianMixtureTarget

__all__ = [
    "AtomSet",
    "Box",
    "Mixture",
    "check_weights",
    "BoostingProblem",
    "gauss_legendre_box",
    "ExactLMO",
    "ApproxLMO",
    "StochasticLMO",
    "frank_wolfe",
    "corrective_frank_wolfe",
    "fixed_step_weights",
    "fully_corrective_weights",
    "norm_corrective_weights",
    "initial_weights",
    "sq_dist_to_atom",
    "BoostingResult",
    "CauchyTarget",
    "GaussianMixtureTarget",
]
