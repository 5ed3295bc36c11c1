"""refvi.ngvi: stochastic natural-gradient VI (Wu & Gardner, "Understanding stochastic natural gradient VI",
seed 004).

* :mod:`~refvi.ngvi.expfam` -- Gaussian natural / expectation / moment maps, A, A*, Bregman divergences, KL, Fisher;
* :mod:`~refvi.ngvi.blr` -- the conjugate mini-batch Bayesian linear regression problem (Example 1);
* :mod:`~refvi.ngvi.glm` -- logistic and Poisson regression (non-conjugate, §5);
* :mod:`~refvi.ngvi.estimators` -- Price (Eq. 11) and autodiff-through-Cholesky (Algorithm 1) estimators;
* :mod:`~refvi.ngvi.ngd` -- NGD in three equal forms (Lemma 1), stochastic NGD with Theorem 1's steps and average;
* :mod:`~refvi.ngvi.variance` -- the variance (12) of Def. 6, its symmetrized-KL form and Lemma 3's bound;
* :mod:`~refvi.ngvi.sgd_baseline` -- projected SGD in (m, C) with reparameterization / Price gradients (App. F).
"""

from refvi.ngvi.blr import BLRProblem, blr_problem
from refvi.ngvi.glm import GLM, logistic_model, poisson_model
from refvi.ngvi.ngd import (
    NGVIResult,
    check_step,
    draw_batches,
    md_step,
    natural_update,
    ngd_exact,
    ngd_glm,
    ngd_step,
    ngd_step_fim,
    omega_average,
    stochastic_ngd_blr,
    theorem1_steps,
)

__all__ = [
    "BLRProblem",
    "blr_problem",
    "GLM",
    "logistic_model",
    "poisson_model",
    "NGVIResult",
    "check_step",
    "draw_batches",
    "md_step",
    "natural_update",
    "ngd_exact",
    "ngd_glm",
    "ngd_step",
    "ngd_step_fim",
    "omega_average",
    "stochastic_ngd_blr",
    "theorem1_steps",
]
