"""refvi.online: online variational inference with regret bounds (seed 003, Chérief-Abdellatif, Alquier, Khan 2019).

Every learner follows the protocol "predict with the mean, observe, update" over a data stream:
:class:`SVA` (eq. 9), :class:`SVAFull` (eq. 6 over full-covariance Gaussians), :class:`SVB` (eq. 10 / Thm 3),
:class:`NGVI` (eq. 15, corrected beta), :class:`OGA`,
:class:`OGAEL` (Algorithm 3), exact tempered Bayes :func:`ewa_1d` / :func:`ewa_2d` (Algorithm 1) by quadrature, and
:func:`run_nn` (Monte Carlo, one-hidden-layer ReLU regression network).  Closed-form Gaussian expected losses and KL
divergences are in :mod:`refvi.online.expected_losses`.  A run whose mean loss blows up beyond 10x (+10) that of
the starting mean held fixed (a step size far too large) says so in ``result.notes`` and with an
:class:`OnlineDivergenceWarning`.
"""

from refvi.online._stream import LOSSES, OnlineDivergenceWarning, OnlineLearner, OnlineResult
from refvi.online.ewa import EWAResult, ewa_1d, ewa_2d
from refvi.online.expected_losses import expected_loss, expected_loss_full, kl_gaussian, kl_meanfield, kl_prior
from refvi.online.ngvi import NGVI, beta_from_alpha
from refvi.online.nn import run_nn
from refvi.online.oga import OGA, OGAEL
from refvi.online.sva import SVA
from refvi.online.sva_full import FullCovResult, SVAFull
from refvi.online.svb import SVB

__all__ = [
    "LOSSES",
    "OnlineDivergenceWarning",
    "OnlineLearner",
    "OnlineResult",
    "EWAResult",
    "ewa_1d",
    "ewa_2d",
    "expected_loss",
    "expected_loss_full",
    "kl_gaussian",
    "kl_meanfield",
    "kl_prior",
    "NGVI",
    "beta_from_alpha",
    "OGA",
    "OGAEL",
    "SVA",
    "SVAFull",
    "FullCovResult",
    "SVB",
    "run_nn",
]
