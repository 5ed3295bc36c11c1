"""Step-size rules of seed 000 (Thms 6, 7, 9, 10, 27, Cor 11, 12, 30) and seed 002 (Thm 6), as arrays.

Indexing: step t = 0, ..., T-1 maps w^t to w^{t+1} with gamma_t (so the decaying rules start at
(2t + 1)/(t + 1)^2 = 1 for t = 0, as in the proof of Thm 27).  Every rule returns a float64 array of length T.

Rules (``step_sizes(rule, T, ...)``):

* ``"constant"``     gamma_t = gamma.
* ``"1/(M sqrt T)"`` gamma = 1/(M sqrt(T))        (Thm 7 "in particular", Cor 11).
* ``"1/sqrt T"``     gamma = 1/sqrt(T)            (Thm 10 Eq. 14, Cor 12).
* ``"thm6"``         min{mu/(2a), (1/mu)(2t+1)/(t+1)^2}   (Thm 6, min form as printed).
* ``"thm9"``         min{mu/(2a), (2/mu)(2t+1)/(t+1)^2}   (Thm 9, min form as printed).
* ``"thm27"``        1/(2L) for t < t* = 4 floor(L/mu), then (1/mu)(2t+1)/(t+1)^2   (Thm 27, switching form).
* ``"thm6-switch"``  Thm 27 with L = a/mu (the mapping in the proof of Thm 6).
* ``"thm9-switch"``  Thm 27 with L = a/mu and mu_hat = mu/2 (the mapping in the proof of Thm 9).
* ``"A log T / T"``  gamma = A log(T)/T          (Cor 30; needs A >= 1/mu and T/log T >= 2aA/mu).

``noise_constants`` gives the quadratic-bound constants (a, b) of Thm 26 (b of g_ent with erratum E000-3: 2dL).
``check_theorem`` raises ValueError when a step-size array is outside the range a named theorem allows.
"""

from __future__ import annotations

import math

import numpy as np

from refvi._checks import positive_scalar

RULES = ("constant", "1/(M sqrt T)", "1/sqrt T", "thm6", "thm9", "thm27", "thm6-switch", "thm9-switch", "A log T / T")

THEOREMS = ("000.thm6", "000.thm7", "000.thm9", "000.thm10", "000.cor30", "002.thm6")


def check_steps(T) -> int:
    """T must be a positive integer (T <= 0 is an error, not an empty run)."""
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)):
        raise TypeError(f"steps T must be an integer, got {type(T).__name__}")
    if T <= 0:
        raise ValueError(f"steps T must be >= 1, got {T}")
    return int(T)


def _need(name, value, rule):
    if value is None:
        raise ValueError(
            f"{rule!r} needs {name} (e.g. the target's smoothness M or strong "
            f"convexity mu, or the noise constant a of Thm 26); none was given"
        )
    return positive_scalar(value, name)


def decaying(T: int, mu: float, scale: float = 1.0) -> np.ndarray:
    """(scale/mu)(2t+1)/(t+1)^2 for t = 0..T-1."""
    t = np.arange(T, dtype=np.float64)
    return (scale / mu) * (2.0 * t + 1.0) / (t + 1.0) ** 2


def switching(T: int, L: float, mu: float) -> np.ndarray:
    """Thm 27: 1/(2L) for t < t* = 4 floor(L/mu), then (1/mu)(2t+1)/(t+1)^2."""
    t_star = 4 * math.floor(L / mu)
    g = decaying(T, mu)
    g[: min(t_star, T)] = 1.0 / (2.0 * L)
    return g


def step_sizes(rule, T, *, gamma=None, M=None, mu=None, a=None, L=None, A=None) -> np.ndarray:
    """The step sizes gamma_0..gamma_{T-1} of ``rule`` (see the module docstring)."""
    T = check_steps(T)
    if not isinstance(rule, str):
        raise TypeError(f"rule must be a string, one of {RULES}")
    if rule == "constant":
        return np.full(T, _need("gamma", gamma, rule))
    if rule == "1/(M sqrt T)":
        return np.full(T, 1.0 / (_need("M", M, rule) * math.sqrt(T)))
    if rule == "1/sqrt T":
        return np.full(T, 1.0 / math.sqrt(T))
    if rule in ("thm6", "thm9"):
        mu, a = _need("mu", mu, rule), _need("a", a, rule)
        return np.minimum(mu / (2.0 * a), decaying(T, mu, 1.0 if rule == "thm6" else 2.0))
    if rule == "thm27":
        return switching(T, _need("L", L, rule), _need("mu", mu, rule))
    if rule == "thm6-switch":
        mu, a = _need("mu", mu, rule), _need("a", a, rule)
        return switching(T, a / mu, mu)
    if rule == "thm9-switch":
        mu, a = _need("mu", mu, rule), _need("a", a, rule)
        return switching(T, a / mu, mu / 2.0)
    if rule == "A log T / T":
        A = _need("A", A, rule)
        if T < 2:
            raise ValueError("rule 'A log T / T' needs T >= 2 (log 1 = 0 gives a zero step)")
        return np.full(T, A * math.log(T) / T)
    raise ValueError(f"unknown step-size rule {rule!r}; choose one of {RULES}")


def noise_constants(
    estimator: str, d: int, M: float, dist_sq: float | None = None, L: float | None = None
) -> tuple[float, float | None]:
    """(a, b) with E||g||^2 <= a ||w - w*||^2 + b (seed 000 Thm 26).

    energy: a = 2(d+3)M^2, b = 2(d+3)M^2 ||w* - wbar||^2;  entropy (on W_L): a = 4(d+3)M^2,
    b = 4(d+3)M^2 ||w* - wbar||^2 + 2 d L (erratum E000-3: the table prints d L).  ``dist_sq`` = ||w* - wbar||^2;
    b is None when it is not given.
    """
    M = positive_scalar(M, "M")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"the dimension d must be an integer >= 1, got {d!r}")
    if dist_sq is not None:
        dist_sq = positive_scalar(dist_sq, "dist_sq (||w* - wbar||^2)", allow_zero=True)
    if estimator == "energy":
        a = 2.0 * (d + 3) * M * M
        return a, (None if dist_sq is None else a * dist_sq)
    if estimator == "entropy":
        a = 4.0 * (d + 3) * M * M
        if dist_sq is None:
            return a, None
        return a, a * dist_sq + 2.0 * d * positive_scalar(M if L is None else L, "L")
    raise ValueError(f"Thm 26 gives (a, b) for the 'energy' and 'entropy' estimators only, not {estimator!r}")


def check_theorem(theorem: str, gammas: np.ndarray, *, M=None, mu=None, a=None, A=None) -> None:
    """Raise ValueError naming the violated condition when ``gammas`` is outside ``theorem``'s step range.

    000.thm6: constant gamma in (0, min{mu/(2a), 1/mu}];  000.thm7: constant gamma in (0, 1/M];
    000.thm9: constant gamma in (0, min{mu/(2a), 2/mu}];  000.thm10: constant gamma > 0;
    000.cor30: gamma = A log T / T with A >= 1/mu and T/log T >= 2aA/mu;
    002.thm6: the prox method needs lambda in (0, 1/M] (projected: (0, 1/(2M)], checked by the caller).
    """
    g = np.asarray(gammas, dtype=np.float64)
    if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise ValueError("step sizes must be a non-empty array of finite positive numbers")
    if theorem not in THEOREMS:
        raise ValueError(f"unknown theorem {theorem!r}; step ranges are known for {THEOREMS}")
    constant = bool(np.all(g == g[0]))
    if theorem in ("000.thm6", "000.thm7", "000.thm9", "000.thm10") and not constant:
        raise ValueError(f"{theorem} is stated for a constant step size; got a varying schedule")
    gam = float(g[0])
    if theorem == "000.thm6":
        mu, a = _need("mu", mu, theorem), _need("a", a, theorem)
        hi = min(mu / (2 * a), 1 / mu)
        if gam > hi:
            raise ValueError(f"000.thm6 needs gamma in (0, min(mu/(2a), 1/mu)] = (0, {hi:.6g}]; got {gam:.6g}")
    elif theorem == "000.thm7" or theorem == "002.thm6":
        M = _need("M", M, theorem)
        if np.max(g) > 1 / M:
            raise ValueError(f"{theorem} needs the step in (0, 1/M] = (0, {1 / M:.6g}]; got {np.max(g):.6g}")
    elif theorem == "000.thm9":
        mu, a = _need("mu", mu, theorem), _need("a", a, theorem)
        hi = min(mu / (2 * a), 2 / mu)
        if gam > hi:
            raise ValueError(f"000.thm9 needs gamma in (0, min(mu/(2a), 2/mu)] = (0, {hi:.6g}]; got {gam:.6g}")
    elif theorem == "000.cor30":
        mu, a, A = _need("mu", mu, theorem), _need("a", a, theorem), _need("A", A, theorem)
        T = g.size
        if A < 1 / mu:
            raise ValueError(f"000.cor30 needs A >= 1/mu = {1 / mu:.6g}; got A = {A:.6g}")
        if T / math.log(T) < 2 * a * A / mu:
            raise ValueError(f"000.cor30 needs T/log T >= 2aA/mu = {2 * a * A / mu:.6g}; got {T / math.log(T):.6g}")
