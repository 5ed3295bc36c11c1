"""The seed 000 / 002 protocol: Gaussian-family estimators, prox, projections, constants and optimizers.

An implementation under test is any object with some of these methods (a missing method makes the statements that
need it report ``skip``, naming it; an exception raised inside a method is an ``error``).  Arrays are float64 NumPy
arrays in and out.

Parameter conventions (seed 000 §2): the variational distribution is q = N(m, C C^T) with ``m`` of shape
(d,) and ``C`` of shape (d, d), stored dense; ``structure`` in {"full", "tril", "sym", "diag"} names the subspace V
that C lives in, and every gradient with respect to C is returned *projected onto V* (seed 000 Lemmas 15, 33).
``U`` holds pre-drawn standard-normal base samples, one per row (shape (S, d)); estimators return the mean over the
rows, so a call is a deterministic function of its arguments and the statements can replay it.

``target`` is a :class:`~refvi.verification.protocol.targets.TargetSpec`: a plain record with the model's kind, its
data and hyperparameters as read-only arrays, the log joint ``logp(z)`` and its gradient ``grad_logp(z)`` as plain
callables (one point z of shape (d,) per call), and the log evidence.  Nothing in it is refvi code: re-express the
target in your framework from ``target.kind`` and ``target.params`` (densities in ``docs/protocol-core.md``), or
call its callables.  It carries no constants: ``smoothness`` / ``strong_convexity`` compute them from ``params``
("callable" targets declare theirs in ``params``), and no bound in the statements uses them (bounds take M and mu
from an independent oracle; only the constant statements compare yours with it).

Call pattern and cost (``docs/protocol-core.md``): the noise statements evaluate an estimator once per quadrature
node with S = 1 (about 2,000 - 5,000 calls per statement in the ci profile, d <= 8, a fresh target every ~200
calls); the rate statements call the optimizers a few hundred times with T up to 600.  An implementation with
per-call overhead (JIT tracing, device transfer) should cache its compiled function per ``target`` (a ``TargetSpec``
is immutable and hashable by identity: key a ``weakref.WeakKeyDictionary`` on it).
"""

from __future__ import annotations

import dataclasses
from typing import Protocol, runtime_checkable

import numpy as np

#: Every method of this protocol, in the order the docs list them.
METHODS = (
    "energy",
    "entropy",
    "stl",
    "score",
    "grad_neg_entropy",
    "entropy_prox",
    "project_wm",
    "project_singular",
    "smoothness",
    "strong_convexity",
    "noise_constants",
    "step_sizes",
    "step_range_ok",
    "average_weights",
    "prox_sgd",
    "proj_sgd",
    "gradient_descent",
    "gradient_descent_exact",
    "exact_energy",
    "base_charfun",
    "base_entropy",
    "base_moments",
    "base_atoms",
    "standardize",
    "to_base_params",
    "locscale_log_density",
    "locscale_entropy",
    "locscale_moments",
    "locscale_sample",
    "log_joint",
    "grad_log_joint",
    "gaussian_entropy",
    "gaussian_log_density",
    "exact_optimum",
    "hess_log_joint",
    "mode",
    "log_evidence",
    "frame",
    "framed_energy",
    "framed_prox_sgd",
    "fit",
    "fit_as_user",
    "fit_diagnostics",
)


@dataclasses.dataclass(frozen=True)
class FitRun:
    """An end-to-end run of :meth:`Implementation.fit`: the returned approximation (the average), the last iterate,
    the step sizes used and every iterate w^0..w^T."""

    m: np.ndarray  # (d,) the returned mean (the average of the iterates)
    C: np.ndarray  # (d, d)
    m_last: np.ndarray  # (d,) w^T
    C_last: np.ndarray
    step_sizes: np.ndarray  # (T,) gamma_0..gamma_{T-1} as run
    ms: np.ndarray  # (T+1, d) m^0..m^T
    Cs: np.ndarray  # (T+1, d, d)
    objective: np.ndarray | None = None  # optional (T+1,): the driver's Monte Carlo estimate of f(w^t) =
    objective_samples: int = 0  # E_q[-log p] - log|det C| on its own fixed base samples, and how many


@dataclasses.dataclass(frozen=True)
class UserFitRun:
    """A run of :meth:`Implementation.fit_as_user`: the returned approximation, the last iterate, the step sizes run,
    the affine frame the driver chose and the iterates it recorded."""

    m: np.ndarray  # (d,) the returned mean
    C: np.ndarray  # (d, d)
    m_last: np.ndarray  # (d,) w^T
    C_last: np.ndarray
    step_sizes: np.ndarray  # (T,) as run (in the frame's coordinates for a framed run)
    frame: tuple[np.ndarray, np.ndarray] | None  # (z0, L) of the frame the run used; None: the target's coordinates
    steps: np.ndarray  # (n,) the step indices t of the recorded iterates, 0 and T included
    ms: np.ndarray  # (n, d) the recorded m^t (in z)
    Cs: np.ndarray  # (n, d, d)
    objective: np.ndarray | None = None  # (n,) the driver's Monte Carlo estimate of f(w^t) at the recorded steps
    objective_samples: int = 0  # on how many fixed base samples
    # optional: the driver's own diagnostics of the returned q, its quarters the averages of the recorded (m^t, C^t)
    # with T/2 < t <= 3T/4 and with 3T/4 < t (000.claim-fit-diagnostics recomputes the moves and the KL from them)
    diagnostics: FitDiagnosticsRun | None = None
    # optional: whether the whole loop ran as one compiled call (refvi's fast path; its adapter reports it, and
    # 000.claim-fit-defaults requires it of refvi for a numba user model)
    compiled: bool | None = None


@dataclasses.dataclass(frozen=True)
class FitDiagnosticsRun:
    """What :meth:`Implementation.fit_diagnostics` reports about an approximation q = N(m, C C^T) of a target."""

    pareto_k: float  # PSIS k-hat of log p - log q at the draws (-inf: the log weights are constant, q = p)
    k_threshold: float  # the k-hat below which importance sampling from q is reliable, for this number of draws
    pareto_ok: bool  # pareto_k <= k_threshold
    chi2: float | None  # chi2(p || q) estimated from the smoothed weights when k-hat < 0.5, else None
    mean_bound: float | None  # sqrt(chi2): |E_p z_i - m_i| <= mean_bound sd_q,i (Cauchy-Schwarz), None with chi2
    var_bound: float | None  # sqrt(2 chi2): |Var_p z_i / sd_q,i^2 - 1| <= var_bound (+ chi2), None with chi2
    mean_move: float  # max_i |m4_i - m3_i| / sd4_i between the two quarter averages (nan without them)
    sd_move: float  # max_i |sd4_i / sd3_i - 1|
    quarter_kl: float  # KL(N(m3, C3 C3^T) || N(m4, C4 C4^T)) (nan without them)
    stationary: bool  # the moves within the implementation's stated thresholds


@runtime_checkable
class Implementation(Protocol):
    """Seed 000 (Domke, Garrigos, Gower) and seed 002 (Domke) methods.  Optional sub-adapters: ``boosting``
    (:class:`~.boosting.BoostingProtocol`, seed 001), ``online`` (:class:`~.online.OnlineProtocol`, seed 003),
    ``ngvi`` (:class:`~.ngvi.NGVIProtocol`, seed 004); optional ``capabilities`` (:class:`~.Capabilities`)."""

    name: str

    def log_joint(self, target, Z):
        """log p(z, x) at each row z of Z (S, d), every constant included: the implementation's own model of
        ``target`` (what its estimators, objective traces and users evaluate), shape (S,)."""

    def grad_log_joint(self, target, Z):
        """grad_z log p(z, x) at each row of Z: shape (S, d)."""

    def hess_log_joint(self, target, z):
        """Hess_z log p(z, x) at one point z (d,): shape (d, d) (what Laplace frames and Newton solvers use)."""

    def mode(self, target):
        """argmax_z log p(z, x), shape (d,), for "gaussian", "linear" and "logistic" targets (strongly log-concave: a
        unique maximizer; what a Laplace frame is centred on)."""

    def log_evidence(self, target):
        """log p(x) = log int p(z, x) dz of a "linear" target (conjugate: closed form), a float (seed 000 Lemma 14:
        f* = -log p(x) + const for the Gaussian family when the posterior is Gaussian)."""

    def frame(self, target, kind="laplace"):
        """The affine frame z = z0 + L x an optimizer runs in (preconditioning; not a paper result): z0 the mode of
        log p, H = -Hess log p(z0), L = chol(H^{-1}) ("laplace") or diag(H_ii^{-1/2}) ("diagonal"); returns
        (z0, L, M', mu') with M', mu' the constants the implementation uses in the frame."""

    def framed_energy(self, target, z0, L, m, C, U, structure="full"):
        """:meth:`energy` of the framed target p_x(x) = p(z0 + L x) at (m, C): (L^T gm, L^T gC) of the original's
        energy at (z0 + L m, L C) with the same base samples (projected onto ``structure``)."""

    def framed_prox_sgd(self, target, z0, L, m0, C0, gammas, U, weights=None):
        """:meth:`prox_sgd` (energy estimator, lower-triangular C) on the framed target p_x(x) = p(z0 + L x), from
        (m0, C0) in x-coordinates, on the pre-drawn U (T, S, d): returns (m^T, C^T, m_avg, C_avg) in x-coordinates,
        as :meth:`prox_sgd` does on p_x (what ``fit`` runs in a frame, here on given samples and steps)."""

    def energy(self, target, m, C, U, structure="tril"):
        """Mean over rows u of U of g_energy(u) = T*(-grad log p(C u + m)) (seed 000 Eq. 6): returns (gm, gC),
        gm = mean of -grad log p(z), gC = proj_V(mean of -grad log p(z) u^T).
        Convention: the plain mean over the rows of U, as given (never re-sampled).
        Convention: every gradient with respect to C is returned projected onto V.
        """

    def entropy(self, target, m, C, U, structure="sym"):
        """g_ent = g_energy + grad h, with h(C) = -log|det C| (seed 000 Eq. 8): (gm, gC + grad_neg_entropy(C)).
        Convention: the plain mean over the rows of U, as given (never re-sampled).
        Convention: every gradient with respect to C is returned projected onto V.
        """

    def stl(self, target, m, C, U, structure="tril"):
        """Sticking-the-landing: T*(-grad log p(z) + grad_z log q_w(z)) at z = C u + m, q's parameters held fixed
        (seed 000 §2.3).  grad_z log q(z) = -C^{-T} u.
        Convention: the plain mean over the rows of U, as given (never re-sampled).
        Convention: every gradient with respect to C is returned projected onto V.
        """

    def score(self, target, m, C, U, structure="tril"):
        """Score-function estimator of grad l: mean of -log p(z) grad_w log q_w(z) (seed 000 Def. 4 remark):
        gm = C^{-T} u, gC = proj_V(C^{-T}(u u^T - I)), each times -log p(C u + m).
        Convention: the plain mean over the rows of U, as given (never re-sampled).
        Convention: every gradient with respect to C is returned projected onto V.
        """

    def gaussian_entropy(self, C, structure="tril"):
        """The differential entropy of N(m, C C^T), C in V: (d/2)(1 + log 2 pi) + log|det C| (seed 000 Lemma 14)."""

    def gaussian_log_density(self, m, C, Z, structure="tril"):
        """log N(z; m, C C^T) at the rows of Z (n, d), shape (n,), C in V (seed 000 §2: the variational family)."""

    def grad_neg_entropy(self, C, structure="tril"):
        """grad_C h = -proj_V(C^{-T}) (seed 000 Lemma 16.2).
        Convention: every gradient with respect to C is returned projected onto V.
        """

    def entropy_prox(self, C, gamma):
        """prox_{gamma h}(C) for lower-triangular C (seed 000 Lemma 31): the diagonal entries c become
        (c + sqrt(c^2 + 4 gamma)) / 2, the rest are unchanged.  Must be accurate for c << -sqrt(gamma)."""

    def project_wm(self, C, M, structure="sym"):
        """Euclidean projection onto W_M = {C in V : sigma_min(C) >= 1/sqrt(M)} (seed 000 Lemma 32): for symmetric C,
        clip the eigenvalues from below at 1/sqrt(M); for "full", the singular-value clip."""

    def project_singular(self, C, M):
        """The singular-value clip of seed 002 Thm 7 for a full matrix C: U max(S, 1/sqrt(M)) V^T."""

    def smoothness(self, target):
        """The smoothness constant M the implementation uses for ``target`` (seed 000 Thm 21 - Cor 25, with errata
        E000-1, E000-2, E000-5 corrected): a float.  Statements compare it with an independent Hessian bound."""

    def strong_convexity(self, target):
        """The strong-convexity constant mu the implementation uses for ``target``: a float (0 if none)."""

    def step_sizes(self, rule, T, gamma=None, M=None, mu=None, a=None, L=None, A=None):
        """The step sizes gamma_0..gamma_{T-1} (step t maps w^t to w^{t+1}) of a theorem's rule, shape (T,):
        "constant" gamma; "1/(M sqrt T)" (Thm 7, Cor 11); "1/sqrt T" (Thm 10 Eq. 14, Cor 12); "thm6"
        min{mu/(2a), (1/mu)(2t+1)/(t+1)^2} (Eq. 11); "thm9" min{mu/(2a), (2/mu)(2t+1)/(t+1)^2} (Eq. 13);
        "thm27" 1/(2L) for t < 4 floor(L/mu), then (1/mu)(2t+1)/(t+1)^2; "thm6-switch" / "thm9-switch" Thm 27
        with the mappings of the proofs of Thm 6 (L = a/mu) and Thm 9 (L = a/mu, mu/2 for mu); "A log T / T"
        (Cor 30)."""

    def step_range_ok(self, theorem, gammas, M=None, mu=None, a=None, A=None):
        """Whether the steps ``gammas`` (T,) satisfy the step-size hypothesis of ``theorem``, a bool: "000.thm6"
        constant gamma <= min(mu/(2a), 1/mu); "000.thm7" constant gamma <= 1/M; "000.thm9" constant gamma <=
        min(mu/(2a), 2/mu); "000.thm10" any constant gamma; "000.cor30" gamma = A log T / T with A >= 1/mu and
        T / log T >= 2aA/mu; "002.thm6" every step <= 1/M (what an implementation checks before a run claims a
        theorem's rate)."""

    def noise_constants(self, estimator, d, M, dist_sq, L=None):
        """(a, b) of Thm 26, E||g||^2 <= a ||w - w*||^2 + b, for ``estimator`` "energy" (a = 2(d+3)M^2,
        b = a ||w* - wbar||^2) or "entropy" on W_L (a = 4(d+3)M^2, b = a ||w* - wbar||^2 + 2 d L, erratum E000-3;
        L defaults to M); ``dist_sq`` = ||w* - wbar||^2."""

    def average_weights(self, kind, T, a=None, gamma=None, tail_fraction=0.5):
        """Weights over the iterates w^0..w^T, shape (T+1,), summing to 1: "last" (w^T), "uniform" (w^1..w^T),
        "tail" (Polyak-Ruppert: uniform over the last k = max(1, ceil(tail_fraction T)) iterates w^{T-k+1}..w^T,
        tail_fraction in (0, 1], passed only for "tail"; a product within 1e-9 relative of an integer counts as that
        integer, so 7 % of 100 steps is 7 iterates although 0.07 * 100 = 7.000000000000001 in floats), "theta7"
        (Thm 7: theta^{t+1} on w^t for t = 1..T, theta = 1/(1 + 2 a gamma^2)), "theta10" (Thm 10: theta^{t+1} on
        w^t for t = 0..T-1, theta = 1/(1 + a gamma^2))."""

    def prox_sgd(self, target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None):
        """Prox-SGD (seed 000 Def. 5): for t = 0..T-1 (T = len(gammas)), w^{t+1} = prox_{gamma_t h}(w^t - gamma_t
        g^t), g^t the estimator named ``estimator`` averaged over the S rows of U[t] (U of shape (T, S, d)).
        Returns (m^T, C^T, m_avg, C_avg), the average sum_t weights[t] w^t over t = 0..T (weights of length T + 1;
        normalised to sum 1; None: the last iterate).
        Convention: step t uses the rows of U[t] (U of shape (T, S, d)).
        Convention: weights of length T + 1 over w^0..w^T; weights=None returns the last iterate twice.
        """

    def proj_sgd(self, target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        """Proj-SGD (seed 000 Def. 8) onto W_M: w^{t+1} = proj_{W_M}(w^t - gamma_t g^t); returns as prox_sgd.
        Convention: step t uses the rows of U[t] (U of shape (T, S, d)).
        Convention: weights of length T + 1 over w^0..w^T; weights=None returns the last iterate twice.
        """

    def fit(
        self, target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None, init=None
    ) -> FitRun:
        """The implementation's end-to-end driver, as a user calls it: "prox-sgd" (Def. 5: lower-triangular C, the
        energy estimator, the prox of h) or "proj-sgd" (Def. 8: symmetric C, the entropy estimator, the projection
        onto W_M with M = the target's smoothness), from ``init`` = (m0, C0) (C0 in V and invertible; None: m = 0,
        C = I), ``steps`` steps with one fresh base sample
        u_t ~ N(0, I) each (seeded by ``seed``), in the target's own coordinates (no preconditioning);
        ``step_size`` a constant, a rule name of :meth:`step_sizes` ("thm6", "thm9", "1/(M sqrt T)", ...: M and mu
        the target's, a = Thm 26's for the method's estimator, A = 1/mu for Cor 30's "A log T / T"), or None for the
        default 1/M ("prox-sgd") or 1/(2M) ("proj-sgd"), which a divergence guard may halve k times (then every step
        is the default / 2^k; a restart replays the same base samples, and each halving must follow a run that blew
        up on them);
        ``average`` "last", "uniform" (w^1..w^T), "tail" (the last ceil(T/2) iterates) or "theta" (with a constant
        step: Thm 7's weights theta^(t+1) on w^1..w^T for "prox-sgd", Thm 10's on w^0..w^(T-1) for "proj-sgd", as
        :meth:`average_weights` "theta7" / "theta10").  Returns a :class:`FitRun` with every iterate.
        ``frame="laplace"`` runs the same algorithm on the framed target p(z0 + L x) of :meth:`frame`, and
        ``frame=(z0, L)`` (any invertible L) on the frame given, with the frame's constants M' = lambda_max(L^T H L)
        (for the projection) and mu' = lambda_min(L^T H L); there the default step (``step_size=None``) is Eq. 11's
        "thm6" ("prox-sgd") or Eq. 13's "thm9" ("proj-sgd") with (M', mu') and Thm 26's a when mu' >= M'/10, else
        Cor 11's constant 1/(M' sqrt T), which a divergence guard may halve k times; both start from
        x = L^-1(m0 - z0) and the factor in V of L^-1 C0 C0^T L^-T (with no ``init``: from (0, I) in the frame) and
        report everything mapped back to z: m = z0 + L m_x and C the factor of L C_x C_x^T L^T in V.  ``method``
        "gd-prox" / "gd-projected" is seed 002 §5.3's exact gradient descent
        (:meth:`gradient_descent_exact` from (0, I), ``step_size`` a constant or None for Thm 6's largest step,
        M the target's); it returns the last iterate.  Optionally the run reports its objective trace
        (``objective``, ``objective_samples``): 000.claim-fit then checks it against the closed form within Monte
        Carlo error."""

    def fit_as_user(self, target, **options) -> UserFitRun:
        """The end-to-end driver called as a user calls it (optional; refvi's own defaults, not a paper result): with
        ``target`` and exactly the keyword ``options`` given, by their protocol names (``method``, ``steps``,
        ``step_size``, ``average``, ``seed``, ``frame``, ``init`` as in :meth:`fit`, ``samples``, the base
        samples per step, and ``M``, a smoothness constant the user gives: in a frame, the framed target's, which
        then sets the frame's step rule in place of M'), every other argument left to the driver's own default: the
        adapter passes no default of its own, only switches that report without changing the run (keep the
        iterates).  Returns a
        :class:`UserFitRun`.  What ``000.claim-fit-defaults`` holds the driver to: with no step size given, it runs
        Prox-SGD ("prox-sgd", lower-triangular C) in the Laplace frame of :meth:`frame` (reported as ``frame``) with
        Eq. 11's "thm6" steps ("proj-sgd": Eq. 13's "thm9", symmetric C) on the frame's constants at the mode, halved
        k >= 0 times by a divergence guard; with a step size given, in the target's own coordinates (``frame`` None);
        ``frame=None`` given: in the target's coordinates with the default step 1/M ("prox-sgd") or 1/(2M)
        ("proj-sgd"), halved k >= 0 times; the guard's rule both ways: each halving follows a run that blew up on the
        same base samples, and no reported run with a default step ends with its objective above
        f(w^0) + 1 + ``|f(w^0)|``/10 (within the Monte Carlo error of its own estimate); the defaults of ``method``,
        ``average`` ("tail"), ``seed`` (0) and ``samples`` (1) give the same run, bit for bit, as passing those
        values; the recorded iterates include w^0 and w^T, and every step when T <= 100."""

    def fit_diagnostics(self, target, m, C, U, quarters) -> FitDiagnosticsRun:
        """Whether a fit worked (optional; refvi's own diagnostics, not a paper result): for q = N(m, C C^T) and the
        draws z = m + C u of q at the rows u of ``U`` (S, d), the PSIS Pareto k-hat of the log importance weights
        log p(z) - log q(z) (Vehtari et al. 2024: -inf when they are constant), its threshold
        min(1 - 1/log10(S), 0.7), the chi2(p || q) estimate S sum_s w_s^2 - 1 from the normalized smoothed weights
        when k-hat < 0.5 with its bounds sqrt(chi2) (means, in sd of q) and sqrt(2 chi2) (variances); and from
        ``quarters`` (the (m, C) averages of the third and last quarter of a run, or None) the largest move of a mean
        in the last quarter's sd, of an sd relative, and the KL between the two Gaussians.
        What ``000.claim-fit-diagnostics`` checks, against ArviZ's ``psislw`` and closed forms."""

    def gradient_descent(self, grad_l, m0, C0, step, steps, method, M=None):
        """Seed 002 §5.3 with the exact energy gradient ``grad_l(m, C) -> (gm, gC)`` (full-matrix gC) supplied by
        the caller: method "naive" (w - step (grad l + grad h), full C), "prox" (prox_{step h}(w - step grad l),
        lower-triangular C, grad l projected onto tril) or "projected" (the naive step, then the singular-value clip
        onto W_M; the start is clipped too).  ``step=None`` is Thm 6's largest step: 1/M for "prox" and "naive",
        1/(2M) for "projected".  Returns the trajectory w^0..w^K as arrays of shape (K+1, d) and (K+1, d, d)."""

    def gradient_descent_exact(self, target, m0, C0, step, steps, method, M=None):
        """:meth:`gradient_descent` on ``target`` with the implementation's own exact energy gradient (what a user
        runs without supplying one): "gaussian", "linear" and "logistic" targets; same arguments and return."""

    def exact_energy(self, target, m, C):
        """The exact energy l(w) = -E_{z ~ N(m, C C^T)} log p(z, x), every constant of ``target``'s log joint
        included, and its gradient (l, grad_m l, grad_C l) with grad_C over the full matrix, for "gaussian",
        "linear" and "logistic" targets (seed 002 §6: quadratic closed forms; logistic by the ridge reduction
        E softplus(-y x^T z) = E_t softplus(-(a + beta t)), a = y x^T m, beta = ||C^T x||).  C may be singular."""

    def exact_optimum(self, target, structure="tril"):
        """The Gaussian VI optimum (m*, C*, f*) of a "gaussian", "linear" or "logistic" target: f* = min l + h with
        h = -log|det C| (the entropy constant dropped, seed 000 Lemma 14), C* in V (Cholesky factor for "tril")."""

    def base_charfun(self, base, K):
        """E exp(i K_r^T u) for u ~ ``base`` (a :class:`~.bases.BaseSpec`) and each row K_r of K (n, d): complex
        (n,) (seed 002 §3.1, the characteristic functions of O3)."""

    def base_entropy(self, base, d):
        """The differential entropy of ``base`` in dimension d (closed form), a float; discrete bases raise."""

    def base_moments(self, base, d):
        """(E u (d,), V u (d, d)) of ``base`` in dimension d."""

    def base_atoms(self, base, d):
        """(U (n, d), w (n,)): the atoms and probabilities of a discrete ``base`` ("rademacher", "two_point", or an
        affine map of one) in dimension d, the 2^d points of the product law in any order (seed 002 §3.1: every
        expectation over the base is the finite sum sum_r w_r g(U_r)); a continuous base raises ValueError."""

    def standardize(self, base, d):
        """The standardized version of ``base`` in dimension d, u = R (u0 - mu) with R = Sigma^{-1/2} symmetric
        (seed 002 §3.1), as an affine :class:`~refvi.verification.protocol.bases.BaseSpec` over a standardized law:
        over ``base`` itself, or for an affine base over its ``inner`` law with the two maps composed."""

    def to_base_params(self, m, C, base):
        """(m0, C0) such that LocScale(m0, C0, base) is the law of LocScale(m, C, standardize(base)), with the
        standardized base R (u0 - mu), R = Sigma^{-1/2} symmetric (seed 002 §3.1): m0 = m - C R mu, C0 = C R."""

    def locscale_log_density(self, base, m, C, Z):
        """log q(z) of q = LocScale(m, C, ``base``) (z = C u + m, u ~ base; seed 002 §3.1, Eq. 1) at the rows of Z
        (n, d): log s(C^{-1}(z - m)) - log|det C|, shape (n,); C (d, d) invertible; continuous bases only."""

    def locscale_entropy(self, base, C):
        """The differential entropy of LocScale(m, C, ``base``): Entropy[s] + log|det C| (any m), a float."""

    def locscale_moments(self, base, m, C):
        """(E z (d,), V z (d, d)) of LocScale(m, C, ``base``): (C E u + m, C V[u] C^T)."""

    def locscale_sample(self, base, m, C, n, seed=0):
        """n independent draws z = C u + m, u ~ ``base``, shape (n, d); seeded by ``seed``."""
