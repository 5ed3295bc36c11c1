"""Issue 28: a user's own model runs at built-in speed.  ``refvi.fit`` with defaults, 10,000 steps, end to end (frame
search, preflight, trace, result), on the README's own-model example (njit CallableTarget, d = 6, Laplace frame,
fused loop of refvi.kernels.fused) against refvi's built-in linear regression on the same X, y with sigma fixed
(d = 5, its own sgd_loop kernel), measured in the same run.  Tracked ratio: user model / built-in ("builtin" is
this group's reference in track.py).  Goal: <= 2.
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np
import pytest

import refvi

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import user_model  # noqa: E402

STEPS = 10_000
GROUP = f"refvi.fit end to end, own njit model (sblrc, d=6) vs built-in linear regression (d=5), {STEPS} steps"


@pytest.fixture(scope="module")
def targets():
    return {"refvi": user_model.user_target(), "builtin": user_model.builtin_target()}


@pytest.mark.parametrize("impl", ("refvi", "builtin"))
def test_own_model_end_to_end(benchmark, targets, impl):
    benchmark.group = GROUP
    t = targets[impl]
    res = benchmark.pedantic(lambda: refvi.fit(t, steps=STEPS, seed=0, progress=False), rounds=3, warmup_rounds=1)
    assert res.fast_path and np.all(np.isfinite(res.m))
    assert res.frame is not None                    # every default run is framed (the built-in one too)


def _best_of(fn, n):
    best = np.inf
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def test_own_model_within_2x_of_the_builtin_loop(benchmark, targets):
    """The done-when figure: per step over 10,000 steps, end to end, the user's njit model costs at most twice the
    built-in linear regression's fused loop (best of 7 interleaved calls each, after a warm-up call: compilation
    excluded).  A timing claim: it runs with the benchmarks (--benchmark-enable, track.py), not in the default run."""
    if benchmark.disabled:
        pytest.skip("timing check: run with --benchmark-enable")
    fits = {k: (lambda t=t: refvi.fit(t, steps=STEPS, seed=0, progress=False)) for k, t in targets.items()}
    for f in fits.values():
        f()
    user = builtin = np.inf
    for _ in range(7):                     # interleaved: both see the same load
        user, builtin = min(user, _best_of(fits["refvi"], 1)), min(builtin, _best_of(fits["builtin"], 1))
    assert user <= 2.0 * builtin, (f"user {1e6 * user / STEPS:.2f} us/step vs built-in {1e6 * builtin / STEPS:.2f} "
                                   f"us/step: ratio {user / builtin:.2f}")
