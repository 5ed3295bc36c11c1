"""Online natural-gradient VI (seed 003, eq. (8); closed form eq. (15) with the corrected beta, erratum E003-1).

lambda_{t+1} = (1 - beta) lambda_t + beta lambda_1 - eta beta grad_mu bar L_t(mu_t), beta = alpha / (alpha + eta)
(the paper prints 1/beta = 1/alpha + 1/eta, Khan & Lin's step, equal only at eta = 1).  Mean field, prior N(0, s^2 I).
No regret bound is proved for it (bar L is not convex in expectation parameters, Prop. 1 negative control).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import positive_scalar
from refvi.kernels import online as ko
from refvi.online._stream import OnlineLearner, check_step


def beta_from_alpha(alpha: float, eta: float) -> float:
    """The corrected weight of eq. (15): stationarity of (8) gives beta = alpha / (alpha + eta)."""
    alpha = positive_scalar(alpha, "alpha")
    eta = check_step(eta, "eta")
    return alpha / (alpha + eta)


class NGVI(OnlineLearner):
    """Online NGVI, mean field.  Give either ``alpha`` (the proximal step of (8)) or ``beta`` in (0, 1] directly."""

    def __init__(
        self,
        d: int,
        loss: str = "hinge",
        *,
        eta: float = 1.0,
        alpha: float | None = None,
        beta: float | None = None,
        s: float = 1.0,
        mbox: float = np.inf,
        sbox: float = np.inf,
        H: float = 1.0,
    ):
        super().__init__(d, loss, H, eta)
        if (alpha is None) == (beta is None):
            raise ValueError("give exactly one of alpha (> 0) and beta (in (0, 1])")
        if alpha is not None:  # exactly one of them was given
            beta = beta_from_alpha(alpha, self.eta)
        beta = positive_scalar(beta, "beta")
        if beta > 1.0:
            raise ValueError(f"beta must lie in (0, 1], got {beta}")
        self.beta = beta
        self._start_at_prior(s, mbox, sbox)

    def _kernel_call(self):
        return ko.ngvi_run, (self.eta, self.beta, self.s, self.mbox, self.sbox, self.m, self.sigma)

    def _failure_reason(self, status: int) -> str:
        if status == ko.STATUS_PRECISION:
            return (
                "the NGVI precision update would be <= 0 (non-convex loss: bar L decreases in sigma^2); "
                "pass a finite sbox to floor the precision at 1/sbox^2"
            )
        return super()._failure_reason(status)
