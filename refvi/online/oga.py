"""The two baselines of seed 003: OGA (online gradient on theta) and OGA-EL (online gradient on the
expected loss over mu = (m, sigma), Algorithm 3 / Thm 4), greedy (projected OGD) or lazy (FTRL with
||mu - mu_1||^2 / (2 eta), erratum E003-9)."""

from __future__ import annotations

import numpy as np

from refvi.kernels import online as ko
from refvi.online._stream import OnlineLearner, check_box


class OGA(OnlineLearner):
    """theta_{t+1} = clip(theta_t - eta g_t, -mbox, mbox), g_t a subgradient of ell_t at theta_t; theta_1 = 0."""

    has_sigma = False

    def __init__(self, d: int, loss: str = "hinge", *, eta: float, mbox: float = np.inf, H: float = 1.0):
        super().__init__(d, loss, H, eta)
        self.mbox = check_box(mbox, "mbox")
        self.m = np.zeros(self.d)
        self.sigma = None  # type: ignore[assignment]  # OGA keeps no sigma (has_sigma = False): nothing reads it

    def _advance(self, X, y, losses, record, M, S):
        # OGA keeps no sigma: its kernel takes no S (the base class's call passes one)
        return ko.oga_run(self.loss_id, self.H, X, y, self.eta, self.mbox, self.m, losses, record, M)


class OGAEL(OnlineLearner):
    """OGA-EL: mu_{t+1} = Pi(mu_t - eta grad bar L_t(mu_t)) (``projection="greedy"``) or
    Pi(mu_1 - eta sum_{i<=t} grad bar L_i(mu_i)) (``projection="lazy"``); mu_1 = (0, s 1) (the prior)."""

    def __init__(
        self,
        d: int,
        loss: str = "hinge",
        *,
        eta: float,
        s: float = 1.0,
        projection: str = "greedy",
        mbox: float = np.inf,
        sbox: float = np.inf,
        H: float = 1.0,
    ):
        super().__init__(d, loss, H, eta)
        if projection not in ("greedy", "lazy"):
            raise ValueError(f"projection must be 'greedy' or 'lazy', got {projection!r}")
        self.lazy = projection == "lazy"
        self._start_at_prior(s, mbox, sbox)
        self.m1, self.s1 = self.m.copy(), self.sigma.copy()
        self.Gm = np.zeros(self.d)
        self.Gs = np.zeros(self.d)

    def _kernel_call(self):
        state = (self.m1, self.s1, self.mbox, self.sbox, self.m, self.sigma, self.Gm, self.Gs)
        return ko.ogael_run, (self.eta, self.lazy, *state)
