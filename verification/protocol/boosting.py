"""Seed 001 (Locatello, Khanna, Ghosh & Ratsch, *Boosting VI: an optimization perspective*): the ``boosting``
sub-adapter protocol.

The problem (Eq. 4/6) is min over q in conv(A) of f(q) = int_A q log(q / p), where A is a finite set of atoms
s_k = TN(mean_k, scale_k^2 I; box) (Gaussians truncated to the box [lo, hi] and renormalised) and p is the target
density (possibly unnormalised: then f = KL(q || p_normalised) - log Z).  A mixture q = sum_k alpha_k s_k is given
by its weight vector alpha (K,) on the simplex.  Everything an implementation receives is a plain record or array:

* :class:`BoostingInstance` (box, atoms, target, a quadrature hint); the target is a :class:`BoostingTarget`
  (``kind`` "mixture" or "cauchy" with ``params``, a vectorised ``logp`` and an additive ``log_shift``);
* runs come back as :class:`BoostingRun` records (or any object with the same attributes).

Conventions the statements rely on:

* ``scores(inst, alpha)[k] = <s_k, log q - log p>`` (the L2 gradient of f up to the constant 1, which cancels in
  every <grad f, y - q> since y and q integrate to one); the FW gap is ``alpha @ scores - min(scores)``.
* Frank-Wolfe (Algorithm 1): start at ``init`` (an atom index; default the atom with the smallest f(s_k)), at step t
  (0-based) call the LMO, then q <- (1 - gamma_t) q + gamma_t s_k.  Step rules: ``"fixed"`` 2/(t+2),
  ``"fixed_delta"`` 2/(delta t + 2), ``"curvature"`` min(1, <-grad, s - q> / C), ``"local"``
  min(1, <-grad, s - q> / (L ||s - q||^2)) (L default 1/eps), ``"line_search"`` argmin_gamma f.  The LMO is
  ``"exact"`` (argmin of the scores) or ``"adversarial"`` with ``delta``: among the atoms with
  <grad, s - q> <= delta min_s <grad, s - q> (Eq. 9), the one with the *largest* <grad, s - q> (the exact argmin when
  the gap is 0).
* Corrective Frank-Wolfe (Algorithm 3): after the LMO (``"exact"``, or ``"adversarial"`` with ``delta`` as for
  Frank-Wolfe) picks s_k, re-optimise the weights on
  S = active atoms + {k}: ``"norm"`` (Variant 0) minimises the quadratic model
  <grad f(q), a - alpha_S> + (L/2) ||sum (a - alpha_S)_i s_i||^2 over the simplex (L default 1/eps); ``"full"``
  (Variant 1) minimises f itself over the simplex on S.
* Records of a run: ``f`` and ``gap`` at t = 0..T (f(q^t) and the FW gap), ``gamma`` and ``atom`` at t = 0..T-1
  (NaN steps for corrective runs), ``weights`` = alpha^T, ``weights_history`` (T+1, K) when ``keep_weights``.

Accuracy: the statements compare f, scores and gaps with their own composite Gauss-Legendre oracle to ~1e-10;
an implementation that integrates by another rule must reach that accuracy for the instances' smooth integrands
(``inst.quadrature`` = (order, panels) per axis of the rule the oracle uses is a hint that suffices).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np


@dataclasses.dataclass(frozen=True)
class BoostingTarget:
    """The target density p on the box: ``kind`` ``"mixture"`` (params ``weights`` (J,), ``means`` (J, d),
    ``scales`` (J,): sum_j w_j N(means_j, scales_j^2 I)) or ``"cauchy"`` (params ``loc``, ``scale``; d = 1).
    ``logp(Z)`` evaluates log p + ``log_shift`` on an (n, d) batch; ``log_shift`` is an additive constant (every
    algorithm must be invariant to it; f shifts by -log_shift)."""

    kind: str
    params: dict
    logp: Callable[[np.ndarray], np.ndarray]
    log_shift: float = 0.0

    @classmethod
    def mixture(cls, weights, means, scales, log_shift: float = 0.0) -> BoostingTarget:
        w = np.asarray(weights, dtype=np.float64)
        mu = np.asarray(means, dtype=np.float64)
        mu = mu[:, None] if mu.ndim == 1 else mu
        sc = np.asarray(scales, dtype=np.float64)
        if w.ndim != 1 or mu.shape[0] != w.size or sc.shape != w.shape:
            raise ValueError(
                f"mixture target needs weights (J,), means (J, d), scales (J,); got {w.shape}, {mu.shape}, {sc.shape}"
            )
        if np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9 or np.any(sc <= 0):
            raise ValueError("mixture weights must be >= 0 and sum to one, scales > 0")
        d = mu.shape[1]

        def logp(Z):
            Z = np.asarray(Z, dtype=np.float64).reshape(-1, d)
            t = (Z[None] - mu[:, None, :]) / sc[:, None, None]
            lk = (-0.5 * t * t).sum(-1) - d * np.log(sc)[:, None] - 0.5 * d * math.log(2 * math.pi)
            top = lk.max(0)
            return top + np.log(np.exp(lk - top).T @ w) + log_shift

        return cls("mixture", dict(weights=w, means=mu, scales=sc), logp, float(log_shift))

    @classmethod
    def cauchy(cls, loc: float, scale: float, log_shift: float = 0.0) -> BoostingTarget:
        def logp(Z):
            z = np.asarray(Z, dtype=np.float64).reshape(-1)
            return -np.log(math.pi * scale * (1.0 + ((z - loc) / scale) ** 2)) + log_shift

        return cls("cauchy", dict(loc=float(loc), scale=float(scale)), logp, float(log_shift))

    def shifted(self, c: float) -> BoostingTarget:
        """The same target with log p + c."""
        p = self.params
        if self.kind == "mixture":
            return BoostingTarget.mixture(p["weights"], p["means"], p["scales"], self.log_shift + c)
        return BoostingTarget.cauchy(p["loc"], p["scale"], self.log_shift + c)


@dataclasses.dataclass(frozen=True, eq=False)
class BoostingInstance:
    """Atoms TN(means_k, scales_k^2 I; [lo, hi]) (K of them, dimension d) and a target; ``quadrature`` = (order,
    panels) per axis of the composite Gauss-Legendre rule the statements' oracle uses (a hint)."""

    lo: np.ndarray  # (d,)
    hi: np.ndarray  # (d,)
    means: np.ndarray  # (K, d)
    scales: np.ndarray  # (K,)
    target: BoostingTarget
    quadrature: tuple = (20, 20)

    @property
    def K(self) -> int:
        return self.means.shape[0]

    @property
    def d(self) -> int:
        return self.means.shape[1]

    @classmethod
    def make(cls, lo, hi, means, scales, target, quadrature=(20, 20)) -> BoostingInstance:
        lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
        hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
        means = np.asarray(means, dtype=np.float64)
        means = means.reshape(-1, lo.size)
        scales = np.broadcast_to(np.asarray(scales, dtype=np.float64), (means.shape[0],)).copy()
        return cls(lo, hi, means, scales, target, tuple(quadrature))

    @classmethod
    def grid(cls, lo, hi, stride, sigma, target, quadrature=(20, 20)) -> BoostingInstance:
        """Atoms on the lattice lo + stride * k (both ends included) in every coordinate, common scale sigma."""
        lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
        hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
        axes = [np.linspace(a, b, int(round((b - a) / stride)) + 1) for a, b in zip(lo, hi, strict=True)]
        mesh = np.meshgrid(*axes, indexing="ij")
        means = np.stack([m.ravel() for m in mesh], axis=1)
        return cls.make(lo, hi, means, sigma, target, quadrature)

    def shifted(self, c: float) -> BoostingInstance:
        """The same instance with log p + c (the shift-invariance statement)."""
        return dataclasses.replace(self, target=self.target.shifted(c))


@dataclasses.dataclass(frozen=True)
class BoostingRun:
    """A (corrective) Frank-Wolfe run of T steps."""

    weights: np.ndarray  # (K,) alpha^T
    f: np.ndarray  # (T+1,) f(q^t)
    gap: np.ndarray  # (T+1,) FW gap at q^t
    gamma: np.ndarray  # (T,) steps (NaN for corrective runs)
    atom: np.ndarray  # (T,) LMO atom index at step t
    weights_history: np.ndarray | None = None  # (T+1, K) alpha^t when keep_weights


@dataclasses.dataclass(frozen=True)
class FamilyConstants:
    """Constants of the continuous family {TN(mu, sigma^2 I; box): mu in box, sigma_min <= sigma <= sigma_max}."""

    eps: float  # inf of the densities over the family and the box (A2)
    M: float  # sup of the densities (A2)
    K: float  # min_mu P(N(mu, sigma_max^2 I) in box) (Thm 2)
    P_a: float  # P(N(a, sigma_min^2 I) in box), a a corner (Thm 8)
    diam_box: float  # Euclidean diameter of the box (the D of Thm 8)
    thm2_diam_sq: float  # 4 / (sigma_min^d (2 sqrt pi)^d K^2)
    thm8_ldiam: float  # 4 * 2^{-d/2} P_a e^{D^2 / (2 sigma_min^2)} / K^2 (corrected, E001-4)
    thm8_ldiam_printed: float  # 4 P_a e^{D^2/(2 sigma_min^2)} / (sigma_min^{d/2} 2^{d/2} K^2) (as printed)
    eps_corner_formula: float  # N(b; a, sigma_min^2 I) / P(N(a, sigma_min^2 I) in box), a, b opposite corners
    cor3_diam_sq: float  # Cor 3's bound on diam(conv A)^2: (2 M)^2 Leb(box)
    tight_diam_sq: float  # the sharper 2 M (||q - q'||^2 <= ||q||^2 + ||q'||^2 <= 2 M for densities <= M)
    thm6_curvature: float  # Thm 6's bound on C_f with Cor 3's diameter: 4 M^2 Leb(box) / eps


@runtime_checkable
class BoostingProtocol(Protocol):
    def objective(self, inst: BoostingInstance, alpha) -> float:
        """f(q) = int_A q log(q / p) for q = sum alpha_k s_k."""

    def scores(self, inst: BoostingInstance, alpha) -> np.ndarray:
        """(K,) <s_k, log q - log p> (the LMO's linear scores; see the module docstring)."""

    def gram(self, inst: BoostingInstance) -> np.ndarray:
        """(K, K) L2 inner products <s_i, s_j> = int_A s_i s_j."""

    def gap(self, inst: BoostingInstance, alpha) -> float:
        """The Frank-Wolfe duality gap g(q) = max_k <grad f(q), q - s_k> = <q, grad f> - min_k scores_k (>= f(q) - f*,
        the certificate Algorithms 1 and 3 report)."""

    def frank_wolfe(
        self,
        inst: BoostingInstance,
        n_iter: int,
        step: str = "fixed",
        *,
        lmo: str = "exact",
        delta: float | None = None,
        curvature: float | None = None,
        L: float | None = None,
        init: int | None = None,
        keep_weights: bool = False,
    ) -> BoostingRun:
        """Algorithm 1 (step rules and LMOs in the module docstring)."""

    def stochastic_lmo(
        self, inst: BoostingInstance, alpha, *, n_samples: int = 64, n_steps: int = 50, lr: float = 0.05, seed: int = 0
    ) -> int:
        """Algorithm 2 at q = alpha (atoms with one common scale): projected SGD on the mean mu of a truncated
        Gaussian atom, ``n_steps`` steps of size ``lr`` with ``n_samples`` draws each and the score-function gradient
        of Eq. (10) of E_{s_mu} log(q/p), from the best of 8 random means; returns the index of the atom whose mean is
        nearest the final mu (the quantization of §5).  Random, seeded by ``seed``."""

    def stochastic_lmo_step(self, inst: BoostingInstance, alpha, mu, Z, lr: float = 0.05) -> np.ndarray:
        """One iteration of Algorithm 2's loop at the mean ``mu`` (d,), the draws ``Z`` (S, d) of the atom k whose mean
        is nearest ``mu`` given: v_s = log q(z_s) - log p(z_s) minus the mean of the other S - 1 values
        (leave-one-out baseline), g = Eq. (10)'s (1/S) sum_s v_s grad_mu log s(z_s; mu_k, sigma_k) at atom k's mean
        (truncation normalizer included), and the new mean clip(mu - lr g, lo, hi), shape (d,)."""

    def fixed_step_weights(self, chosen, n_atoms: int) -> np.ndarray:
        """Closed form of Variant 0's weights (Algorithm 1, gamma_t = 2/(t+2), q^0 discarded at t = 0): the atom
        chosen at step k = 0..T-1 (``chosen`` of length T, repeats allowed) gets 2(k+1)/(T(T+1)), summed per atom;
        shape (n_atoms,)."""

    def corrective(
        self,
        inst: BoostingInstance,
        n_iter: int,
        variant: str = "full",
        *,
        lmo: str = "exact",
        delta: float | None = None,
        L: float | None = None,
        init: int | None = None,
        keep_weights: bool = False,
    ) -> BoostingRun:
        """Algorithm 3, Variant 0 (``"norm"``) or 1 (``"full"``); the LMO (``"exact"`` or ``"adversarial"`` with
        ``delta``) as in :meth:`frank_wolfe`."""

    def line_search(self, inst: BoostingInstance, alpha, k: int) -> float:
        """argmin over gamma in [0, 1] of f((1 - gamma) q + gamma s_k)."""

    def norm_corrective_weights(self, inst: BoostingInstance, alpha, idx, L: float) -> np.ndarray:
        """Variant 0's weights on the atoms ``idx`` (sorted indices; alpha is zero outside them)."""

    def fully_corrective_weights(self, inst: BoostingInstance, alpha, idx) -> np.ndarray:
        """Variant 1's weights on ``idx``: argmin of f over the simplex on those atoms."""

    def score_gradient(self, lo, hi, mu, sigma: float, Z, values) -> np.ndarray:
        """Eq. (10): (1/S) sum_s values_s grad_mu log TN(z_s; mu, sigma^2 I; box), the truncation normaliser's
        gradient included; Z (S, d) draws from that TN, values (S,)."""

    def grid_means(self, lo, hi, stride: float) -> np.ndarray:
        """The quantized atom means (§3, §5: the means "quantized so that the atom set is finite"): every point
        lo + stride * k (k integer, k >= 0) with lo + stride * k <= hi in each coordinate of the box [lo, hi], both
        ends included when hi - lo is a multiple of ``stride`` (to 1e-12 relative); shape (K, d), any row order."""

    def family_constants(self, lo, hi, sigma_min: float, sigma_max: float) -> FamilyConstants:
        """Constants of Thm 2 / Thm 8 for the continuous family (see :class:`FamilyConstants`)."""

    def diameter_sq(self, inst: BoostingInstance) -> float:
        """diam(A)^2 = max_{i,j} ||s_i - s_j||^2 in L2 over the atoms (Cor 3, Thm 6's L diam^2 / eps)."""

    def curvature_lower_bound(self, inst: BoostingInstance) -> float:
        """The certified lower bound max_{i != j} chi^2(s_i || s_j) = int s_i^2 / s_j - 1 on C_f over conv(A) (the
        gamma -> 0 limit of Eq. 7 at q = s_j)."""

    def truncation_optimum(self, inst: BoostingInstance) -> tuple[float, np.ndarray | None]:
        """Eq. (5): f* = KL(p_A || p_x) = -log P_{p_x}(A) (minus the target's ``log_shift``, as f), the infimum of f
        over distributions on A; and, when every component of a mixture target is an atom, the atom weights
        w_j P_j(A) / P(A) of p_A, which attain it (None otherwise)."""

    def density_bounds(self, inst: BoostingInstance) -> tuple[float, float]:
        """(eps, M) of A2: the smallest and largest value of the atom densities over the box (so every mixture q
        has eps <= q <= M on A, and Lemma 1's L = 1/eps)."""

    def mixture_logpdf(self, inst: BoostingInstance, alpha, Z) -> np.ndarray:
        """Eq. (4): log q(z) for q = sum_k alpha_k s_k at the rows of Z (n, d), shape (n,); -inf outside the box."""

    def mixture_moments(self, inst: BoostingInstance, alpha) -> tuple[np.ndarray, np.ndarray]:
        """(mean (d,), variance (d,)) per coordinate of q = sum_k alpha_k s_k (law of total variance)."""

    def mixture_norm_sq(self, inst: BoostingInstance, alpha) -> float:
        """||q||^2 = int_A q^2 = alpha^T G alpha (the quantity Lemma 1 bounds and the norm-corrective variant uses)."""

    def mixture_sample(self, inst: BoostingInstance, alpha, n: int, seed: int = 0) -> np.ndarray:
        """n independent draws (n, d) from q = sum_k alpha_k s_k by ancestral sampling (§4.2: a component k with
        probability alpha_k, then a draw from the truncated atom s_k), in random order; seeded by ``seed``."""

    def mc_mean_field(self, target, U) -> tuple[np.ndarray, np.ndarray]:
        """§5 (Figure 3), q^0 of Monte Carlo boosting: the mean-field Gaussian (m, sigma) minimising the sample
        average -(1/S) sum_s log p(m + sigma * u_s) - sum_j log sigma_j on the given draws U (S, d); ``target`` is a
        :class:`~refvi.verification.protocol.targets.TargetSpec`."""

    def mc_predictive(self, X, y, draws) -> tuple[np.ndarray, float]:
        """§5 (Figure 3)'s test metrics for Bayesian logistic regression from posterior ``draws`` (S, d): the
        predictive probabilities p(y = +1 | x_n) = (1/S) sum_s sigmoid(x_n^T w_s), shape (n,), and the mean over
        data points of log (1/S) sum_s sigmoid(y_n x_n^T w_s) (labels in {-1, +1}), stable for logits of any size."""

    def mc_boost(
        self,
        target,
        n_iter: int,
        rule: str = "corrective",
        *,
        init,
        n_samples: int = 16,
        mean_box: float = 1.0,
        seed: int = 0,
    ):
        """§5 (Figure 3): Frank-Wolfe over untruncated atoms N(mu, diag sigma^2), sigma fixed to ``init`` = (m0, s0)'s
        scales, q^0 = N(m0, diag s0^2), atom means in the box m0 +- mean_box * s0.  Each component k owns fixed draws
        z_kj = mu_k + sigma u_kj (j < ``n_samples``), and f(alpha) = sum_k alpha_k (1/S) sum_j [log q_alpha(z_kj) -
        log p(z_kj)] is the sample-average objective.  Step t adds the LMO's atom with weight gamma_t: ``"fixed"``
        2/(t+3) (t from 0: q^0 is kept), ``"line_search"`` the argmin of f on the segment, ``"corrective"`` all weights
        re-optimised over the simplex (never worse than the previous iterate).  Returns a record with ``means``
        (K, d), ``sigma`` (d,), ``draws`` (K, S, d), ``weights_history`` (alpha^0..alpha^T, alpha^t of length t+1),
        ``f`` (T+1,) = f(alpha^t) on the draws of the first t+1 components, and ``sample(n, seed, t=None)``: n
        ancestral draws (n, d) from q^T = sum_k alpha^T_k N(mu_k, diag sigma^2) (from q^t if ``t`` is given),
        reproducible by ``seed``.  Optional: ``lmo_draws`` (T, S', d), the standard-normal draws u_s on which step t's
        LMO minimised (1/S') sum_s [log q^t(mu + sigma u_s) - log p(mu + sigma u_s)] over the box; when reported,
        each atom is checked to be a local minimum of that average."""


METHODS = (
    "objective",
    "scores",
    "gram",
    "gap",
    "frank_wolfe",
    "stochastic_lmo",
    "stochastic_lmo_step",
    "fixed_step_weights",
    "corrective",
    "mc_predictive",
    "line_search",
    "norm_corrective_weights",
    "fully_corrective_weights",
    "score_gradient",
    "family_constants",
    "grid_means",
    "curvature_lower_bound",
    "diameter_sq",
    "truncation_optimum",
    "density_bounds",
    "mixture_logpdf",
    "mixture_moments",
    "mixture_norm_sq",
    "mixture_sample",
    "mc_mean_field",
    "mc_boost",
)
