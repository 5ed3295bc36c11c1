"""The online protocol shared by every learner of seed 003: predict with the mean, observe, update.

Input validation lives here: a stream is checked row by row; the rows before the first bad one are processed, then a
``ValueError`` names the bad row and the violated condition, and the learner keeps the state reached just before it.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable

import numpy as np

from refvi._checks import positive_scalar
from refvi._warnings import warn_at_caller
from refvi.kernels import online as ko

LOSSES = {
    "hinge": ko.LOSS_HINGE,
    "squared": ko.LOSS_SQUARED,
    "absolute": ko.LOSS_ABSOLUTE,
    "quadratic": ko.LOSS_QUADRATIC,
}
CHUNK = 20000


@dataclasses.dataclass
class OnlineResult:
    """Losses suffered at the mean before each update, the final state and (with ``record=True``) the iterates:
    row t of ``M`` / ``S`` is the state used at round t (0-based), row T the state after the stream."""

    losses: np.ndarray
    m: np.ndarray
    sigma: np.ndarray | None
    M: np.ndarray | None = None
    S: np.ndarray | None = None
    #: what went wrong without an error (a run whose losses blew up far beyond the prior mean's)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def cumulative(self) -> float:
        return float(np.sum(self.losses))

    @property
    def average(self) -> np.ndarray:
        """(1/t) sum_{i<=t} ell_i(theta_hat_i), t = 1..T (the curves of Figure 1)."""
        return np.cumsum(self.losses) / np.arange(1, self.losses.size + 1)


def check_loss(loss: str) -> int:
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}")
    return LOSSES[loss]


def check_box(value, name: str) -> float:
    """A box half-width / upper bound: > 0, +inf allowed (no constraint)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{name} must be > 0 (use inf for no constraint), got {v}")
    return v


def check_step(value, name: str = "eta") -> float:
    return positive_scalar(value, name)


def first_bad_row(X: np.ndarray, y: np.ndarray, loss_id: int) -> tuple[int, str]:
    """Index of the first invalid row and the reason (len(X), '') when every row is valid."""
    bad_x = ~np.all(np.isfinite(X), axis=1)
    bad_y = ~np.isfinite(y)
    reason = np.where(bad_x, 1, np.where(bad_y, 2, 0))
    if loss_id == ko.LOSS_HINGE:
        reason = np.where((reason == 0) & ~np.isin(y, (-1.0, 1.0)), 3, reason)
    idx = np.flatnonzero(reason)
    if idx.size == 0:
        return X.shape[0], ""
    k = int(idx[0])
    why = {
        1: "x contains a non-finite value",
        2: "y is not finite",
        3: f"hinge labels must be -1 or +1, got y = {y[k]!r}",
    }[int(reason[k])]
    return k, why


def as_stream(X, y, d: int, loss_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Shape / dtype checks of a whole stream (finiteness and labels are checked row by row by the learner)."""
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"X must be an array of shape (T, {d}), got {type(X).__name__}")
    Xa = np.asarray(X)
    if Xa.dtype == object or not (np.issubdtype(Xa.dtype, np.number) or Xa.dtype == bool) or np.iscomplexobj(Xa):
        raise TypeError(f"X must hold real numbers, got dtype {Xa.dtype}")
    Xa = np.ascontiguousarray(Xa, dtype=np.float64)
    if Xa.ndim == 1:
        Xa = Xa[None, :]
    if Xa.ndim != 2 or Xa.shape[1] != d:
        raise ValueError(f"X must have shape (T, {d}) (stream of width d = {d}), got {np.shape(X)}")
    if y is None:
        if loss_id != ko.LOSS_QUADRATIC:
            raise ValueError("y is required for the hinge, squared and absolute losses")
        ya = np.zeros(Xa.shape[0])
    else:
        ya = np.asarray(y)
        if ya.dtype == object or not (np.issubdtype(ya.dtype, np.number) or ya.dtype == bool):
            raise TypeError(f"y must hold real numbers, got dtype {ya.dtype}")
        ya = np.ascontiguousarray(np.atleast_1d(ya), dtype=np.float64)
        if ya.ndim != 1 or ya.shape[0] != Xa.shape[0]:
            raise ValueError(f"y must have shape ({Xa.shape[0]},) to match X, got {np.shape(y)}")
    return Xa, ya


class OnlineLearner:
    """Base class: subclasses hold their state and name, in ``_kernel_call()``, the compiled run of
    ``refvi.kernels.online`` that advances it and the parameters and state arrays it takes.  Every such kernel is
    called ``kernel(loss_id, H, X, y, *params_and_state, losses, record, M, S)`` on a validated chunk by
    ``_advance``; it returns (rounds completed, kernel status) and, when it stops early, leaves the state reached
    before the failing round (``_failure_reason(status)`` names the problem)."""

    has_sigma = True

    def __init__(self, d: int, loss: str, H: float, *eta: float):
        """Validate the dimension, the loss and its scale H and, for a learner with one learning rate, that rate
        ``eta`` (given as a fourth argument; a learner that sets its own steps passes none)."""
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"d must be a positive integer, got {d!r}")
        self.d = int(d)
        self.loss = loss
        self.loss_id = check_loss(loss)
        self.H = positive_scalar(H, "H")
        if eta:
            self.eta = check_step(eta[0], "eta")
        self.t = 0

    def _start_at_prior(self, s, mbox, sbox):
        """Validate the prior scale s and the boxes [-mbox, mbox]^d x [0, sbox]^d; start at the prior (m, sigma) =
        (0, s 1)."""
        self.s = positive_scalar(s, "s")
        self.mbox = check_box(mbox, "mbox")
        self.sbox = check_box(sbox, "sbox")
        if self.s > self.sbox:
            raise ValueError(f"the prior scale s = {self.s} must lie in the sigma box [0, sbox = {self.sbox}]")
        self.m = np.zeros(self.d)
        self.sigma = np.full(self.d, self.s)

    def _kernel_call(self) -> tuple[Callable[..., tuple[int, int]], tuple]:
        raise NotImplementedError  # each learner names its kernel and its arguments (see the class docstring)

    def _advance(self, X, y, losses, record, M, S) -> tuple[int, int]:
        kernel, params_and_state = self._kernel_call()
        return kernel(self.loss_id, self.H, X, y, *params_and_state, losses, record, M, S)

    # state -----------------------------------------------------------------------------------------------------
    def predict(self) -> np.ndarray:
        """hat theta_t: the mean of the current distribution (never a sample)."""
        return self.m.copy()

    def state(self) -> tuple[np.ndarray, np.ndarray | None]:
        return self.m.copy(), (self.sigma.copy() if self.has_sigma else None)

    # protocol --------------------------------------------------------------------------------------------------
    def run(self, X, y=None, *, record: bool = False, progress: bool = False) -> OnlineResult:
        """Process the stream (X, y) in order.  Raises ValueError at the first invalid row, after processing the
        rows before it (the learner then holds the state reached just before the bad row)."""
        X, y = as_stream(X, y, self.d, self.loss_id)
        k, why = first_bad_row(X, y, self.loss_id)
        T = k
        m_start = self.m.copy()
        losses = np.empty(T)
        M = np.empty((T + 1, self.d)) if record else np.empty((1, self.d))
        S = np.empty((T + 1, self.d)) if record else np.empty((1, self.d))
        bar = _progress(T, progress)
        if record and T == 0:
            M[0] = self.m
            S[0] = self.sigma if self.has_sigma else np.nan
        done = 0
        while done < T:
            stop = min(T, done + CHUNK)
            sl = slice(done, stop)
            Mc = M[done : stop + 1] if record else M
            Sc = S[done : stop + 1] if record else S
            n, status = self._advance(X[sl], y[sl], losses[sl], record, Mc, Sc)
            n = int(n)
            self.t += n
            if n < stop - done:
                raise ValueError(
                    f"stream row {done + n}: {self._failure_reason(int(status))}; the state after "
                    f"{done + n} rows is kept"
                )
            if bar is not None:
                bar.update(stop - done)
            done = stop
        if bar is not None:
            bar.close()
        if k < X.shape[0]:
            raise ValueError(f"stream row {k}: {why}; the state after the {k} valid rows before it is kept")
        m, sigma = self.state()
        notes = _blow_up_notes(self.loss_id, self.H, X[:T], y[:T], losses, m_start)
        return OnlineResult(
            losses, m, sigma, M if record else None, (S if (record and self.has_sigma) else None), notes
        )

    def update(self, x, y=None) -> float:
        """One round: returns ell_t(hat theta_t), then updates."""
        res = self.run(np.atleast_2d(x), None if y is None else np.atleast_1d(y))
        return float(res.losses[0])

    def _failure_reason(self, status: int) -> str:
        if status == ko.STATUS_NONFINITE:
            return (
                "the update gives a non-finite loss, gradient or state (overflow: rescale the data or use a "
                "smaller step size / a finite box)"
            )
        return f"update failed (kernel status {status})"


class OnlineDivergenceWarning(RuntimeWarning):
    """An online run whose losses blew up: finite, but far worse than never moving from the starting mean."""


#: a run is reported when its mean loss exceeds BLOW_UP x (that of the starting mean) + BLOW_UP
BLOW_UP = 10.0


def _blow_up_notes(loss_id, H, X, y, losses, m_start) -> list[str]:
    """A note (and an :class:`OnlineDivergenceWarning`) when the mean loss suffered is more than 10x, plus 10, that
    of predicting with the starting mean held fixed (estimated on up to 2000 rows spread over the stream): a step size
    far too large gives finite rubbish, not an error."""
    if losses.size == 0:
        return []
    rows = np.unique(np.linspace(0, X.shape[0] - 1, min(X.shape[0], 2000)).astype(np.int64))
    base = np.array([ko.point_loss(loss_id, X[t], y[t], m_start, H) for t in rows])
    mean, ref = float(np.mean(losses)), float(np.mean(base))
    if not mean > BLOW_UP * ref + BLOW_UP:
        return []
    msg = (
        f"the online run blew up: mean loss {mean:.4g} against {ref:.4g} for the starting mean held fixed (the "
        f"step size / learning rate is far too large for this stream?)"
    )
    warn_at_caller(msg, OnlineDivergenceWarning)
    return [msg]


def _progress(total: int, enabled: bool):
    if not enabled or total < CHUNK or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="online stream", unit="pt")
