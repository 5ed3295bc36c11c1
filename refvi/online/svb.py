"""SVB, streaming variational Bayes (seed 003, eq. (7); mean-field closed form eq. (10); projected, per-coordinate
step sizes of Thm 3)."""

from __future__ import annotations

import math

import numpy as np

from refvi._checks import as_vector, positive_scalar
from refvi.kernels import online as ko
from refvi.online._stream import OnlineLearner, check_box, check_step

SCHEDULES = ("constant", "convex", "strong")


class SVB(OnlineLearner):
    """Projected SVB: m <- Pi(m - eta_t sigma_t^2 gm), sigma <- Pi(sigma h(eta_t sigma gs / 2)), per coordinate.

    schedule="constant": eta_{t,j} = eta (eq. 10 as printed);
    schedule="convex":   eta_{t,j} = K / (sqrt(t) sigma_{t,j}^2), Thm 3 with K = D sqrt(2) / L (pass K, or D and L);
    schedule="strong":   eta_{t,j} = 2 / (H_sc t sigma_{t,j}^2), Thm 3 strongly convex case (pass H_sc).
    The experiments use schedule="convex" with K = 1.  The initial state is the prior (0, s 1) unless sigma0 is given;
    sigma0 must lie in the box [0, sbox]."""

    def __init__(
        self,
        d: int,
        loss: str = "hinge",
        *,
        schedule: str = "convex",
        eta: float | None = None,
        K: float | None = None,
        D: float | None = None,
        L: float | None = None,
        H_sc: float | None = None,
        s: float = 1.0,
        sigma0=None,
        mbox: float = np.inf,
        sbox: float = np.inf,
        H: float = 1.0,
    ):
        super().__init__(d, loss, H)
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
        self.schedule = schedule
        self.mode = SCHEDULES.index(schedule)
        self.step = 0.0
        self.H_sc = 1.0
        unused = {"constant": ("K", "D", "L", "H_sc"), "convex": ("eta", "H_sc"), "strong": ("eta", "K", "D", "L")}
        given = dict(eta=eta, K=K, D=D, L=L, H_sc=H_sc)
        extra = [n for n in unused[schedule] if given[n] is not None]
        if extra:
            raise ValueError(
                f"schedule={schedule!r} does not use {', '.join(extra)} (constant: eta; convex: K, or D "
                f"and L; strong: H_sc); it would be silently ignored"
            )
        if schedule == "constant":
            if eta is None:
                raise ValueError("schedule='constant' needs eta > 0")
            self.step = check_step(eta, "eta")
        elif schedule == "convex":
            if K is None:
                if D is None or L is None:
                    raise ValueError("schedule='convex' needs K > 0, or D > 0 and L > 0 (then K = D sqrt(2) / L)")
                K = positive_scalar(D, "D") * math.sqrt(2.0) / positive_scalar(L, "L")
            self.step = check_step(K, "K")
        else:
            if H_sc is None:
                raise ValueError("schedule='strong' needs the strong-convexity constant H_sc > 0")
            self.H_sc = positive_scalar(H_sc, "H_sc")
        self.mbox = check_box(mbox, "mbox")
        self.sbox = check_box(sbox, "sbox")
        s = positive_scalar(s, "s")
        sig = np.full(self.d, s) if sigma0 is None else as_vector(sigma0, "sigma0", self.d).copy()
        if np.any(sig < 0) or np.any(sig > self.sbox):
            raise ValueError(
                f"sigma0 must lie in the box [0, sbox = {self.sbox}] coordinatewise "
                f"(got range [{sig.min():.3g}, {sig.max():.3g}])"
            )
        if self.mode == 0 and np.any(sig == 0):
            raise ValueError("schedule='constant' needs sigma0 > 0 (the step eta sigma^2 would vanish)")
        self.m = np.zeros(self.d)
        self.sigma = sig

    def _kernel_call(self):
        # self.t: the rounds seen before this chunk (the schedules of Thm 3 count the global round)
        return ko.svb_run, (self.mode, self.step, self.H_sc, self.t, self.mbox, self.sbox, self.m, self.sigma)
