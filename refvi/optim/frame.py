"""Theory-preserving preconditioning: run Prox-SGD / Proj-SGD in an affine frame z = z0 + L x.

Seed 000's guarantees (Thms 6, 7, 9, 10) hold for any target that is M-smooth and mu-strongly convex, in any
coordinates.  In the frame z = z0 + L x the target p_x(x) = p(z0 + L x) has -Hess log p_x = L^T H L, so its
constants are M', mu' of L^T H L instead of H (:class:`refvi.targets.affine.AffineTarget`), and the VI problem maps
exactly: f(z0 + L m', L C') = f_x(m', C') - log|det L|, optimum to optimum.  A frame built from the mode and the
curvature there (the Laplace frame: z0 = argmax log p, L = chol(H(z0)^{-1})) makes L^T H L = I at the mode, so on a
nearly Gaussian posterior M'/mu' is close to 1 and the theory-backed steps converge in a few thousand iterations
where 1/M in the original coordinates would need ~M/mu of them.

Frames (``refvi.fit(..., frame=...)``):

* ``"laplace"``: mode by L-BFGS on -log p, H by ``hess_logp`` when the target has it, else central differences of
  the gradient; eigenvalues of H are floored at 1e-8 lambda_max when it is not positive definite (noted);
* ``"diagonal"``: the same mode, L = diag(H_ii^{-1/2}) (cheaper, keeps correlations in the problem);
* a :class:`Frame`, or a pair ``(z0, L)`` with L invertible (lower triangular with positive diagonal keeps the
  triangular family of Prox-SGD exactly; any other L is allowed for Proj-SGD's symmetric C).

The frame's constants are *estimated*, not bounded: M' and mu' are the extreme eigenvalues of L^T H L over the mode
and ``probes`` points x ~ N(0, I) (the bulk of the Laplace approximation), by finite differences of the gradient.
So the run's guarantee is that of the theorem behind its step rule *if* those estimates hold on the region the
iterates visit; ``FitResult.notes`` says so.  ``frame=None`` runs the plain paper algorithm in the original
coordinates, unchanged.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from refvi._checks import as_generator, as_matrix, as_vector, check_scale
from refvi.targets.affine import AffineTarget

FRAMES = ("auto", "laplace", "diagonal")
_FLOOR = 1e-8


@dataclasses.dataclass
class Frame:
    """z = z0 + L x, with the estimated constants M', mu' of the framed target (None / 0 when unknown)."""

    z0: np.ndarray
    L: np.ndarray
    M: float | None = None
    mu: float = 0.0
    # lambda_max, lambda_min of L^T H L at x = 0 (the mode, in the Laplace frame): the constants of the default step
    # rule (step_constants); None: use M, mu
    M_l: float | None = None
    mu_l: float | None = None
    kind: str = "given"
    constants: str = "given"  # "estimated" (probed Hessians) or "given"
    radius: float = 1.0  # the start q = N(0, radius^2 I) in the frame (probed there)
    seconds: float = 0.0
    notes: list = dataclasses.field(default_factory=list)

    def target(self, base) -> AffineTarget:
        return AffineTarget(base, self.z0, self.L, smoothness=self.M, strong_convexity=max(self.mu, 0.0))


def _neg_hessian(target, z):
    """-Hess log p at z: ``hess_logp`` when implemented, else central differences of ``grad_logp`` (one batch)."""
    try:
        H = -np.asarray(target.hess_logp(z), dtype=np.float64)
    except NotImplementedError:
        d = z.size
        h = 1e-4 * np.maximum(1.0, np.abs(z)) if not isinstance(target, AffineTarget) else np.full(d, 1e-4)
        E = np.diag(h)
        G = np.asarray(target.grad_logp(np.vstack([z + E, z - E])), dtype=np.float64)
        H = -(G[:d] - G[d:]) / (2.0 * h[:, None])
    return 0.5 * (H + H.T)


def _objective(target):
    """z -> (-log p(z), -grad log p(z)), (inf, 0) where the target is not finite (the searches back off there)."""
    both = getattr(target, "logp_and_grad", None)

    def fun(z):
        with np.errstate(all="ignore"):
            try:
                if both is not None:
                    v, g = both(z)
                    v, g = float(v), np.asarray(g, dtype=np.float64)
                else:
                    v = float(target.logp(z))
                    g = np.asarray(target.grad_logp(z), dtype=np.float64)
            except ValueError:  # a non-finite value from the target: tell the line search to back off
                return np.inf, np.zeros_like(z)
        if not (np.isfinite(v) and np.all(np.isfinite(g))):
            return np.inf, np.zeros_like(z)
        return -v, -g

    return fun


_NEWTON_ITERATIONS = 60
_NEWTON_DONE = 1e-10  # Newton decrement g^T H^{-1} g (nats) at which the mode is taken as found
_NEWTON_STALL = 1e-8  # ... or at which a line search that finds no decrease is rounding, not a bad direction


def _newton_mode(fun, target, start):
    """Damped Newton on -log p from ``start`` with the curvature of ``_neg_hessian`` (eigenvalues taken in
    absolute value and floored, so every step descends) and backtracking; (z, iterations) once the Newton decrement
    g^T H^{-1} g is below 1e-10 nats (z within ~1e-5 sd of the Laplace approximation from the mode; the decrement
    then stalls near 1e-13 on rounding), else None (the caller falls back to L-BFGS).  On the bundled posteriors it
    needs 5 to 30 iterations where L-BFGS needs hundreds of evaluations (diamonds: ~1,000, condition number ~1e6)."""
    z = np.array(start, dtype=np.float64)
    f, g = fun(z)
    if not np.isfinite(f):
        return None
    for k in range(1, _NEWTON_ITERATIONS + 1):
        with np.errstate(all="ignore"):
            try:
                lam, Q = np.linalg.eigh(_neg_hessian(target, z))
            except (ValueError, np.linalg.LinAlgError):
                return None
        if not np.all(np.isfinite(lam)):
            return None
        lam = np.maximum(np.abs(lam), 1e-12 * max(np.max(np.abs(lam)), 1e-300))
        step = -(Q @ ((Q.T @ g) / lam))
        dec = float(-(g @ step))
        if not np.isfinite(dec):
            return None
        if dec <= _NEWTON_DONE:
            # one more full step: Newton converges quadratically there, so it takes the gradient from ~1e-5 sd to
            # rounding level (the frame's z0 is the mode, 000.claim-implementation-frame); kept only if it does not
            # climb beyond rounding and the gradient shrinks
            f_new, g_new = fun(z + step)
            if (
                np.isfinite(f_new)
                and f_new <= f + 1e-12 * max(1.0, abs(f))
                and np.linalg.norm(g_new) <= np.linalg.norm(g)
            ):
                z = z + step
            return z, k
        t = 1.0
        while t > 1e-10:
            f_new, g_new = fun(z + t * step)
            if f_new <= f - 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            return (z, k) if dec <= _NEWTON_STALL else None  # no descent: rounding, or a direction for L-BFGS
        z, f, g = z + t * step, f_new, g_new
    return None


def _mode(target, start):
    """(mode, description of the search): damped Newton first; when it fails, L-BFGS, then damped Newton again from
    where L-BFGS stopped (a descent method: its point, if it converges, is no worse than L-BFGS's)."""
    fun = _objective(target)
    found = _newton_mode(fun, target, start)
    if found is not None:
        return found[0], f"Newton ({_iterations(found[1])})"
    from scipy.optimize import minimize  # imported only when needed: it costs about 0.3 s in a fresh process

    r = minimize(
        fun,
        start,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20_000, "maxfun": 40_000, "gtol": 1e-8, "ftol": 1e-13},
    )
    if not np.all(np.isfinite(r.x)) or not np.isfinite(r.fun):
        raise ValueError(
            "the mode search for the affine frame found no finite log density; pass m0= near the "
            "posterior's bulk, or frame=None / frame=(z0, L)"
        )
    # L-BFGS stalls on condition numbers ~1e6 (|grad log p| 9e-4 on a Gaussian of condition number 1e6), so damped
    # Newton starts again from where it stopped
    polished = _newton_mode(fun, target, r.x)
    if polished is None:
        return r.x, f"L-BFGS ({_iterations(r.nit)})"
    return polished[0], f"L-BFGS ({_iterations(r.nit)}), then Newton ({_iterations(polished[1])})"


def _iterations(n: int) -> str:
    return f"{n} iteration{'' if n == 1 else 's'}"


def find_frame(
    target, kind: str = "laplace", *, start=None, probes: int = 8, seed: int = 0, radius: float | None = None
) -> Frame:
    """The Laplace (or diagonal) frame of ``target`` and its estimated constants (see the module docstring)."""
    if kind not in ("laplace", "diagonal"):
        raise ValueError(f"frame kind must be 'laplace' or 'diagonal', got {kind!r}")
    t0 = time.perf_counter()
    d = target.dim
    start = np.zeros(d) if start is None else as_vector(start, "m0", d)
    z0, how = _mode(target, start)
    t_mode = time.perf_counter() - t0
    notes = []
    gnorm = float(np.linalg.norm(target.grad_logp(z0)))
    H = _neg_hessian(target, z0)
    lam, Q = np.linalg.eigh(H)
    floor = _FLOOR * max(abs(lam[-1]), 1e-300)
    if lam[0] <= floor:
        notes.append(
            f"the Hessian of -log p at the mode search's end is not positive definite (smallest eigenvalue "
            f"{lam[0]:.3g}); its eigenvalues were floored at {floor:.3g} to build the frame"
        )
    lam = np.maximum(lam, floor)
    if kind == "laplace":
        L = np.linalg.cholesky((Q / lam) @ Q.T)
    else:
        L = np.diag(1.0 / np.sqrt(np.maximum(np.diag(H), floor)))
    frame = Frame(z0, L, kind=kind, constants="estimated")
    at = AffineTarget(target, z0, L)
    radii = (1.0, 0.1) if radius is None else (float(radius),)
    for r in radii:
        frame.M, frame.mu, frame.M_l, frame.mu_l = _probe(at, probes, seed, r)
        frame.radius = r
        if frame.mu > 0:
            break
    frame.seconds = time.perf_counter() - t0
    notes.insert(
        0,
        f"{kind} frame: mode found by {how[:-1]}, |grad log p| = {gnorm:.2g}), "
        f"curvature eigenvalues {lam[0]:.3g} .. {lam[-1]:.3g} (condition number {lam[-1] / lam[0]:.3g}); "
        f"in the frame M' = {frame.M:.3g}, mu' = {frame.mu:.3g}, estimated from the Hessian at the mode "
        f"and {int(probes)} points x ~ N(0, {frame.radius:g}^2 I), not bounded; frame search "
        f"{1e3 * frame.seconds:.1f} ms (mode {1e3 * t_mode:.1f} ms)",
    )
    if frame.radius < 1.0:
        notes.append(
            f"-log p is not convex within one Laplace sd of the mode: the run starts from the narrower "
            f"q = N(0, {frame.radius:g}^2 I) in the frame, where the constants were probed; the iterates "
            f"may leave that region, where the estimates need not hold"
        )
    if frame.mu <= 0:
        notes.append(
            "-log p is not convex at some probed point (mu' <= 0): seed 000's rates need convexity, so the "
            "run has no convergence guarantee; the result is a stationary point of the VI objective"
        )
    frame.notes = notes
    return frame


def _probe(at, probes, seed, radius):
    """(max lambda_max, min lambda_min) of -Hess log p_x over x = 0 and ``probes`` points radius * N(0, I), then
    (lambda_max, lambda_min) at x = 0 alone (None, None when the Hessian there is not finite)."""
    d = at.dim
    rng = as_generator(seed, "seed")
    pts = np.vstack([np.zeros((1, d)), radius * rng.standard_normal((int(probes), d))])
    lo, hi = math.inf, -math.inf
    at0 = None
    for x in pts:
        with np.errstate(all="ignore"):
            try:
                H = _neg_hessian(at, x)
                ev = np.linalg.eigvalsh(H)
            except ValueError:
                continue
        if np.all(np.isfinite(ev)):
            lo, hi = min(lo, ev[0]), max(hi, ev[-1])
            if at0 is None and not np.any(x):
                at0 = (ev[0], ev[-1])
    if not math.isfinite(hi) or hi <= 0:
        raise ValueError(
            "could not estimate the curvature of the target in the affine frame (no finite, positive "
            "Hessian at the probed points); pass frame=(z0, L) and M=, or frame=None"
        )
    if at0 is None:
        return float(hi), float(lo), None, None
    return float(hi), float(lo), float(at0[1]), float(at0[0])


def as_frame(spec, target, *, start=None, seed: int = 0) -> Frame:
    """A :class:`Frame` from ``spec``: "laplace" / "diagonal" (found), a Frame, or a pair (z0, L) (given)."""
    if isinstance(spec, Frame):
        return spec
    if isinstance(spec, str):
        if spec not in FRAMES:
            raise ValueError(f"frame must be one of {FRAMES}, None, a Frame or a pair (z0, L); got {spec!r}")
        return find_frame(target, "laplace" if spec == "auto" else spec, start=start, seed=seed)
    if isinstance(spec, tuple) and len(spec) == 2:
        d = target.dim
        z0, L = as_vector(spec[0], "frame z0", d), as_matrix(spec[1], "frame L", (d, d))
        at = AffineTarget(target, z0, L)  # validates invertibility
        M, mu, M_l, mu_l = _probe(at, 8, seed, 1.0)
        return Frame(
            z0.copy(),
            L.copy(),
            M=M,
            mu=mu,
            M_l=M_l,
            mu_l=mu_l,
            kind="given",
            constants="estimated",
            notes=[
                f"user-supplied frame (z0, L): M' = {M:.3g}, mu' = {mu:.3g} estimated from the Hessian at "
                f"x = 0 and 8 points x ~ N(0, I), not bounded"
            ],
        )
    raise TypeError(f"frame must be one of {FRAMES}, None, a Frame or a pair (z0, L); got {type(spec).__name__}")


def wants_frame(target, frame, *, method, M, step_size, steps) -> bool:
    """Whether ``refvi.fit`` runs in a frame.  ``frame="auto"`` (the default) does so for Prox-SGD / Proj-SGD with
    the default step (no ``step_size``, no ``M``), whatever the target: the default step is Thm 6's / Thm 9's rule,
    whose constant phase mu/(2a), a = 2(d+3)M^2, is ~1/(4(d+3)) steps of the frame when M'/mu' ~ 1 but
    1/(4(d+3) M kappa) in coordinates where the condition number is kappa (kappa = 250 for a linear regression with
    d = 400, N = 500).  Any other frame value forces a frame, ``None`` never (the plain paper algorithm)."""
    if frame is None:
        return False
    auto = isinstance(frame, str) and frame == "auto"
    if method not in ("prox-sgd", "proj-sgd"):
        if auto:
            return False
        raise ValueError(f"an affine frame applies to 'prox-sgd' and 'proj-sgd', not {method!r}")
    if not auto:
        return True
    return step_size is None and M is None


def step_constants(frame: Frame) -> tuple[float | None, float]:
    """(M, mu) of the step rule in the frame: the extreme eigenvalues of L^T H L at the frame's origin (``Frame.M_l``,
    ``Frame.mu_l``; both 1 in the Laplace frame, where x = 0 is the mode), else the frame's (M', mu').

    Why not the probed (M', mu'): Thm 6's step mu/(2a), with a = 2(d+3)M^2 (Thm 26 for the energy estimator, from
    Thm 1's (d+3)M^2), falls like mu/M^2, and the probed extremes bound the curvature anywhere the probes went, not
    where the iterates are.  On a logistic regression with d = 100, N = 200 (Laplace mode 1.7 posterior sd from the
    Gaussian VI mean) they were (2.3, 0.35): a step 29x smaller than with the Laplace constants (1, 1), and 10,000
    steps ended 0.69 sd from the optimum instead of 0.03; at d = 200, N = 400, 1.7 sd instead of 0.06 (measured).
    On a Gaussian target the two coincide (L^T H L is the same everywhere).  The steps keep the divergence guard of
    ``refvi.fit`` (its ``"frame"`` guard), and every result carries the diagnostics of
    :mod:`refvi.optim.diagnostics`."""
    if frame.M_l is not None and frame.mu_l is not None:
        return frame.M_l, frame.mu_l
    return frame.M, frame.mu


def default_step(frame: Frame, method: str, estimator: str, d: int):
    """The step rule in the frame: Thm 6 (Prox-SGD) / Thm 9 (Proj-SGD) decaying steps with the constants of
    :func:`step_constants` (M, mu) when mu >= M/10 (strongly convex and well conditioned: O(1/T) for
    E||w - w*||^2), else Cor 11 / 12's constant 1/(M sqrt T) (convex rate O(1/sqrt T); with mu <= 0 no
    guarantee)."""
    M, mu = step_constants(frame)
    if M is not None and mu >= 0.1 * M and estimator in ("energy", "entropy"):
        return "thm6" if method == "prox-sgd" else "thm9"
    return "1/(M sqrt T)"


#: the default number of steps below the dimension where the budget starts to grow with d (``default_budget``)
BASE_STEPS = 10_000


def default_budget(d: int, method: str) -> tuple[int, int]:
    """(steps T, samples S) of a default run (no ``steps`` / ``samples`` given) in the frame with Thm 6's steps.

    Derivation, seed 000 Thm 6 Eq. (11) through Thm 27 Eq. (19), in the Laplace frame (M' = mu' = 1 at the mode:
    :func:`step_constants`) for Prox-SGD with the energy estimator, a = 2(d+3)M^2 (Thm 26, from Thm 1).  The steps
    are constant, mu/(2a), up to Thm 27's switch t* = 4 floor(a/mu^2) = 8(d+3), then decay like 2/(mu t); at T steps
    (Eq. 19) ``E||w^T - w*||^2 <= (t*/T)^2 ||w^0 - w*||^2 + 8 sigma^2 / (mu^2 T)``.

    * The first term: the start's error shrinks by (t*/T)^2, which depends on T/t* alone; a fixed T = 10,000 lets it
      grow like d^2 (T/t* = 12 at d = 100, 2.5 at d = 500).  So T = max(10,000, 5 t*): at least 5 t* steps, so that
      the start's error is at most 1/25 of its square; 10,000 up to d = 247.
    * The second term: the mean of S independent energy estimates is quadratically bounded (Def. 4) with
      a_S = 2M^2 (1 + (d+2)/S) (its second moment is ``(1 - 1/S)||grad l||^2 + E||g||^2 / S``,
      ``||grad l(w)|| <= M ||w - wbar||`` by Lemma 16.1, then Thm 1), and ``sigma^2 = b + M^2 ||w* - wbar||^2`` grows
      like a_S, so the noise term falls like (d+3) / (S T) = t* / (8 S T).  S = ceil(10 t* / T) keeps S T >= 10 t*,
      the noise term at or below its value at T = 10 t*; S = 1 up to d = 122.  The steps stay Thm 6's rule for
      a = 2(d+3)M^2 (they are within the range of the smaller a_S, so Eq. (11) still holds).
    * The constants: up to d = 122 the former budget (10,000 steps, S = 1) already has T >= 10 t* and was measured
      accurate, so 10 t* sets the noise level kept at every d; the start's term is held at 1/25 by steps and the
      noise term by samples, which cost less than steps here:
      the fused loop of ``refvi.kernels.framed`` reads C, L and the data once a step for all S samples, so S = 2
      costs 1.3 times a step of S = 1 at d = 500, N = 1,000 (measured: 1.39, 1.79, 2.91 ms of CPU a step for
      S = 1, 2, 4), where twice the steps cost twice.

    Measured on logistic regressions with N = 2d (``tests/benchmarks/fit_at_scale.py``): at d = 500 the fixed
    budget (10,000 steps, S = 1) ended 0.134 posterior sd from the exact optimum, this one (20,120 steps, S = 2)
    within 0.1.  Proj-SGD keeps 10,000 steps and one sample whatever d: its step costs an eigendecomposition."""
    if method != "prox-sgd":
        return BASE_STEPS, 1
    t_star = 8 * (int(d) + 3)  # Thm 27's switch 4 floor(a/mu^2) with a = 2(d+3), mu = 1
    T = max(BASE_STEPS, 5 * t_star)
    return T, max(1, -(-10 * t_star // T))


@dataclasses.dataclass(kw_only=True)
class Framed:
    """What the frame stage of ``refvi.fit`` hands on (:func:`build`): the ``target`` the loop runs on (the framed
    target p_x, or the original when ``frame`` is None), the start (``m0``, ``C0``: None for 0 and I) in its
    coordinates, the loop's number of ``steps``, the seconds spent before the loop (``setup``), and, for a refined
    run, the mapped-back result of its first stage (``pilot``).  :meth:`back` maps a result back."""

    target: Any
    frame: Frame | None = None
    m0: Any = None
    C0: Any = None
    steps: int = 0
    setup: float = 0.0
    pilot: Any = None

    def back(self, res, late_notes=()):
        """The result in the original coordinates (``_map_back``: m = z0 + L m', C C^T = L C' C'^T L^T, the
        objective less log|det L|, the frame's notes first), ``late_notes`` after its notes, joined to the pilot's
        (stage 1 of a refined run) when there is one."""
        if self.frame is None:
            res.notes.extend(late_notes)
            return res
        out = _map_back(res, self.target, self.frame, res.structure, self.setup)
        out.notes.extend(late_notes)
        return out if self.pilot is None else _join(self.pilot, out)


def build(target, spec, run) -> Framed:
    """Stage 2 of ``refvi.fit``: choose and build the frame, and return the target the loop runs on with its map back.

    Without a frame (``spec.frames`` false) the target itself.  Otherwise the frame of ``spec.frame``
    (:func:`as_frame`: the Laplace frame by default), the start checked in z and mapped into the frame (for a logistic
    regression, the ridge start of ``_ridge_start``).  When the found frame had to start narrow (-log p not
    convex within one Laplace sd of the mode) the run is refined: a pilot of T/2 steps from N(0, 0.1^2 I) in the
    Laplace frame (``run(spec, framed)``: stages 3 to 6), then the frame of its result (z0 = m, L = its triangular
    C, constants probed again there, :func:`frame_from_q`) for the remaining steps, the pilot kept for the map
    back."""
    T = spec.steps
    if not spec.frames:
        return Framed(target=target, m0=spec.m0, C0=spec.C0, steps=T)
    t0 = time.perf_counter()
    _preflight_start(target, spec.m0)
    frame = as_frame(spec.frame, target, start=spec.m0, seed=_seed_int(spec.seed))
    m0 = None if spec.m0 is None else as_vector(spec.m0, "m0", target.dim)  # checked in z, where it was given
    C0 = None if spec.C0 is None else check_scale(spec.C0, target.dim, spec.structure, "C0")
    if (
        m0 is None
        and C0 is None
        and spec.step_size is None
        and frame.kind == "laplace"
        and type(target).__dict__.get("ridge_likelihood") == "logistic"
    ):
        m0 = _ridge_start(target, frame)
    refine = (
        frame.radius < 1.0
        and frame.kind in ("laplace", "diagonal")
        and spec.step_size is None
        and m0 is None
        and C0 is None
        and T >= 4
    )
    if not refine:
        return _framed(target, frame, m0, C0, spec.structure, T, time.perf_counter() - t0)
    T1 = T // 2
    first = _framed(target, frame, None, None, spec.structure, T1, time.perf_counter() - t0)
    pilot = run(dataclasses.replace(spec, steps=T1), first)
    t1 = time.perf_counter()
    frame2 = frame_from_q(target, pilot.m, pilot.C, seed=_seed_int(spec.seed) + 1)
    frame2.notes.insert(0, f"stage 2 of 2 ({T - T1} steps): {frame2.notes.pop(0)}")
    out = _framed(target, frame2, None, None, spec.structure, T - T1, time.perf_counter() - t1)
    out.pilot = pilot
    return out


def _framed(target, frame, m0, C0, structure, steps, setup) -> Framed:
    """The framed target and the start in the frame: a given (m0, C0) mapped by x = L^{-1}(z - z0), C' = L^{-1} C
    (then its triangular or symmetric root of the same q, for the structure), else N(0, radius^2 I)."""
    at = frame.target(target)
    m0x = C0x = None
    if m0 is not None or C0 is not None:
        m0 = m0 if m0 is not None else frame.z0
        C0 = C0 if C0 is not None else frame.L
        m0x, C0x = at.params_to_frame(np.asarray(m0, dtype=np.float64), np.asarray(C0, dtype=np.float64))
        if structure in ("tril", "diag"):
            C0x = np.linalg.cholesky(C0x @ C0x.T)
        elif structure == "sym":
            lam, Q = np.linalg.eigh(C0x @ C0x.T)
            C0x = (Q * np.sqrt(lam)) @ Q.T
            C0x = 0.5 * (C0x + C0x.T)
    elif frame.radius != 1.0:
        C0x = frame.radius * np.eye(target.dim)
    return Framed(target=at, frame=frame, m0=m0x, C0=C0x, steps=steps, setup=setup)


def _join(r1, r2):
    """A refined run's result: the pilot's (stage 1) and the second stage's records, steps and notes, in order."""
    T1 = r1.steps
    notes = [f"stage 1 of 2 ({T1} steps): {n}" for n in r1.notes] + r2.notes
    trace = dataclasses.replace(
        r2.trace,
        steps=np.concatenate([r1.trace_steps, r2.trace_steps[1:] + T1]),
        objective=np.concatenate([r1.trace_objective, r2.trace_objective[1:]]),
        m=None if r1.trace_m is None else np.concatenate([r1.trace_m, r2.trace_m[1:]]),
        C=None if r1.trace_C is None else np.concatenate([r1.trace_C, r2.trace_C[1:]]),
    )
    config = dataclasses.replace(
        r2.config, steps=T1 + r2.steps, step_sizes=np.concatenate([r1.step_sizes, r2.step_sizes])
    )
    return dataclasses.replace(r2, config=config, trace=trace, notes=notes, seconds=r1.seconds + r2.seconds)


def _ridge_start(target, frame) -> np.ndarray:
    """The start of a default run on a logistic regression: the mean m that minimizes the exact VI objective with C
    held at the Laplace factor L (seed 002 §6's ridge reduction: l(m, L) = |m|^2/(2 s^2) + sum_n E softplus(-s_n),
    s_n ~ N(y_n x_n^T m, |L^T x_n|^2), so f(m, L) is l(m, L) - log|det L|), by Newton's method with backtracking
    (the Hessian in m is I/s^2 + X^T diag(E sigmoid'(s)) X).  Prox-SGD then starts from (m, L), in the frame x^0 =
    L^-1 (m - z0), C^0 = I.  Thm 6's bound falls with |w^0 - w*|^2; the Laplace mode is where log p peaks, not the
    Gaussian VI mean: on logistic regressions with N = 2d it was 1.0, 1.7, 2.4 and 3.4 posterior sd (largest
    coordinate) from the VI mean at d = 50, 100, 200, 500, this start 0.10, 0.29, 0.15 and 0.27 sd (measured against
    the exact optimum by proximal gradient descent on the exact objective), in 3 to 5 Newton steps."""
    from refvi.targets.ridge import ridge_expectations

    t0 = time.perf_counter()
    X, y, ip = target.X, target.y, float(target.prior_scale) ** -2
    beta = np.sqrt(np.einsum("ij,ij->i", X @ frame.L, X @ frame.L))

    def objective(m, hessian=False):
        sp, sg, ds = ridge_expectations(y * (X @ m), beta)
        f = 0.5 * ip * float(m @ m) + float(np.sum(sp))
        H = (X.T * ds) @ X + ip * np.eye(m.size) if hessian else None
        return f, ip * m - X.T @ (y * sg), H

    m = frame.z0.copy()
    f, g, H = objective(m, True)
    k = 0  # Newton steps taken
    while k < 30:
        step = -np.linalg.solve(H, g)
        dec = float(-(g @ step))
        if not dec > 1e-10:
            break
        t = 1.0
        while True:
            f_new, g_new, _ = objective(m + t * step)
            if f_new <= f - 1e-4 * t * dec or t < 1e-8:
                break
            t *= 0.5
        m = m + t * step
        f, g, H = objective(m, True)
        k += 1
    frame.seconds += time.perf_counter() - t0
    frame.notes.append(
        f"start: the mean minimizing the exact VI objective with C at the Laplace factor (logistic ridge reduction, "
        f"{k} Newton steps, {1e3 * (time.perf_counter() - t0):.1f} ms), not the mode"
    )
    return m


def _preflight_start(target, m0):
    """log p and its gradient must be finite where the frame search starts (m0, else 0): a non-finite value there is
    a problem of the target, reported as itself before any search (as ``fit``'s own preflight does)."""
    from refvi._checks import NonFiniteError

    z = np.zeros(target.dim) if m0 is None else as_vector(m0, "m0", target.dim)
    try:
        target.logp(z[None, :])
        target.grad_logp(z[None, :])
    except NonFiniteError as exc:
        raise NonFiniteError(
            f"at the starting point of the frame search (m0 or 0): {exc}; this is a problem of the target's "
            f"functions, not of the step size"
        ) from exc


def frame_from_q(target, m, C, *, probes: int = 8, seed: int = 0) -> Frame:
    """The frame in which N(m, C C^T) is N(0, I): z0 = m, L = chol(C C^T), constants probed at x ~ N(0, I)
    (at N(0, 0.5^2 I), then N(0, 0.1^2 I), when -log p is not convex there)."""
    t0 = time.perf_counter()
    d = target.dim
    m = as_vector(m, "m", d)
    L = np.linalg.cholesky(as_matrix(C, "C", (d, d)) @ np.asarray(C).T)
    at = AffineTarget(target, m, L)
    for r in (1.0, 0.5, 0.1):
        M, mu, M_l, mu_l = _probe(at, probes, seed, r)
        if mu > 0:
            break
    frame = Frame(
        m.copy(), L, M=M, mu=mu, M_l=M_l, mu_l=mu_l, kind="q", constants="estimated", seconds=time.perf_counter() - t0
    )
    frame.notes = [
        f"frame of the current q (z0 = m, L = chol(C C^T)): M' = {M:.3g}, mu' = {mu:.3g}, estimated "
        f"from the Hessian at the mean and {probes} points x ~ N(0, {r:g}^2 I), not bounded"
    ]
    if mu <= 0:
        frame.notes.append("-log p is not convex at some probed point (mu' <= 0): no convergence guarantee")
    return frame


def _seed_int(seed):
    return int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else 0


def _back(at, m, C, structure):
    m, C = at.params_to_original(m, C)
    if structure == "sym":  # L C' is not symmetric: return the symmetric root of the same q
        lam, Q = np.linalg.eigh(C @ C.T)
        C = (Q * np.sqrt(np.maximum(lam, 0.0))) @ Q.T
        C = 0.5 * (C + C.T)
    elif structure in ("tril", "diag") and not at.lower:
        C = np.linalg.cholesky(C @ C.T)
    return m, C


def _map_back(res, at, frame, structure, setup):
    m, C = _back(at, res.m, res.C, structure)
    ml, Cl = _back(at, res.m_last, res.C_last, structure)
    tm = tC = None
    if res.trace_m is not None:
        pairs = [_back(at, a, b, structure) for a, b in zip(res.trace_m, res.trace_C, strict=True)]
        tm, tC = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    rule = res.notes
    notes = (
        list(frame.notes)
        + [
            f"fitted in the frame z = z0 + L x (constants M' = {frame.M if frame.M is not None else float('nan'):.3g}, "
            f"mu' = {frame.mu:.3g}, {frame.constants}); step sizes are those of the frame, the result is mapped back "
            f"exactly (m = z0 + L m', C C^T = L C' C'^T L^T) and trace_objective is f in the original coordinates "
            f"(f_x - log|det L|); the guarantee rests on the estimated constants"
        ]
        + list(rule)
    )
    trace = dataclasses.replace(res.trace, m=tm, C=tC, objective=res.trace_objective - at.log_det_L)
    quarters = None if res.quarters is None else tuple(_back(at, a, b, structure) for a, b in res.quarters)
    return dataclasses.replace(
        res,
        m=m,
        C=C,
        m_last=ml,
        C_last=Cl,
        trace=trace,
        seconds=res.seconds + setup,
        notes=notes,
        frame=frame,
        quarters=quarters,
    )
