"""``refvi.fit``: one call from a target to a Gaussian approximation N(m, C C^T), with defaults from the theory.

Methods:

* ``"prox-sgd"`` (default) seed 000 Def. 5 / Cor 11: lower-triangular C, energy estimator, prox of the entropy.
  Default step gamma = 1/M: the largest step of Thm 7 (gamma in (0, 1/M]) and of seed 002 Thm 6's proximal
  method.  Default average: the tail (Polyak-Ruppert) average of the last half of the iterates.  Thm 7 bounds its
  theta-weighted average (``average="theta"``), but at gamma = 1/M, theta = 1/(4d + 13) puts almost all weight on
  w^1, so it is available, not the default.  Divergence guard (default step only): the energy estimator's second
  moment grows like (d+3)M^2 ||w - wbar||^2 (Thm 1), so at gamma = 1/M the last iterate can blow up on a target
  whose curvature is M in many directions (diabetes linear regression: the factor 1 - 2 gamma M + (d+2) gamma^2 M^2
  exceeds 1); when the objective estimate at a trace point is non-finite or above ``f(w^0) + 1 + |f(w^0)|/10`` (the
  run climbed above its start), ``fit`` restarts with half the step,
  replaying the same base samples, and says so in ``notes``.  An explicit ``step_size`` is never changed.
* ``"proj-sgd"`` seed 000 Def. 8 / Cor 12: symmetric C, entropy-corrected estimator, projection onto W_M.
  Default step 1/(2M) (f = l + h is 2M-smooth on W_M: seed 002 Thms 2, 5, 6), tail average.
* ``"gd-prox"``, ``"gd-projected"``, ``"gd-naive"``: seed 002's deterministic methods with exact gradients
  (:func:`refvi.optim.gradient_descent.gradient_descent`); ``samples`` and ``average`` do not apply.

``step_size`` is a number (constant), an array of T numbers, or a rule name of :mod:`refvi.optim.schedules`
("1/(M sqrt T)", "1/sqrt T", "thm6", "thm9", "thm6-switch", "thm9-switch", "A log T / T", ...), whose constants come
from the target (M, mu) and Thm 26 (a, for the estimator in use).  ``theorem="000.thm7"`` (etc.) additionally checks
that the steps lie in that theorem's range.  The base samples are drawn from ``seed`` (an int or a Generator) in the
order of the steps, so a run is bit-identical for a given seed, chunking and fast path notwithstanding.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from refvi._checks import as_vector, check_scale, check_target, positive_scalar
from refvi._warnings import warn_at_caller
from refvi.optim import averaging, fastpath, schedules
from refvi.optim import gradient_descent as _gd
from refvi.optim import proj_sgd as _proj
from refvi.optim import prox_sgd as _prox
from refvi.optim._common import check_weights
from refvi.targets.base import Target

METHODS = ("prox-sgd", "proj-sgd", "gd-prox", "gd-projected", "gd-naive")
_DEFAULTS = {"prox-sgd": ("energy", "tril"), "proj-sgd": ("entropy", "sym")}


@dataclasses.dataclass(frozen=True, kw_only=True)
class FitConfig:
    """What was run: the method, estimator and structure, the number of steps and of samples per step, the step
    sizes used (after any halving of a default step), the average returned and the seed."""

    method: str
    estimator: str | None
    structure: str
    steps: int
    samples: int
    step_sizes: np.ndarray
    average: str
    seed: object


@dataclasses.dataclass(frozen=True, kw_only=True)
class FitTrace:
    """The recorded iterates: ``steps[k]`` is the step index t of the k-th record w^t; ``objective[k]`` estimates
    f(w^t) = -E_q log p - log|det C| (entropy constant dropped) with fixed common base samples (``trace_samples`` of
    them), or is exact for the gd-* methods; ``m`` / ``C`` hold the recorded iterates with ``keep_iterates=True``."""

    steps: np.ndarray
    objective: np.ndarray
    m: np.ndarray | None = None
    C: np.ndarray | None = None


def _read_through(record: str, *names: str) -> tuple[property, ...]:
    """Read-only properties returning ``self.<record>.<name>`` for each name."""

    def getter(name: str) -> Callable[[Any], Any]:
        return lambda self: getattr(getattr(self, record), name)

    return tuple(property(getter(n), doc=f"``{record}.{n}``") for n in names)


@dataclasses.dataclass(kw_only=True)
class FitResult:
    """The approximation N(m, C C^T) (the average when averaging is on) and the last iterate, with what was run
    (``config``: :class:`FitConfig`), the recorded iterates (``trace``: :class:`FitTrace`), the wall time of the
    optimizer loop, and ``notes`` saying when the theory does not cover the run (``ended_worse`` flags a run that
    ended far above its start).  Built by keyword only; ``method``, ``steps``, ``trace_objective``, ... read through
    to ``config`` and ``trace``."""

    m: np.ndarray
    C: np.ndarray
    m_last: np.ndarray
    C_last: np.ndarray
    config: FitConfig
    trace: FitTrace
    seconds: float
    fast_path: bool
    notes: list[str]
    frame: object = None  # the affine frame of the run (refvi.optim.frame.Frame), None for the plain algorithm
    ended_worse: bool = False  # the returned approximation's objective is far above the start's (see notes)
    diagnostics: Any = None  # refvi.optim.diagnostics.FitDiagnostics: did it work? (None with diagnose=0)
    quarters: Any = dataclasses.field(default=None, repr=False)  # (m, C) averages of the last two quarters' records

    # read-through names (the configuration and the trace)
    method, estimator, structure, steps, samples, step_sizes, average, seed = _read_through(
        "config", "method", "estimator", "structure", "steps", "samples", "step_sizes", "average", "seed"
    )
    trace_steps, trace_objective, trace_m, trace_C = _read_through("trace", "steps", "objective", "m", "C")

    @property
    def seconds_per_step(self) -> float:
        return self.seconds / self.steps

    @property
    def covariance(self) -> np.ndarray:
        return self.C @ self.C.T

    def to_inference_data(self, draws: int = 1000, *, target=None, seed=0, chains: int = 1):
        """ArviZ ``InferenceData`` of ``draws`` iid draws from N(m, C C^T) in ``chains`` equal chains: the model's own
        variables for a target of ``refvi.targets.from_pymc`` (pass it as ``target``), else the unconstrained ``z``."""
        if target is not None and hasattr(target, "inference_data"):
            return target.inference_data(self.m, self.C, draws, seed, chains)
        if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 2 or draws % chains:
            raise ValueError(f"draws must be an integer >= 2 divisible by chains = {chains!r}, got {draws!r}")
        import arviz as az

        Z = np.random.default_rng(seed).standard_normal((int(draws), self.m.size)) @ self.C.T + self.m
        return az.from_dict(posterior={"z": Z.reshape(chains, -1, self.m.size)})

    def summary(self) -> str:
        f = self.trace_objective[-1] if self.trace_objective.size else float("nan")
        lines = [
            f"method={self.method} estimator={self.estimator} structure={self.structure} steps={self.steps} "
            f"samples={self.samples} average={self.average}",
            f"step size: first {self.step_sizes[0]:.4g}, last {self.step_sizes[-1]:.4g}; "
            f"{self.seconds:.3f} s ({1e6 * self.seconds_per_step:.2f} us/step, "
            f"{'Numba fast path' if self.fast_path else 'generic path'})",
            f"objective at the last recorded iterate: {f:.6g}",
        ]
        if self.diagnostics is not None:
            lines.append(f"diagnostics: {self.diagnostics.summary()}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _generators(seed):
    if isinstance(seed, np.random.Generator):
        main = seed
        aux = np.random.default_rng(int(main.integers(2**63 - 1)))
        return main, aux
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or a numpy Generator, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer or a numpy Generator, got {seed}")
    a, b = np.random.SeedSequence(int(seed)).spawn(2)
    return np.random.default_rng(a), np.random.default_rng(b)


def _smoothness(target, M, why):
    M = M if M is not None else getattr(target, "smoothness", None)
    if M is None:
        raise ValueError(f"{why} needs the smoothness constant M, but {type(target).__name__} has none; pass M=")
    return positive_scalar(M, "M")


def _schedule(step_size, T, target, method, estimator, M_arg):
    """(gammas, gamma_for_theta, M used or None)."""
    if step_size is None:
        M = _smoothness(target, M_arg, f"the default step size of {method} (1/M or 1/(2M))")
        g = 1.0 / M if method == "prox-sgd" else 1.0 / (2.0 * M)
        return np.full(T, g), M
    if isinstance(step_size, str):
        needs_M = step_size in ("1/(M sqrt T)", "thm6", "thm9", "thm6-switch", "thm9-switch", "A log T / T")
        M = _smoothness(target, M_arg, f"step-size rule {step_size!r}") if needs_M else M_arg
        mu = getattr(target, "strong_convexity", 0.0) or None
        a = None
        if M is not None and estimator in ("energy", "entropy"):
            a = schedules.noise_constants(estimator, target.dim, M)[0]
        A = (1.0 / mu) if (step_size == "A log T / T" and mu) else None
        return schedules.step_sizes(step_size, T, M=M, mu=mu, a=a, A=A), M
    arr = np.asarray(step_size, dtype=np.float64)
    if arr.ndim == 0:
        return np.full(T, positive_scalar(float(arr), "step_size")), M_arg
    from refvi.optim._common import check_gammas

    return check_gammas(arr, T), M_arg


def _neglogp(target, Z) -> np.ndarray:
    """-log p on the rows of Z: the compiled -log p kernel of the target's plan (``Target.kernels()``), else
    ``target.logp``."""
    plan = target.kernels().neglogp if isinstance(target, Target) else None
    if plan is None:
        return -np.asarray(target.logp(Z), dtype=np.float64)
    from refvi.kernels import _entry

    return np.asarray(_entry.call(plan[0], (np.ascontiguousarray(Z),), plan[1]), dtype=np.float64)


def _objective_estimate(target, m, C, Ub):
    """Monte Carlo f(m, C) = E -log p(C u + m) - log|det C| on the fixed base samples Ub (the objective trace)."""
    Z = Ub @ C.T + m
    sign, logdet = np.linalg.slogdet(C)
    if sign == 0:
        return float("inf")
    return float(np.mean(_neglogp(target, Z)) - logdet)


#: seconds of compiled loop between two returns to Python (where Ctrl-C is seen): refvi.fit stops within about that
_SLICE = 0.2

_BLAS_THREADS_UP_TO = 1024
_CONTROLLER: list[Any] = []  # the threadpoolctl controller, made on first use


def _small_blas(fn):
    """Run ``fn(target, ...)`` with BLAS single-threaded when target.dim <= 1024: every matrix of a fit is d x d or
    smaller, too small to gain from threads, and on a loaded machine OpenBLAS's spinning threads made the L-BFGS
    mode search and the loop several times slower (sblrc's frame search 0.79 s instead of 0.03 s, measured)."""
    import functools

    @functools.wraps(fn)
    def wrapped(target, *args, **kwargs):
        with _interruptible():
            if not 0 < getattr(target, "dim", 0) <= _BLAS_THREADS_UP_TO:
                return fn(target, *args, **kwargs)
            if not _CONTROLLER:
                from threadpoolctl import ThreadpoolController

                _CONTROLLER.append(ThreadpoolController())
            with _CONTROLLER[0].limit(limits=1, user_api="blas"):
                return fn(target, *args, **kwargs)

    return wrapped


_INTERRUPTED = [False]  # set by fit's SIGINT handler; the loop checks it between pieces


class _interruptible:
    """Inside ``fit``: Ctrl-C raises KeyboardInterrupt as usual and also sets a flag that the loop checks between
    pieces, because a KeyboardInterrupt raised while Numba compiles lands in an llvmlite ctypes callback, which
    prints "Exception ignored" and drops it (measured: a SIGINT 12 s into `refvi fit breast_cancer --steps 2000000`
    was lost and the run went on for 2 minutes; with the flag it stopped 0.7 s after the signal).  The handler is
    installed by the outermost fit of the main thread over Python's default handler only, and the previous handler
    is restored on the way out; the flag is cleared on the way in and out of the outermost fit."""

    depth = [0]

    def __enter__(self):
        import signal
        import threading

        self.main = threading.current_thread() is threading.main_thread()
        self.previous = None
        if self.main:
            self.depth[0] += 1
            if self.depth[0] == 1:
                _INTERRUPTED[0] = False
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    self.previous = signal.signal(signal.SIGINT, _on_sigint)
        return self

    def __exit__(self, *exc):
        import signal

        if self.main:
            self.depth[0] -= 1
            if self.depth[0] == 0:
                if self.previous is not None:
                    signal.signal(signal.SIGINT, self.previous)
                _INTERRUPTED[0] = False
        return False


def _on_sigint(signum, frame):
    _INTERRUPTED[0] = True
    raise KeyboardInterrupt


def _check_interrupt():
    if _INTERRUPTED[0]:
        raise KeyboardInterrupt


@_small_blas
def fit(
    target,
    method: str = "prox-sgd",
    *,
    steps: int | None = None,
    step_size=None,
    samples: int | None = None,
    seed=0,
    average: str | None = None,
    estimator: str | None = None,
    structure: str | None = None,
    m0=None,
    C0=None,
    M: float | None = None,
    theorem: str | None = None,
    trace_every: int | None = None,
    trace_samples: int = 64,
    keep_iterates: bool = False,
    progress: bool | None = None,
    fast: bool = True,
    tail_fraction: float = 0.5,
    frame="auto",
    diagnose: int = 1000,
) -> FitResult:
    """Fit N(m, C C^T) to ``target`` (see the module docstring for methods and defaults).

    Errors (ValueError / TypeError naming the condition): steps <= 0; samples < 1; an unknown method, estimator,
    structure, average or step rule; a step size outside ``theorem``'s range; an initial C outside the domain
    (triangular with a positive diagonal, symmetric positive definite, ...); a schedule or projection that needs M
    on a target without one; a run whose iterate stops being finite (:class:`~refvi.optim.fastpath.DivergenceError`,
    naming the step and the last finite state).

    ``steps``, ``samples``: ``None`` (default) is 10,000 steps of one sample, except for a default Prox-SGD run in
    a frame (Thm 6's steps), whose budget grows with d as Thm 6's bound asks
    (:func:`refvi.optim.frame.default_budget`: T = max(10,000, 40(d+3)), S = ceil(80(d+3)/T); 20,120 steps of 2
    samples at d = 500).  ``samples=None`` with ``steps`` given is one sample.

    ``trace_every``: the objective trace (and, with ``keep_iterates``, the iterates) at every ``trace_every``-th step
    and the last; ``None`` (default) is every ``max(1, T // 100)`` steps, about 100 points.

    ``progress``: ``None`` (default) shows a progress bar on an interactive terminal once the run has lasted 2 s,
    ``True`` from the start, ``False`` never.

    ``frame``: ``"auto"`` (default) runs Prox-SGD / Proj-SGD in the Laplace frame z = z0 + L x
    (:mod:`refvi.optim.frame`) whenever no step and no M is given; ``"laplace"``, ``"diagonal"``, a ``Frame`` or a
    pair ``(z0, L)`` force a frame; ``None`` is the plain paper algorithm.

    ``diagnose``: the number of draws of the fitted q for the diagnostics (:mod:`refvi.optim.diagnostics`: Pareto k
    of the importance weights, whether the tail averages stopped moving, posterior error bounds), ``0`` to skip them.
    A run that fails them gets ``res.diagnostics.converged = False``, a note and a :class:`ConvergenceWarning`.

    Stages, each entered once and in this order: ``_validate`` the arguments; choose and build the frame
    (:func:`refvi.optim.frame.build`: the target the loop runs on and its map back); ``_choose_step``;
    ``_run`` the loop; ``_outcome`` (check how it ended); map back (``Framed.back``), then the diagnostics
    of the result in the original coordinates.
    """
    from refvi.optim import frame as _frame

    spec = _validate(
        target,
        method,
        steps=steps,
        step_size=step_size,
        samples=samples,
        seed=seed,
        average=average,
        estimator=estimator,
        structure=structure,
        m0=m0,
        C0=C0,
        M=M,
        theorem=theorem,
        trace_every=trace_every,
        trace_samples=trace_samples,
        keep_iterates=keep_iterates,
        progress=progress,
        fast=fast,
        tail_fraction=tail_fraction,
        frame=frame,
        diagnose=diagnose,
    )
    framed = _frame.build(target, spec, _framed_run)
    res = _framed_run(spec, framed)
    res.notes.extend(spec.compiled)
    return _diagnose(res, target, spec.diagnose)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _FitSpec:
    """``fit``'s arguments once validated (``_validate``): the estimator and structure with their defaults
    resolved (None for the gd-* methods), ``frames``: whether the run goes through an affine frame, ``notes``: what
    the estimator / structure combination warrants, ``compiled``: the note on compiling the target's functions."""

    target: Any
    method: str
    steps: int
    step_size: Any
    samples: int
    seed: Any
    average: str | None
    estimator: Any  # str, None for gd-*
    structure: Any  # str, None for gd-*
    m0: Any
    C0: Any
    M: float | None
    theorem: str | None
    trace_every: int | None
    trace_samples: int
    keep_iterates: bool
    progress: bool | None
    fast: bool
    tail_fraction: float
    frame: Any
    frames: bool
    diagnose: int
    notes: tuple = ()
    compiled: tuple = ()


def _validate(target, method, *, steps, frame, diagnose, samples, trace_samples, trace_every, **rest) -> _FitSpec:
    """Stage 1: every argument that can be checked before any work (the start m0 / C0 is checked where it is
    mapped, by the frame and step stages), and the target's functions compiled (``_compile_user_functions``)."""
    from refvi.optim import frame as _frame

    check_target(target)
    diagnose = _check_diagnose(diagnose)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    budget = _frame.BASE_STEPS, 1  # a given number of steps keeps one sample by default
    if steps is None:
        framed_rule = _frame.wants_frame(
            target, frame, method=method, M=rest["M"], step_size=rest["step_size"], steps=_frame.BASE_STEPS
        )
        if framed_rule and rest["average"] != "theta":  # the frame's Thm 6 rule (theta: Cor 11's constant step)
            budget = _frame.default_budget(target.dim, method)
    T = schedules.check_steps(budget[0] if steps is None else steps)
    samples = budget[1] if samples is None else samples
    compiled = tuple(_compile_user_functions(target))
    frames = _frame.wants_frame(target, frame, method=method, M=rest["M"], step_size=rest["step_size"], steps=T)
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples must be an integer >= 1, got {samples!r}")
    if isinstance(trace_samples, bool) or not isinstance(trace_samples, (int, np.integer)) or trace_samples < 1:
        raise ValueError(f"trace_samples must be an integer >= 1, got {trace_samples!r}")
    notes: list[str] = []
    if not method.startswith("gd-"):
        est_default, struct_default = _DEFAULTS[method]
        rest["estimator"] = rest["estimator"] or est_default
        rest["structure"] = rest["structure"] or struct_default
        mod = _prox if method == "prox-sgd" else _proj
        notes = mod.check_combination(rest["estimator"], rest["structure"])
        if trace_every is not None and int(trace_every) < 1:
            raise ValueError(f"trace_every must be >= 1, got {trace_every}")
    return _FitSpec(
        target=target,
        method=method,
        steps=T,
        samples=int(samples),
        trace_samples=int(trace_samples),
        trace_every=trace_every,
        frame=frame,
        frames=frames,
        diagnose=diagnose,
        notes=tuple(notes),
        compiled=compiled,
        **rest,
    )


def _framed_run(spec: _FitSpec, framed) -> FitResult:
    """Stages 3 to 6 on what the frame stage built: choose the step, run the loop, check the outcome, map back."""
    t0 = time.perf_counter()
    plan = _choose_step(spec, framed)
    framed.setup += time.perf_counter() - t0
    run = _run(spec, framed, plan)
    res = _outcome(spec, framed, plan, run)
    return framed.back(res, run.late_notes)


@dataclasses.dataclass(kw_only=True)
class _Plan:
    """What the step stage chose: the step sizes and the M they use, the guard (``"climb"``: the plain default step,
    restarted with half the step when the run climbs above its start, seed 000 Thm 1; ``"frame"``: the frame's own
    rule, restarted when the run blows up or ends above its start; None: the caller's step, never changed), the
    start (m, C) in the loop's coordinates and the average's weights."""

    gammas: np.ndarray
    M: float | None
    guard: str | None
    m: Any = None  # None for gd-*, which starts from m0 / C0 itself
    C: Any = None
    kind: str = "last"
    weights: np.ndarray | None = None
    notes: list = dataclasses.field(default_factory=list)


_FRAME_RULES = ("thm6", "thm9", "1/(M sqrt T)")  # the frame's own default rules, guarded as fit's default step is


def _choose_step(spec: _FitSpec, framed) -> _Plan:
    """Stage 3: the step sizes (a number, an array, a rule of :mod:`refvi.optim.schedules`; by default 1/M or 1/(2M)
    in the original coordinates, seed 000 Thm 7 / seed 002 Thm 6, and in a frame its rule,
    :func:`refvi.optim.frame.default_step`: Thm 6 / Thm 9 or Cor 11 / 12), the check against ``theorem``, the start
    and the average's weights (tail, or Thm 7's / Thm 10's theta weights)."""
    if spec.method.startswith("gd-"):
        if spec.step_size is not None and (isinstance(spec.step_size, str) or np.ndim(spec.step_size) != 0):
            raise ValueError("seed 002 gradient descent takes a constant step size (a number)")
        return _Plan(gammas=np.empty(0), M=spec.M, guard=None)
    target, T, method, estimator = framed.target, framed.steps, spec.method, spec.estimator
    d = target.dim
    step_size, M = spec.step_size, spec.M
    guard = "climb" if step_size is None else None
    if framed.frame is not None:
        step_size, M, guard = _frame_step(spec, framed)
    gammas, M_used = _schedule(step_size, T, target, method, estimator, M)
    if method == "proj-sgd":
        M_used = _smoothness(target, M_used, "the projection onto W_M")
    if spec.theorem is not None:
        if M_used is None and getattr(target, "smoothness", None) is not None:
            M_used = positive_scalar(target.smoothness, "M")
        mu = getattr(target, "strong_convexity", 0.0) or None
        a = None
        if M_used is not None and estimator in ("energy", "entropy"):
            a = schedules.noise_constants(estimator, d, M_used)[0]
        A = None
        if spec.theorem == "000.cor30":
            A = gammas[0] * T / math.log(T)
        schedules.check_theorem(spec.theorem, gammas, M=M_used, mu=mu, a=a, A=A)
    m = np.zeros(d) if framed.m0 is None else as_vector(framed.m0, "m0", d).copy()
    C = np.eye(d) if framed.C0 is None else check_scale(framed.C0, d, spec.structure, "C0").copy()
    plan = _Plan(gammas=gammas, M=M_used, guard=guard, m=m, C=C)
    _average(spec, framed, plan)
    return plan


def _frame_step(spec: _FitSpec, framed):
    """(step size, M, guard) in the frame: the caller's M, else the frame's M'; the caller's step, else the frame's
    rule (:func:`refvi.optim.frame.default_step`; Cor 11 / 12's constant step for Thm 7's / Thm 10's theta average),
    whose steps use the constants of :func:`refvi.optim.frame.step_constants` and are guarded."""
    from refvi.optim import frame as _frame

    frame, method, estimator = framed.frame, spec.method, spec.estimator
    M = spec.M if spec.M is not None else frame.M
    step_size = spec.step_size
    if step_size is None:
        step_size = _frame.default_step(frame, method, estimator, framed.target.dim)
        if spec.average == "theta":  # Thm 7's / Thm 10's theta average is stated for a constant step
            step_size = "1/(M sqrt T)"
    if not (isinstance(step_size, str) and step_size in _FRAME_RULES):
        return step_size, M, None
    Ms, mus = _frame.step_constants(frame)
    if Ms is None or M != frame.M:  # an M given by the caller sets the rule's constants
        Ms, mus = M, frame.mu
    a = schedules.noise_constants(estimator, framed.target.dim, Ms)[0] if estimator in ("energy", "entropy") else None
    return schedules.step_sizes(step_size, framed.steps, M=Ms, mu=mus or None, a=a), M, "frame"


def _average(spec: _FitSpec, framed, plan: _Plan) -> None:
    """The average's kind and weights for ``plan.gammas`` (Thms 7, 10: theta weights; else the tail or last), with
    the note on a theta average that stays near the start."""
    target, T, d, estimator = framed.target, framed.steps, framed.target.dim, spec.estimator
    gammas = plan.gammas
    average = spec.average or "tail"
    kind = {"theta": "theta7" if spec.method == "prox-sgd" else "theta10"}.get(average, average)
    notes = []
    if kind in ("theta7", "theta10"):
        if not np.all(gammas == gammas[0]):
            raise ValueError("the theta-weighted average (Thms 7, 10) needs a constant step size")
        if estimator not in ("energy", "entropy"):
            raise ValueError("the theta-weighted average needs the noise constant a of Thm 26 (energy / entropy)")
        a = schedules.noise_constants(estimator, d, _smoothness(target, plan.M, "the theta average"))[0]
        weights = averaging.average_weights(kind, T, a=a, gamma=float(gammas[0]))
        th = averaging.theta(kind, a, float(gammas[0]))
        half = math.ceil(math.log(2.0) / -math.log(th)) if th < 1.0 else T
        if half < T // 4:
            notes.append(
                f"the theta-weighted average of Thm {7 if kind == 'theta7' else 10} weighs w^t by theta^(t+1), "
                f"theta = 1/(1 + {2 if kind == 'theta7' else 1} a gamma^2) = {th:.6g} (a = {a:.4g}, gamma = "
                f"{gammas[0]:.4g}): half of its weight is on the first {half} of the {T} iterates, so it stays near "
                f"the start; the theorem bounds this average, it does not make it a good estimate of w* (use "
                f"average='tail')"
            )
    else:
        weights = averaging.average_weights(kind, T, tail_fraction=spec.tail_fraction)
    plan.kind, plan.weights, plan.notes = kind, check_weights(weights, T), notes


@dataclasses.dataclass(kw_only=True)
class _Run:
    """What the loop stage returns: the final (m, C), the weighted averages, the records, the loop's seconds, the
    steps used (halved by the guard), the objective at the returned approximation and the guard's notes (``notes``
    before the outcome's, ``late_notes`` after the map back); for gd-*, the finished ``result`` instead."""

    m: Any = None
    C: Any = None
    acc_m: Any = None
    acc_C: Any = None
    trace: tuple = ()
    elapsed: float = 0.0
    quarters: Any = None
    gammas: Any = None
    f_end: float = float("nan")
    notes: list = dataclasses.field(default_factory=list)
    late_notes: list = dataclasses.field(default_factory=list)
    result: Any = None


def _run(spec: _FitSpec, framed, plan: _Plan) -> _Run:
    """Stage 4: the loop (Prox-SGD, seed 000 Def. 5; Proj-SGD, Def. 8; or seed 002's gradient descent), with the
    guard of ``plan.guard``: a run that blows up restarts with half the steps, up to 30 times."""
    if spec.method.startswith("gd-"):
        return _run_gd(spec, framed)
    target, T, d = framed.target, framed.steps, framed.target.dim
    every = max(1, T // 100) if spec.trace_every is None else int(spec.trace_every)
    mcode = "prox" if spec.method == "prox-sgd" else "proj"
    gammas, guard = plan.gammas, plan.guard
    main, aux = _generators(spec.seed)
    Ub = aux.standard_normal((int(spec.trace_samples), d))
    _preflight(target, plan.m, plan.C, Ub)
    state = main.bit_generator.state
    notes = []
    for attempt in range(_MAX_HALVINGS + 1):
        if attempt and guard == "frame":  # the frame's guard restarts as a new run: streams and weights afresh
            main, aux = _generators(spec.seed)
            Ub = aux.standard_normal((int(spec.trace_samples), d))
            plan.gammas = gammas
            _average(spec, framed, plan)
        else:
            main.bit_generator.state = state  # a restart replays the same base samples
        m, C = plan.m.copy(), plan.C.copy()
        run = _loop(target, mcode, spec, m, C, gammas, plan.weights, main, d, T, every, Ub, plan.M or 0.0, guard)
        f_end = float("nan")
        if run is not None:
            rm, rC = (run[0], run[1]) if plan.kind != "last" else (m, C)
            if np.all(np.isfinite(rm)) and np.all(np.isfinite(rC)):
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    f_end = _objective_estimate(target, rm, rC, Ub)
            f = run[3]
            if guard == "frame" and not (np.isfinite(f_end) and np.all(np.isfinite(f)) and not _climbed(f[-1], f[0])):
                run = None
        if run is not None:
            break
        if guard == "climb":
            notes.append(
                f"the default step {gammas[0]:.4g} made the iterates blow up (the energy estimator's noise grows "
                f"like (d+3)M^2 ||w - wbar||^2, seed 000 Thm 1, so the last iterate of SGD can diverge at "
                f"gamma = 1/M although Thm 7's theta-average stays bounded); restarted with half the step"
            )
        gammas = gammas / 2.0
    else:  # every run blew up: the last finite state is the start (in the frame's coordinates in a frame)
        where, what = (" in the affine frame", "steps") if guard == "frame" else ("", "default step")
        raise fastpath.DivergenceError(0, plan.m, plan.C, f"{spec.method}{where} ({what} halved {_MAX_HALVINGS} times)")
    late = []
    if guard == "frame" and attempt:
        late.append(
            f"the frame's step rule made the run blow up; restarted with the steps halved {attempt} "
            f"time(s) (the energy estimator's noise grows like (d+3)M^2 ||w - wbar||^2, seed 000 Thm 1)"
        )
    acc_m, acc_C, tr_steps, tr_obj, tr_m, tr_C, elapsed, quarters = run
    return _Run(
        m=m,
        C=C,
        acc_m=acc_m,
        acc_C=acc_C,
        trace=(tr_steps, tr_obj, tr_m, tr_C),
        elapsed=elapsed,
        quarters=quarters,
        gammas=gammas,
        f_end=f_end,
        notes=notes,
        late_notes=late,
    )


def _outcome(spec: _FitSpec, framed, plan: _Plan, run: _Run) -> FitResult:
    """Stage 5: the result in the loop's coordinates and how it ended (``_check_outcome``: a non-finite result
    is a DivergenceError, one that ended above its start a note and a ConvergenceWarning)."""
    if run.result is not None:  # gd-*
        return _check_outcome(run.result, run.f_end, "step size")
    avg = plan.kind != "last"
    tr_steps, tr_obj, tr_m, tr_C = run.trace
    res = FitResult(
        m=run.acc_m if avg else run.m.copy(),
        C=run.acc_C if avg else run.C.copy(),
        m_last=run.m,
        C_last=run.C,
        config=FitConfig(
            method=spec.method,
            estimator=spec.estimator,
            structure=spec.structure,
            steps=framed.steps,
            samples=int(spec.samples),
            step_sizes=run.gammas,
            average=plan.kind,
            seed=spec.seed,
        ),
        trace=FitTrace(
            steps=tr_steps,
            objective=tr_obj,
            m=np.array(tr_m) if spec.keep_iterates else None,
            C=np.array(tr_C) if spec.keep_iterates else None,
        ),
        seconds=run.elapsed,
        fast_path=spec.fast and fastpath.has_fast_path(framed.target, spec.estimator),
        notes=list(spec.notes) + plan.notes + run.notes,
        quarters=run.quarters,
    )
    return _check_outcome(res, run.f_end, "default step" if plan.guard == "climb" else "step size")


def _compile_user_functions(target) -> list[str]:
    """Compile what the target needs compiled before anything is timed: a ``CallableTarget`` of ``numba.njit``
    functions compiles the user's functions for refvi's kernels when its kernel plan is built (refvi's own kernels
    are cached on disk).  A note with the measured seconds when something was compiled, so that compilation is
    never counted as frame-search or loop time."""
    from refvi.targets.affine import AffineTarget

    base = target
    while isinstance(base, AffineTarget):
        base = base.base
    before = getattr(base, "compile_seconds", None)
    if not isinstance(target, Target) or before is None:
        return []
    target.kernels()
    spent = base.compile_seconds - before
    if spent <= 0.0:
        return []
    return [
        f"compiling the target's numba functions (logp and grad_logp, for float64 vectors) took {spent:.2f} s, "
        f"measured apart from the frame search and the loop (refvi's own kernels are cached on disk)"
    ]


def _check_diagnose(diagnose) -> int:
    if diagnose is False or diagnose is None:
        return 0
    if isinstance(diagnose, bool) or not isinstance(diagnose, (int, np.integer)) or (0 < diagnose < 20) or diagnose < 0:
        raise ValueError(f"diagnose must be 0 (no diagnostics) or a number of draws >= 20, got {diagnose!r}")
    return int(diagnose)


def _diagnose(res: FitResult, target, draws: int) -> FitResult:
    """Attach the diagnostics of :mod:`refvi.optim.diagnostics` to ``res``; a failed check becomes a note and a
    :class:`ConvergenceWarning` with its numbers and what to do."""
    if not draws:
        return res

    from refvi.optim import diagnostics

    with np.errstate(all="ignore"):
        diag = diagnostics.diagnose(target, res.m, res.C, quarters=res.quarters, draws=draws, seed=0)
    res.diagnostics = diag
    if not diag.converged:
        msg = "the fit did not pass its diagnostics: " + "; ".join(diag.messages)
        if res.average in ("theta7", "theta10") and any("stays near the start" in n for n in res.notes):
            # the real cause, whatever the checks saw: the returned average is (nearly) the start
            msg = (
                f"the returned {res.average} average is essentially the start: Thm {res.average[5:]}'s weights "
                f"theta^(t+1) put half their mass on the first iterates (see the note above); the iterates themselves "
                f"are fine or not as the diagnostics say, use average='tail' for an estimate of w*. " + msg
            )
        res.notes.append(msg)
        warn_at_caller(msg, ConvergenceWarning)
    return res


def _preflight(target, m, C, Ub):
    """The target's logp and grad_logp must be finite where the run starts (the trace's samples of q_{w^0}): a
    non-finite value there is a problem of the target, reported as itself, not as a step size to halve."""
    from refvi import estimators as _est
    from refvi._checks import NonFiniteError

    try:
        _objective_estimate(target, m, C, Ub[:8])
        _est.energy(target, m, C, Ub[:8], "full")
    except NonFiniteError as exc:
        raise NonFiniteError(
            f"at the starting point w^0 (m0, C0), before any step: {exc}; this is a problem of the "
            f"target's functions, not of the step size"
        ) from exc


class ConvergenceWarning(RuntimeWarning):
    """A run ended with an approximation whose objective is far above its starting point's."""


def _climbed(f, f0) -> bool:
    """The objective ended above its start by more than estimation noise: f > f0 + 1 + |f0| / 10 (the same margin
    the default step's guard uses)."""
    return f > f0 + 1.0 + 0.1 * abs(f0)


def _check_outcome(res: FitResult, f: float, what: str) -> FitResult:
    """Every run, whatever its step: a non-finite returned approximation (objective ``f`` at the returned (m, C)) is
    a DivergenceError; one whose objective ended far above the start's (``res.trace_objective[0]``) gets a note, a
    ConvergenceWarning and ``ended_worse = True``."""

    f0 = float(res.trace_objective[0]) if res.trace_objective.size else float("nan")
    if not (np.isfinite(f) and np.all(np.isfinite(res.m)) and np.all(np.isfinite(res.C))):
        bad = np.flatnonzero(~np.isfinite(res.trace_objective))
        at = f"first non-finite objective at step {int(res.trace_steps[bad[0]])}; " if bad.size else ""
        raise fastpath.DivergenceError(
            res.steps,
            res.m,
            res.C,
            res.method,
            reason=f"the returned approximation has a non-finite objective ({at}"
            f"{what} {res.step_sizes[0]:.4g} too large for this target?)",
        )
    if np.isfinite(f0) and _climbed(f, f0):
        msg = (
            f"the run ended worse than it started: objective estimate {f:.6g} at the returned approximation vs "
            f"{f0:.6g} at w^0 ({what} {res.step_sizes[0]:.4g} too large for this target?)"
        )
        res.notes.append(msg)
        res.ended_worse = True
        warn_at_caller(msg, ConvergenceWarning)
    return res


_MAX_HALVINGS = 30


def _loop(target, mcode, spec: _FitSpec, m, C, gammas, weights, main, d, T, every, Ub, M, guard):
    """The chunked run; returns None when ``guard`` is on and the run blew up (an update or an objective estimate
    not finite, or, with ``guard="climb"``, an objective estimate above f(w^0) + 1 + |f(w^0)|/10: a stable run does
    not climb above its start by more than its noise), raises DivergenceError for a non-finite iterate otherwise."""
    estimator, structure, samples, fast = spec.estimator, spec.structure, spec.samples, spec.fast
    keep_iterates, method = spec.keep_iterates, spec.method
    acc_m, acc_C = weights[0] * m, weights[0] * C
    f0 = _objective_estimate(target, m, C, Ub)
    tr_steps, tr_obj, tr_m, tr_C = [0], [f0], [m.copy()], [C.copy()]
    # sums of the last two quarters' records: (m sums, C sums, counts)
    q_m, q_C, q_n = [np.zeros(d), np.zeros(d)], [np.zeros((d, d)), np.zeros((d, d))], [0, 0]
    bar = _progress(T, spec.progress, method)
    elapsed = 0.0
    per_step = None
    done = 0
    try:
        while done < T:
            n = min(every, T - done)
            # the record's n steps run in pieces of about _SLICE seconds (a compiled loop does not see Ctrl-C; Python
            # does between pieces); the base samples are drawn piece by piece from the same stream, so the run is the
            # same bit for bit whatever the pieces
            k = 0
            while k < n:
                piece = min(n - k, 8 if per_step is None else max(1, int(_SLICE / max(per_step, 1e-9))))
                _check_interrupt()
                U = main.standard_normal((piece, samples, d))
                s0 = time.perf_counter()
                status = fastpath.run(
                    mcode,
                    target,
                    estimator,
                    structure,
                    m,
                    C,
                    U,
                    gammas[done + k : done + k + piece],
                    weights[done + k : done + k + piece + 1],
                    acc_m,
                    acc_C,
                    M,
                    fast,
                )
                took = time.perf_counter() - s0
                elapsed += took
                per_step = took / piece  # the last piece's rate (the first piece may include compiling the loop)
                if status >= 0:
                    if guard:
                        return None
                    raise fastpath.DivergenceError(
                        done + k + status, m, C, "Prox-SGD" if mcode == "prox" else "Proj-SGD"
                    )
                k += piece
            done += n
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                f = _objective_estimate(target, m, C, Ub)
            if guard == "climb" and not (np.isfinite(f) and not _climbed(f, f0)):
                return None
            if guard and not np.isfinite(f):
                return None
            if not np.isfinite(f):
                raise fastpath.DivergenceError(
                    done,
                    m,
                    C,
                    "Prox-SGD" if mcode == "prox" else "Proj-SGD",
                    reason=f"the objective estimate at w^{done} is not finite (step size "
                    f"{gammas[0]:.4g} too large for this target?)",
                )
            tr_steps.append(done)
            tr_obj.append(f)
            if 2 * done > T:
                i = 0 if 4 * done <= 3 * T else 1
                q_m[i] += m
                q_C[i] += C
                q_n[i] += 1
            if keep_iterates:
                tr_m.append(m.copy())
                tr_C.append(C.copy())
            bar.update(n)
    finally:
        bar.close()
    quarters = tuple((q_m[i] / q_n[i], q_C[i] / q_n[i]) for i in (0, 1)) if q_n[0] and q_n[1] else None
    return acc_m, acc_C, np.array(tr_steps), np.array(tr_obj), tr_m, tr_C, elapsed, quarters


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(T, progress, desc):
    if not ((progress is None or bool(progress)) and sys.stderr.isatty()):
        return _NoBar()
    try:  # imported only when shown: tqdm.auto imports asyncio, about 0.2 s in a fresh process
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return _NoBar()
    # progress=None (the default): on an interactive terminal, shown only once a run has lasted 2 s
    return tqdm(total=T, desc=desc, unit="step", leave=False, delay=2.0 if progress is None else 0.0)


def _trajectory_quarters(ms, Cs, idx):
    """(m, C) averages of the recorded iterates of the last two quarters (the records at the indices idx)."""
    T = idx[-1]
    q3 = [i for i in idx if 2 * i > T and 4 * i <= 3 * T]
    q4 = [i for i in idx if 4 * i > 3 * T]
    if not q3 or not q4:
        return None
    return (ms[q3].mean(axis=0), Cs[q3].mean(axis=0)), (ms[q4].mean(axis=0), Cs[q4].mean(axis=0))


def _run_gd(spec: _FitSpec, framed) -> _Run:
    """The loop stage of seed 002's deterministic methods (:func:`refvi.optim.gradient_descent.gradient_descent`,
    exact gradients): the result with its records, and the exact objective at the end (finiteness only when the
    target has no exact objective)."""
    kind, T, target = spec.method[3:], framed.steps, framed.target
    t0 = time.perf_counter()
    r = _gd.gradient_descent(
        target,
        method=kind,
        steps=T,
        step=spec.step_size,
        m0=spec.m0,
        C0=spec.C0,
        M=spec.M,
        theorem=(spec.theorem == "002.thm6"),
    )
    secs = time.perf_counter() - t0
    every = 1 if spec.trace_every is None else max(1, int(spec.trace_every))
    idx = np.unique(np.r_[np.arange(0, T + 1, every), T])
    obj = r.objective[idx] if r.objective is not None else np.full(idx.size, np.nan)
    notes = (
        ["naive gradient descent has no convergence guarantee (seed 002 §5.3; it can cycle)"] if kind == "naive" else []
    )
    if kind == "projected":
        notes.append(
            "projected gradient descent on full C: W_M is not convex, Thm 6's projected half is unproven (E002-4)"
        )
    keep = spec.keep_iterates
    res = FitResult(
        m=r.m.copy(),
        C=r.C.copy(),
        m_last=r.m.copy(),
        C_last=r.C.copy(),
        config=FitConfig(
            method=spec.method,
            estimator=None,
            structure=_gd._STRUCT[kind],
            steps=T,
            samples=0,
            step_sizes=np.full(T, r.step),
            average="last",
            seed=None,
        ),
        trace=FitTrace(steps=idx, objective=obj, m=r.ms[idx] if keep else None, C=r.Cs[idx] if keep else None),
        seconds=secs,
        fast_path=False,
        notes=notes,
        quarters=_trajectory_quarters(r.ms, r.Cs, idx),
    )
    # no exact objective for this target: finiteness only, and gradient_descent raises (divergence, with the step)
    # rather than return a non-finite iterate
    f = 0.0 if r.objective is None else float(r.objective[-1])
    return _Run(result=res, f_end=f)
