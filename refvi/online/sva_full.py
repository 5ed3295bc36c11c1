"""SVA over full-covariance Gaussians (seed 003, eq. (6) with the family N(m, C C^T) of Prop. 2 and §3).

FTRL on the linearized expected losses with the KL-to-prior regularizer, prior pi = N(0, s^2 I).  The scale C is
lower triangular with a positive diagonal (theta = m + C u; the paper's upper-triangular C with covariance C^T C is
its transpose).  The argmin has a closed form: off-diagonal entries are linear in the gradient sums, each diagonal
entry is the positive root of the mean-field equation.  KL(q_mu || pi) is (1/s^2)-strongly convex in (m, C), so
Thm 2's regret bound holds with alpha = 1/s^2 and L = sqrt(2) L' (Prop. 2, corrected constant).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from refvi._checks import positive_scalar
from refvi.kernels import online as ko
from refvi.online._stream import as_stream, check_loss, check_step, first_bad_row


@dataclasses.dataclass
class FullCovResult:
    """Losses suffered at the mean before each update, the final state, and (``record=True``) the iterates: row t
    of ``M`` / ``Cs`` is the state used at round t (0-based), row T the state after the stream."""

    losses: np.ndarray
    m: np.ndarray
    C: np.ndarray
    M: np.ndarray | None = None
    Cs: np.ndarray | None = None


class SVAFull:
    """SVA (eq. 6) over N(m, C C^T): m = -eta s^2 G_m, C_ik = -eta s^2 G_ik (i > k), C_ii = s h(eta s G_ii / 2),
    G = sums of expected-loss gradients at the iterates where they were first seen; h(x) = sqrt(1 + x^2) - x.

    Parameters: d, loss in {"hinge", "squared", "absolute"} (losses of a linear predictor), eta > 0, s > 0 (prior
    scale).  The domain is unconstrained (no box)."""

    def __init__(self, d: int, loss: str = "hinge", *, eta: float, s: float = 1.0):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"d must be a positive integer, got {d!r}")
        self.d = int(d)
        self.loss = loss
        self.loss_id = check_loss(loss)
        if self.loss_id == ko.LOSS_QUADRATIC:
            raise ValueError("SVAFull supports the losses of a linear predictor: hinge, squared, absolute")
        self.eta = check_step(eta, "eta")
        self.s = positive_scalar(s, "s")
        self.m = np.zeros(self.d)
        self.C = self.s * np.eye(self.d)
        self.Gm = np.zeros(self.d)
        self.GC = np.zeros((self.d, self.d))
        self.t = 0

    def predict(self) -> np.ndarray:
        """hat theta_t: the mean of the current distribution."""
        return self.m.copy()

    def run(self, X, y, *, record: bool = False) -> FullCovResult:
        """Process the stream (X, y) in order; a ValueError names the first invalid row after the rows before it
        are processed (the learner keeps the state reached just before it)."""
        X, y = as_stream(X, y, self.d, self.loss_id)
        k, why = first_bad_row(X, y, self.loss_id)
        T = k
        losses = np.empty(T)
        M = np.empty((T + 1, self.d)) if record else np.empty((1, self.d))
        Cs = np.empty((T + 1, self.d, self.d)) if record else np.empty((1, self.d, self.d))
        n, status = ko.sva_full_run(
            self.loss_id, X[:T], y[:T], self.eta, self.s, self.m, self.C, self.Gm, self.GC, losses, record, M, Cs
        )
        self.t += int(n)
        if int(n) < T:
            raise ValueError(
                f"stream row {int(n)}: the update gives a non-finite loss, gradient or state (overflow: "
                f"rescale the data or use a smaller eta); the state after {int(n)} rows is kept"
            )
        if k < X.shape[0]:
            raise ValueError(f"stream row {k}: {why}; the state after the {k} valid rows before it is kept")
        return FullCovResult(losses, self.m.copy(), self.C.copy(), M if record else None, Cs if record else None)

    def update(self, x, y) -> float:
        """One round: returns ell_t(hat theta_t), then updates."""
        return float(self.run(np.atleast_2d(x), np.atleast_1d(y)).losses[0])
