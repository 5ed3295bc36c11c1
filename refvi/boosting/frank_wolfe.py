"""Frank-Wolfe for boosting VI (seed 001 Algorithm 1 and Algorithm 3) on a
:class:`~refvi.boosting.problem.BoostingProblem`.

Algorithm 1 (affine-invariant FW), q^{t+1} = (1 - gamma_t) q^t + gamma_t s^t with the step rules

* ``"fixed"``        gamma = 2/(t+2) (Variant 0);
* ``"fixed_delta"``  gamma = 2/(delta t + 2) (the step the proof of Thm 4 needs for a delta-approximate LMO, E001-2);
* ``"curvature"``    gamma = min(1, <-grad f, s - q> / C) (Variant 1, C >= C_f required for the guarantee);
* ``"local"``        gamma = min(1, <-grad f, s - q> / (L ||s - q||^2)) (the per-direction quadratic bound, L = 1/eps);
* ``"line_search"``  gamma = argmin_{[0,1]} f((1-gamma) q + gamma s) ("line search on the original objective", [4]).

Algorithm 3 (corrective FW) re-optimizes all weights over conv(S), S = active atoms + the new one:
Variant 0 ("norm") solves the simplex QP min ||z - (q - grad f / L)||^2 (Gram matrix in closed form), Variant 1
("full") minimizes f over conv(S) by projected Newton (simplex QP sub-problems + exact line search).

Every iteration records f(q^t) and the exact FW gap g_t = max_s <grad f(q^t), q^t - s> (the certificate
f(q^t) - f* <= g_t).  The fixed step from q^0 gives closed-form weights: the atom chosen at step k has total
contribution 2(k+1)/(T(T+1)) after T steps.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np

from refvi._checks import positive_scalar
from refvi.boosting.lmo import ExactLMO, check_delta
from refvi.boosting.problem import BoostingProblem
from refvi.kernels import boosting as kb

STEPS = ("fixed", "fixed_delta", "curvature", "local", "line_search")
VARIANTS = ("norm", "full")


@dataclasses.dataclass
class BoostingResult:
    """Final weights over the atom set plus the per-iteration history (t = 0..T for f and gap, 0..T-1 otherwise)."""

    weights: np.ndarray
    f: np.ndarray
    gap: np.ndarray
    gamma: np.ndarray
    atom: np.ndarray
    method: str
    weights_history: np.ndarray | None = None

    @property
    def active(self) -> np.ndarray:
        return np.nonzero(self.weights > 0)[0]


def _progress(n, progress, desc):
    from tqdm.auto import tqdm

    return tqdm(range(n), desc=desc, disable=not (progress and sys.stderr.isatty()), leave=False)


def _check_run(problem, n_iter, name: str, rule: str, rules: tuple[str, ...]) -> int:
    """Validate the problem, the number of iterations (returned as an int) and the rule ``name=rule`` of a run."""
    if not isinstance(problem, BoostingProblem):
        raise TypeError(f"problem must be a BoostingProblem, got {type(problem).__name__}")
    if int(n_iter) != n_iter or n_iter < 0:
        raise ValueError(f"n_iter must be a non-negative integer, got {n_iter!r}")
    if rule not in rules:
        raise ValueError(f"{name} must be one of {rules}, got {rule!r}")
    return int(n_iter)


def _smoothness(problem: BoostingProblem, L: float | None) -> float:
    """The smoothness constant of the quadratic model of f (step="local", Variant 0): ``L``, by default 1/eps."""
    return 1.0 / problem.eps if L is None else positive_scalar(L, "L")


def initial_weights(problem: BoostingProblem, init=None) -> np.ndarray:
    """q^0: an atom index, a weight vector, or (None) the single atom with the smallest f(s_k)."""
    if init is None:
        T = problem.T
        fk = (T * (np.log(T) - problem.logp)) @ problem.w
        return problem.vertex(int(np.argmin(fk)))
    if np.ndim(init) == 0:
        k = int(init)
        if not 0 <= k < problem.K:
            raise ValueError(f"init atom index must be in [0, {problem.K}), got {k}")
        return problem.vertex(k)
    return problem.weights(init).copy()


def sq_dist_to_atom(problem: BoostingProblem, alpha, k: int) -> float:
    """||s_k - q||^2_{L2} from the closed-form Gram matrix on active atoms + k."""
    idx = np.union1d(np.nonzero(alpha > 0)[0], [k])
    G = problem.gram(idx)
    e = -alpha[idx]
    e[np.searchsorted(idx, k)] += 1.0
    return float(e @ G @ e)


def frank_wolfe(
    problem: BoostingProblem,
    n_iter: int,
    *,
    step: str = "fixed",
    lmo=None,
    delta: float | None = None,
    curvature: float | None = None,
    L: float | None = None,
    init=None,
    keep_weights: bool = False,
    progress: bool = False,
) -> BoostingResult:
    """Algorithm 1 of seed 001 with the step rule ``step`` (see module docstring)."""
    n_iter = _check_run(problem, n_iter, "step", step, STEPS)
    lmo = ExactLMO() if lmo is None else lmo
    if step == "fixed_delta":
        delta = check_delta(delta if delta is not None else getattr(lmo, "delta", None) or 1.0)
    if step == "curvature":
        if curvature is None:
            raise ValueError("step='curvature' needs the curvature constant C (any C >= C_f, e.g. diam^2/eps, Thm 6)")
        curvature = positive_scalar(curvature, "curvature")
    L_local = float("nan")  # the smoothness of the quadratic bound: step="local" only
    if step == "local":
        L_local = _smoothness(problem, L)
    alpha = initial_weights(problem, init)
    trace, gams, atoms = _Trace(problem, keep_weights), [], []
    for t in _progress(n_iter, progress, f"FW[{step}]"):
        sc, qv = trace.observe(alpha)
        k = int(lmo(problem, alpha, sc, qv))
        lin = qv - sc[k]  # <-grad f, s - q> >= 0 for an (approximate) LMO
        if step == "fixed":
            g = 2.0 / (t + 2.0)
        elif step == "fixed_delta":
            g = 2.0 / (delta * t + 2.0)
        elif step == "curvature":
            g = min(1.0, max(lin, 0.0) / curvature)
        elif step == "local":
            nrm = sq_dist_to_atom(problem, alpha, k)
            g = 0.0 if nrm <= 0 else min(1.0, max(lin, 0.0) / (L_local * nrm))
        else:
            g = problem._line_search(alpha, k)
        alpha = (1.0 - g) * alpha  # every rule's g is in [0, 1]: the weights stay >= 0 without clipping
        alpha[k] += g
        gams.append(g)
        atoms.append(k)
    return trace.result(alpha, np.array(gams), atoms, f"frank_wolfe[{step}]")


class _Trace:
    """What a run records at each iterate q^t: f(q^t), the FW gap and, if asked, the weights alpha^t."""

    def __init__(self, problem: BoostingProblem, keep_weights: bool):
        self.problem, self.keep_weights = problem, keep_weights
        self.f: list[float] = []
        self.gap: list[float] = []
        self.weights: list[np.ndarray] = []

    def observe(self, alpha):
        """Record q^t = alpha; return the scores <s_k, grad f> and <q^t, grad f> the step needs."""
        sc, qv = self.problem._scores(alpha)  # the loop keeps alpha on the simplex: no re-validation
        self.f.append(self.problem._f(alpha))
        self.gap.append(qv - sc.min())
        if self.keep_weights:
            self.weights.append(alpha.copy())
        return sc, qv

    def result(self, alpha, gammas, atoms, method: str) -> BoostingResult:
        """The run's result: alpha = q^T recorded last, the steps ``gammas`` and ``atoms`` chosen at each iteration."""
        self.observe(alpha)
        weights = np.array(self.weights) if self.keep_weights else None
        atoms = np.array(atoms, dtype=np.int64)
        return BoostingResult(alpha, np.array(self.f), np.array(self.gap), gammas, atoms, method, weights)


def norm_corrective_weights(problem: BoostingProblem, alpha, idx, scores, L: float) -> np.ndarray:
    """Alg 3 Variant 0 on conv(S), S = idx: argmin_{a in simplex} a^T G a - 2 a^T c, c = G alpha_S - scores_S / L."""
    problem.weights(alpha)  # K weights in the simplex (checked; the loop's own alpha is used as it is)
    alpha = np.asarray(alpha, dtype=np.float64)
    G = problem.gram(idx)
    a0 = alpha[idx].copy()
    c = G @ a0 - scores[idx] / L
    a, _ = kb.qp_simplex(2.0 * G, -2.0 * c, a0)
    return a


def fully_corrective_weights(problem: BoostingProblem, alpha, idx, tol: float = 1e-15, max_iter: int = 100):
    """Alg 3 Variant 1: argmin_{a in simplex} f(sum_i a_i s_i) over S = idx by projected Newton + exact line search."""
    problem.weights(alpha)  # K weights in the simplex (checked; the loop's own alpha is used as it is)
    alpha = np.asarray(alpha, dtype=np.float64)
    T = np.ascontiguousarray(problem.T[idx])
    w, logp = problem.w, problem.logp
    a = alpha[idx].copy()
    if a.sum() <= 0:
        a[:] = 1.0 / a.size
    a /= a.sum()
    for _ in range(max_iter):
        q = kb.mixture_on_nodes(T, a)
        g = T @ (w * (np.log(q) - logp + 1.0))
        H = (T * (w / q)) @ T.T
        H = 0.5 * (H + H.T)
        b, _ = kb.qp_simplex(H, g - H @ a, a)
        dec = float(g @ (a - b))  # Newton decrement (>= 0 up to rounding)
        if dec <= tol:
            break
        gam = kb.kl_line_search(q, kb.mixture_on_nodes(T, b), logp, w)
        if gam <= 0.0:
            break
        a = a + gam * (b - a)
        a[a < 0] = 0.0
        a /= a.sum()
    return a


def corrective_frank_wolfe(
    problem: BoostingProblem,
    n_iter: int,
    *,
    variant: str = "full",
    L: float | None = None,
    lmo=None,
    init=None,
    keep_weights: bool = False,
    progress: bool = False,
) -> BoostingResult:
    """Algorithm 3 of seed 001: Variant 0 (``"norm"``, smoothness L, default 1/eps) or Variant 1 (``"full"``)."""
    n_iter = _check_run(problem, n_iter, "variant", variant, VARIANTS)
    L_norm = float("nan")  # the smoothness of Variant 0's quadratic model: variant="norm" only
    if variant == "norm":
        L_norm = _smoothness(problem, L)
    lmo = ExactLMO() if lmo is None else lmo
    alpha = initial_weights(problem, init)
    trace, atoms = _Trace(problem, keep_weights), []
    for _ in _progress(n_iter, progress, f"FW-corrective[{variant}]"):
        sc, qv = trace.observe(alpha)
        k = int(lmo(problem, alpha, sc, qv))
        idx = np.union1d(np.nonzero(alpha > 0)[0], [k])
        if variant == "norm":
            a = norm_corrective_weights(problem, alpha, idx, sc, L_norm)
        else:
            a = fully_corrective_weights(problem, alpha, idx)
        alpha = np.zeros(problem.K)
        alpha[idx] = a
        atoms.append(k)
    return trace.result(alpha, np.full(len(atoms), np.nan), atoms, f"corrective[{variant}]")


def fixed_step_weights(chosen, n_atoms: int | None = None) -> np.ndarray:
    """Closed form of Variant 0 weights: the atom chosen at step k (k = 0..T-1) gets 2(k+1)/(T(T+1)), summed."""
    raw = np.asarray(chosen)
    if raw.ndim != 1 or (raw.size and not np.issubdtype(raw.dtype, np.integer)):
        raise TypeError(f"chosen must be a 1-D array of atom indices, got dtype {raw.dtype} and shape {raw.shape}")
    chosen = raw.astype(np.int64)
    T = chosen.shape[0]
    if T == 0:
        raise ValueError("need at least one step for the closed form (q^0 is discarded at t = 0)")
    K = int(n_atoms) if n_atoms is not None else int(chosen.max()) + 1
    if chosen.min() < 0 or chosen.max() >= K:
        raise ValueError(f"atom indices must lie in [0, {K}), got {chosen.min()} .. {chosen.max()}")
    out = np.zeros(K)
    np.add.at(out, chosen, 2.0 * (np.arange(T) + 1.0) / (T * (T + 1.0)))
    return out
