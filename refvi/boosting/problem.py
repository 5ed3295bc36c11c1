"""The boosting problem min_{q in conv(A)} f(q) = KL(q || p) (seed 001 Eq. 4 / 6) on a quadrature rule over the box.

For d <= 2 every quantity the algorithms need is a finite sum over composite Gauss-Legendre nodes z_n (weights w_n):
f(q) = sum_n w_n q_n (log q_n - log p_n), the gradient grad f(q) = log q - log p (the "+1" of the true L2 gradient and
log p(x) are constants that cancel in every <grad f, s - q>), and the linear scores
<s_k, grad f(q)> = (T (w * grad f))_k.  The algorithms are exact FW on this discretized convex problem, and the
quadrature error (~1e-13 for smooth integrands) is the floor of every reported number.

``target`` may be any object with ``logp`` on an (S, d) batch (every refvi target, :mod:`refvi.boosting.targets_1d`)
or a plain callable; log p may be unnormalized (then f = KL - log p(x)).
"""

from __future__ import annotations

import numpy as np

from refvi.boosting.atoms import AtomSet, Box
from refvi.boosting.mixtures import check_weights
from refvi.kernels import boosting as kb


def gauss_legendre_box(box: Box, order: int = 20, panels: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Tensor composite Gauss-Legendre rule on the box: (nodes (Q, d), weights (Q,)), Q = (order * panels)^d."""
    if int(order) != order or order < 1 or int(panels) != panels or panels < 1:
        raise ValueError(f"order and panels must be positive integers, got {order!r}, {panels!r}")
    x, w = np.polynomial.legendre.leggauss(int(order))
    axes, wts = [], []
    for lo, hi in zip(box.lo, box.hi, strict=True):
        edges = np.linspace(lo, hi, int(panels) + 1)
        h = 0.5 * np.diff(edges)
        mid = 0.5 * (edges[1:] + edges[:-1])
        axes.append((mid[:, None] + h[:, None] * x[None, :]).ravel())
        wts.append((h[:, None] * w[None, :]).ravel())
    mesh = np.meshgrid(*axes, indexing="ij")
    wmesh = np.meshgrid(*wts, indexing="ij")
    nodes = np.ascontiguousarray(np.stack([m.ravel() for m in mesh], axis=1))
    weights = np.ascontiguousarray(np.prod(np.stack([m.ravel() for m in wmesh], axis=1), axis=1))
    return nodes, weights


def logp_on(target, Z: np.ndarray) -> np.ndarray:
    """log p at the rows of Z from a target object (``.logp``) or a callable; checked finite on the box."""
    fn = getattr(target, "logp", target)
    if not callable(fn):
        raise TypeError(f"target must have a logp method or be callable, got {type(target).__name__}")
    dim = getattr(target, "dim", None)
    if dim is not None and dim != Z.shape[1]:
        raise ValueError(f"target dimension {dim} does not match the box dimension {Z.shape[1]}")
    try:
        out = np.asarray(fn(Z), dtype=np.float64).reshape(-1)
    except ValueError as exc:
        raise ValueError(f"the target log-density must be finite on the box (p_x(z) > 0, seed 001 §2): {exc}") from exc
    if out.shape[0] != Z.shape[0]:
        raise ValueError(f"target log-density returned {out.shape[0]} values for {Z.shape[0]} points")
    if not np.all(np.isfinite(out)):
        bad = Z[int(np.argmax(~np.isfinite(out)))]
        raise ValueError(
            f"the target log-density must be finite on the box (p_x(z) > 0, seed 001 §2); it is "
            f"{out[~np.isfinite(out)][0]} at z = {bad}"
        )
    return out


class BoostingProblem:
    """Exact (quadrature) boosting problem over a finite atom set; d <= 2 recommended (Q grows as (order*panels)^d)."""

    def __init__(self, atoms: AtomSet, target, *, order: int = 20, panels: int = 20, logp_shift: float = 0.0):
        if not isinstance(atoms, AtomSet):
            raise TypeError(f"atoms must be an AtomSet, got {type(atoms).__name__}")
        self.atoms = atoms
        self.box = atoms.box
        self.target = target
        self.nodes, self.w = gauss_legendre_box(self.box, order, panels)
        self.logp_shift = float(logp_shift)
        self.logp = logp_on(target, self.nodes) + self.logp_shift
        self.T = kb.atom_table(atoms.means, atoms.scales, self.box.lo, self.box.hi, self.nodes)
        if not np.all(self.T > 0):
            raise ValueError(
                "an atom density underflows to 0 on the box (eps below 1e-308); use larger sigma or a "
                "smaller box (A2 needs q >= eps > 0)"
            )
        self.eps, self.M = atoms.density_bounds()

    @property
    def K(self) -> int:
        return self.T.shape[0]

    def weights(self, alpha) -> np.ndarray:
        return check_weights(alpha, self.K)

    def q_nodes(self, alpha) -> np.ndarray:
        return kb.mixture_on_nodes(self.T, np.asarray(alpha, dtype=np.float64))

    def f(self, alpha) -> float:
        """f(q) = sum_n w_n q_n (log q_n - log p_n); ``alpha`` must be mixture weights (in the simplex)."""
        return self._f(self.weights(alpha))

    def _f(self, alpha) -> float:
        """:meth:`f` for weights already on the simplex (the algorithms' loops keep them there)."""
        return float(kb.kl_on_nodes(self.q_nodes(alpha), self.logp, self.w))

    def grad_nodes(self, alpha) -> np.ndarray:
        """grad f(q) on the nodes: log q - log p (constants dropped; they cancel in <grad, s - q>)."""
        return np.log(self.q_nodes(alpha)) - self.logp

    def scores(self, alpha):
        """(scores, <q, grad f>): scores_k = <s_k, grad f(q)> for every atom, by the exact-LMO kernel."""
        return self._scores(self.weights(alpha))

    def _scores(self, alpha):
        """:meth:`scores` for weights already on the simplex."""
        g = self.grad_nodes(alpha)
        q = self.q_nodes(alpha)
        v = self.w * g
        _, sc = kb.exact_lmo(self.T, v)
        return sc, float(q @ v)

    def line_search(self, alpha, k: int) -> float:
        """argmin_{gamma in [0, 1]} f((1 - gamma) q + gamma s_k) (Algorithm 1's line-search step), by the kernel."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < self.K:
            raise ValueError(f"the atom index k must be an integer in [0, {self.K}), got {k!r}")
        return self._line_search(self.weights(alpha), k)

    def _line_search(self, alpha, k: int) -> float:
        """:meth:`line_search` for weights on the simplex and a valid atom index."""
        return float(kb.kl_line_search(self.q_nodes(alpha), np.ascontiguousarray(self.T[k]), self.logp, self.w))

    def gap(self, alpha) -> float:
        """FW duality gap g(q) = max_s <grad f(q), q - s> >= f(q) - f* (weak duality; the certificate)."""
        sc, qv = self.scores(alpha)
        return float(qv - sc.min())

    def logp_at(self, Z) -> np.ndarray:
        """log p (+ the problem's shift) at arbitrary points of the box."""
        return logp_on(self.target, np.atleast_2d(np.asarray(Z, dtype=np.float64))) + self.logp_shift

    def gram(self, idx) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        A = self.atoms
        return kb.gram_matrix(A.means[idx], A.scales[idx], self.box.lo, self.box.hi)

    def vertex(self, k: int) -> np.ndarray:
        a = np.zeros(self.K)
        a[int(k)] = 1.0
        return a


def truncation_lower_bound(target, box) -> float:
    """-log P_{p_x}(A): a lower bound on f over conv(A) with equality iff q = p_A (Eq. 5)."""
    return -float(target.log_prob_box(box))


__all__ = ["BoostingProblem", "gauss_legendre_box", "logp_on", "truncation_lower_bound"]
