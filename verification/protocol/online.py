"""Seed 003 (Chérief-Abdellatif, Alquier & Khan, *A generalization bound for online VI*): the ``online``
sub-adapter protocol.

Learners are mean-field Gaussian q_t = N(m_t, diag sigma_t^2) over theta in R^d (OGA: a point theta_t), starting at
the prior pi = N(0, s^2 I) (m = 0, sigma = s).  At round t (0-based) a learner predicts with its *current* mean,
suffers ell_t(m_t), then updates from the expected loss bar L_t(m, sigma) = E_{theta ~ q} ell_t(theta) and its
gradients (gm, gs) at the current state.  Projections are per-coordinate boxes applied after each step:
m_j in [-mbox, mbox], sigma_j in [0, sbox] (``inf`` = no box).  SVB also takes Thm 3's ball parameter sets
instead (hyper ``mball, sball``, never together with a box): after each step m is projected onto ||m|| <= mball
(scaled back to the sphere) and sigma onto {sigma >= 0, ||sigma|| <= sball} (its nonnegative part, then scaled); the
initial sigma must lie in that set.  Losses: ``"hinge"``
max(0, 1 - y <theta, x>) with y = +-1, ``"squared"`` (y - <theta, x>)^2, ``"absolute"`` ``|y - <theta, x>|``,
``"quadratic"`` H/2 ||theta - x||^2 (y unused, pass None).

The update rule of each learner and its hyperparameters are on :meth:`OnlineProtocol.run`.

``run_full(X, y, loss, eta, s)`` runs SVA (eq. 6) over full-covariance Gaussians q = N(m, C C^T), theta = m + C u with
C lower triangular and a positive diagonal (the paper's upper-triangular C with covariance C^T C, transposed),
from the prior (m = 0, C = s I), no box: m = -eta s^2 G_m, C_ik = -eta s^2 G_ik below the diagonal and C_ii =
s h(eta s G_ii / 2), G the sums of the expected-loss gradients in (m, C) at the iterates; a :class:`FullCovRun`.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol, runtime_checkable

import numpy as np


@dataclasses.dataclass(frozen=True)
class OnlineRun:
    """A learner's run over a stream of T rounds."""

    losses: np.ndarray  # (T,) ell_t at the state used in round t (the mean m_t; OGA: theta_t)
    M: np.ndarray  # (T+1, d): row t = mean used in round t, row T = the state after the stream
    S: np.ndarray | None  # (T+1, d) sigmas likewise (None for OGA)
    m: np.ndarray  # (d,) final mean (= M[T])
    sigma: np.ndarray | None  # (d,) final sigma (= S[T]; None for OGA)
    average: np.ndarray | None = None  # (T,) optional: the running mean (1/t) sum_{i<=t} losses_i (Figure 1's curves)


@dataclasses.dataclass(frozen=True)
class FullCovRun:
    """Full-covariance SVA over a stream of T rounds."""

    losses: np.ndarray  # (T,) ell_t(m_t)
    M: np.ndarray  # (T+1, d): row t = mean used in round t, row T = after the stream
    Cs: np.ndarray  # (T+1, d, d) lower-triangular scales likewise
    m: np.ndarray  # (d,) final mean
    C: np.ndarray  # (d, d) final scale


@dataclasses.dataclass(frozen=True)
class EWARun:
    """Exact EWA / tempered Bayes on a 1-D interval (Algorithm 1, eq. 2), by quadrature."""

    means: np.ndarray  # (T,) hat theta_t, the posterior mean used at round t ((T, 2) for ewa_2d)
    losses: np.ndarray  # (T,) ell_t(hat theta_t)
    log_norm: np.ndarray  # (T+1,) log N_t = log E_pi exp(-eta sum_{i<t} ell_i), t = 1..T+1 (N_1 = 1)
    mix_loss: np.ndarray  # (T,) -1/eta log E_{p_t} exp(-eta ell_t)
    nodes: np.ndarray  # (K,) quadrature nodes
    log_post: np.ndarray  # (K,) normalised log-weights of p_{T+1} on the nodes (quadrature weights included)


@runtime_checkable
class OnlineProtocol(Protocol):
    def run(self, method, X, y, loss="hinge", **hyper):
        """Run learner ``method`` over the stream (X (T, d), y (T,) or None); returns an :class:`OnlineRun` (or any
        object with the same attributes).

        The learners, ``method``, and their hyperparameters:

        * ``"sva"`` (eq. 9, FTRL form): m = Pi(-eta s^2 sum_{i<=t} gm_i), sigma = Pi(s h(eta s sum gs_i / 2)) with h(x)
          = sqrt(1 + x^2) - x; hyper ``eta, s, mbox, sbox, H``;
        * ``"svb"`` (eq. 10): per coordinate a = eta_{t,j} sigma_{t,j}^2, m <- Pi(m - a gm), sigma <- Pi(sigma h(a gs /
          (2 sigma))); ``schedule="constant"`` (a = eta sigma^2), ``"convex"`` (a = K / sqrt(t), t = 1, 2, ...; pass K,
          or Thm 3's constants D and L, then K = D sqrt(2) / L), ``"strong"`` (a = 2 / (H_sc t)); hyper ``schedule, eta,
          K, D, L, H_sc, s, sigma0, mbox, sbox, mball, sball, H``;
        * ``"ngvi"`` (eq. 15 with the corrected weight beta = alpha / (alpha + eta), erratum E003-1): 1/sigma'^2 = (1 -
          beta)/sigma^2 + beta/s^2 + eta beta gs/sigma, m' = m - beta sigma'^2 (eta gm + m/s^2), the precision floored
          at 1/sbox^2; hyper ``eta, alpha`` or ``beta``, ``s, mbox, sbox, H``;
        * ``"oga"``: theta <- Pi(theta - eta grad ell_t(theta)) (a subgradient); hyper ``eta, mbox, H``;
        * ``"ogael"`` (OGA on the expected loss): ``projection="greedy"`` (m <- Pi(m - eta gm), sigma <- Pi(sigma - eta
          gs)) or ``"lazy"`` (m = Pi(-eta sum gm), sigma = Pi(s - eta sum gs)); hyper ``eta, s, projection, mbox, sbox,
          H``.

        Convention: row t of M is the mean the learner predicts with in round t (the state before the update).
        Convention: the boxes mbox, sbox are per-coordinate projections applied after each step.
        """

    def run_full(self, X, y, loss="hinge", *, eta, s=1.0):
        """Full-covariance SVA over the stream (hinge, squared or absolute loss); returns a :class:`FullCovRun`."""

    def run_nn(self, method, X, y, h, U, **hyper):
        """The ReLU-network regression learners (one hidden layer of width ``h``, theta = (W row-major, b, v, c),
        f(x) = v . relu(W x + b) + c, squared loss; ``method`` in sva, svb, ngvi, oga, ogael with the update rules
        of their linear counterparts, SVB's a_t = K / sqrt(t), NGVI's precision floored at 1/sbox^2, all projected on
        the boxes) with Monte Carlo gradients at theta = m + sigma * u over the rows u of ``U[t]`` (T, n, dim theta);
        hyper ``eta, K, beta, s, mbox, sbox, m0`` (m0: prior and initial mean).  Returns an :class:`OnlineRun`.
        Convention: the boxes mbox, sbox are per-coordinate projections applied after each step.
        Convention: m0 is the prior mean and the start of m, clipped into the box [-mbox, mbox] first.
        """

    def nn_predict(self, theta, X, h):
        """The network of :meth:`run_nn` at parameters theta: f(x) = v . relu(W x + b) + c for every row of X (n, p),
        theta = (W (h, p) row-major, b, v, c); shape (n,)."""

    def run_adversarial(self, method, X, loss="hinge", **hyper):
        """Run against the adaptive adversary y_t = -sign(<m_t, x_t>) (+1 at 0), chosen after the learner's
        decision; returns the labels y (T,).
        Convention: row t of M is the mean the learner predicts with in round t (the state before the update).
        Convention: the boxes mbox, sbox are per-coordinate projections applied after each step.
        """

    def expected_loss(self, loss, X, y, m, sigma, H=1.0):
        """bar L_t(m, sigma) for every row of (X, y) with its gradients: (values (T,), grad_m (T, d),
        grad_sigma (T, d)); sigma >= 0 (sigma = 0: the point loss and a subgradient)."""

    def expected_loss_full(self, loss, x, y, m, C):
        """E ell(theta), theta = m + C u, u ~ N(0, I), for one point (hinge, squared, absolute): a float."""

    def kl_prior(self, m, sigma, s):
        """KL(N(m, diag sigma^2) || N(0, s^2 I))."""

    def kl_gaussian(self, m, C, mbar, Cbar):
        """KL(N(m, C C^T) || N(mbar, Cbar Cbar^T)) (the paper prints Sbar for Sbar^{-1}: erratum E003-3)."""

    def ewa_1d(self, loss, data, eta, lo, hi, log_prior=None, n_nodes=2000, breaks=()):
        """EWA with prior exp(log_prior) (uniform if None) on [lo, hi]: ``loss(nodes, D_t)`` gives the losses at the
        quadrature nodes; ``log_prior(nodes)`` is a normalised log-density on [lo, hi] (vectorised); ``breaks`` are
        the loss kinks (put panel boundaries there).  Returns an :class:`EWARun`; the statements compare means and
        normalisers with their own quadrature to ~1e-9.
        Convention: an empty stream (data = []) is a valid input: it returns no rounds and log_norm = [0] (a
        refusal is an error).
        """

    def ewa_2d(self, loss, data, eta, lo, hi, log_prior=None, n_nodes=64):
        """EWA on the box [lo_1, hi_1] x [lo_2, hi_2] (lo, hi of length 2): ``loss(nodes (K, 2), D_t)`` gives the K
        losses, ``log_prior(nodes)`` a normalised log-density on the box (uniform if None), ``n_nodes`` per axis.
        Returns an :class:`EWARun` whose ``means`` are (T, 2) and ``nodes`` (K, 2).
        """


METHODS = (
    "run",
    "run_full",
    "run_nn",
    "nn_predict",
    "run_adversarial",
    "expected_loss",
    "expected_loss_full",
    "kl_prior",
    "kl_gaussian",
    "ewa_1d",
    "ewa_2d",
)
