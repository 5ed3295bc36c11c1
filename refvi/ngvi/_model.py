"""What the NGVI models share: data (X, y) and a Gaussian prior N(prior_mean, prior_cov) (seed 004, Eq. 1)."""

from __future__ import annotations

import numpy as np

from refvi.ngvi import expfam


class GaussianPriorModel:
    """Mixin for the frozen model records :class:`~refvi.ngvi.blr.BLRProblem` and :class:`~refvi.ngvi.glm.GLM`
    (fields ``X``, ``y``, ``prior_mean``, ``prior_cov``)."""

    # declared for the type checker only: the dataclasses that mix this in define the fields
    X: np.ndarray
    y: np.ndarray
    prior_mean: np.ndarray
    prior_cov: np.ndarray

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def prior_natural(self):
        """eta_p = (P^{-1} mu_p, -P^{-1}/2) of the prior (Eq. 5)."""
        return expfam.natural_from_moment(self.prior_mean, self.prior_cov)
