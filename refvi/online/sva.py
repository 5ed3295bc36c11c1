"""SVA, sequential variational approximation (seed 003, eq. (6); mean-field closed form eq. (9)).

FTRL on the linearized expected losses with the KL-to-prior regularizer; prior pi = N(0, s^2 I) = q_{mu_1}.  With a
box M = [-mbox, mbox]^d x [0, sbox]^d the argmin of (6) is the coordinatewise clip of the unconstrained one computed
from the accumulated gradient sums (lazy projection).
"""

from __future__ import annotations

import numpy as np

from refvi.kernels import online as ko
from refvi.online._stream import OnlineLearner


class SVA(OnlineLearner):
    """SVA (eq. 9): m_{t+1} = clip(-eta s^2 G_m), sigma_{t+1} = clip(s h(eta s G_sigma / 2)), G = sum of
    expected-loss gradients at the iterates where they were first seen.

    Parameters: d, loss in {"hinge", "squared", "absolute", "quadratic"}, eta > 0 (learning rate / inverse
    temperature), s > 0 (prior scale), mbox, sbox (box half-widths; inf = unconstrained; need s <= sbox), H (scale of
    the quadratic loss)."""

    def __init__(
        self,
        d: int,
        loss: str = "hinge",
        *,
        eta: float,
        s: float = 1.0,
        mbox: float = np.inf,
        sbox: float = np.inf,
        H: float = 1.0,
    ):
        super().__init__(d, loss, H, eta)
        self._start_at_prior(s, mbox, sbox)
        self.Gm = np.zeros(self.d)
        self.Gs = np.zeros(self.d)

    def _kernel_call(self):
        return ko.sva_run, (self.eta, self.s, self.mbox, self.sbox, self.m, self.sigma, self.Gm, self.Gs)
