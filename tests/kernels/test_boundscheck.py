"""The compiled loops index only what they own: every online learner run, recording its trajectory over more than one
chunk (``refvi.online._stream.CHUNK`` rounds), and ``refvi.fit``'s framed Prox-SGD loop on a built-in target and on a
user model, each in a fresh process with ``NUMBA_BOUNDSCHECK=1`` and an empty Numba cache, so each kernel is compiled
with bounds checks.  Numba does not check bounds otherwise: a buffer one element short, a chunk's view one row short or
a read one row past the base samples computes the same numbers in every other test while touching memory it does not
own."""

import os
import subprocess
import sys
import textwrap

from refvi.kernels import framed, online  # noqa: F401  (what this file checks, for the mutation driver's map)
from refvi.online import _stream

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from refvi.online import NGVI, OGA, OGAEL, SVA, SVB, SVAFull, _stream

    rng = np.random.default_rng(0)
    T = _stream.CHUNK + 7  # two chunks: the second starts inside the recorded trajectory
    X = rng.uniform(-1.0, 1.0, (T, 3))
    y = np.where(rng.random(T) < 0.5, -1.0, 1.0)
    learners = [
        lambda loss: SVA(3, loss, eta=0.1),
        lambda loss: SVB(3, loss, schedule="constant", eta=0.1),
        lambda loss: OGA(3, loss, eta=0.1),
        lambda loss: OGAEL(3, loss, eta=0.1),
        lambda loss: NGVI(3, loss, eta=0.1, alpha=1.0, sbox=1.0),
        lambda loss: SVAFull(3, loss, eta=0.1),
    ]
    for make in learners:
        for loss in ("hinge", "squared"):
            res = make(loss).run(X, y, record=True)
            assert np.all(np.isfinite(res.losses)) and res.M.shape == (T + 1, 3)
    print("ok")
    """
)


FRAMED = textwrap.dedent(
    """
    import numba
    import numpy as np
    import refvi
    from refvi.targets import CallableTarget, LinearRegression

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    target = LinearRegression(X, X @ np.ones(3) + rng.standard_normal(20))

    @numba.njit
    def logp(z):
        return -0.5 * (z[0] ** 2 + 4.0 * (z[1] - z[0]) ** 2 + z[2] ** 2)

    @numba.njit
    def grad(z):
        return np.array([-z[0] + 4.0 * (z[1] - z[0]), -4.0 * (z[1] - z[0]), -z[2]])

    user = CallableTarget(logp, grad, 3)
    for t in (target, user):
        for samples in (1, 3):  # the last step of each run prepares no next step: U has T rows
            res = refvi.fit(t, steps=400, samples=samples, seed=1)
            assert res.fast_path and np.all(np.isfinite(res.m)) and np.all(np.isfinite(res.C))
    print("ok")
    """
)


def _run_bounds_checked(script, tmp_path):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_the_online_kernels_stay_in_bounds(tmp_path):
    _run_bounds_checked(SCRIPT, tmp_path)
    assert _stream.CHUNK < 10**6  # the script's two chunks stay small


def test_the_framed_loop_stays_in_bounds(tmp_path):
    _run_bounds_checked(FRAMED, tmp_path)
