"""A user's numba.njit model (per point or batched) reaches refvi's kernels by the address of its compiled code
(refvi.kernels.userfn): in a new process, fitting a model refvi has never seen compiles the model's two functions
and none of refvi's kernels (they are loaded from the disk cache), and fit notes the compile time apart from the
frame search.  Functions of other return types go through an adapter and give what the same density gives as
plain Python functions."""

import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

import refvi
from refvi import estimators as E
from refvi.kernels import composed, energy, fused, neglogp
from refvi.targets import CallableTarget

_MODEL = """
import numba, numpy as np, refvi
from refvi.kernels import composed, energy, framed, fused, neglogp
from refvi.targets import CallableTarget
P = np.array([[2.0, 0.5], [0.5, 1.0]]) * {scale}

@numba.njit
def logp(z):
    return -0.5 * z @ (P @ z) - 0.1 * z[0] ** 4

@numba.njit
def grad_logp(z):
    g = -(P @ z)
    g[0] -= 0.4 * z[0] ** 3
    return g

@numba.njit
def logp_batch(Z):
    return np.array([logp(z) for z in Z])

@numba.njit
def grad_batch(Z):
    G = np.empty_like(Z)
    for s in range(Z.shape[0]):
        G[s] = grad_logp(Z[s])
    return G

res = refvi.fit(CallableTarget(logp, grad_logp, 2), steps=300, seed=0)
assert res.fast_path and res.frame is not None
batched = refvi.fit(CallableTarget(logp_batch=logp_batch, grad_batch=grad_batch, dim=2), steps=300, seed=0)
assert batched.fast_path and batched.frame is not None
kernels = (energy.callable_grad_rows, energy.callable_energy, neglogp.callable_neglogp,
           composed.affine_callable_energy, composed.affine_callable_neglogp, fused.callable_loop,
           composed.batch_energy, composed.batch_neglogp, composed.affine_batch_energy, composed.affine_batch_neglogp,
           framed.framed_prox_loop)
print("MISSES", sum(sum(k.stats.cache_misses.values()) for k in kernels))
print("HITS", sum(sum(k.stats.cache_hits.values()) for k in kernels))
print("LOOP", sum(framed.framed_prox_loop.stats.cache_hits.values()))  # the framed fit's loop, user gradient by address
print("NOTE", [n for n in res.notes if n.startswith("compiling the target's numba functions")])
print("FRAME", res.notes[0].startswith("laplace frame"))
"""


def _fresh_process(scale):
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_MODEL.format(scale=scale))],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


@pytest.mark.slow  # two fresh processes, the first compiling every user-model kernel on a cold cache: about 70 s
def test_a_new_numba_model_compiles_only_its_own_functions():
    _fresh_process(1.0)  # fills the cache if this checkout has none yet
    seen = _fresh_process(3.0)  # another model (other constants: other compiled functions), a new process
    assert seen["MISSES"] == "0"  # no kernel of refvi compiled ...
    assert int(seen["HITS"]) >= 8 and seen["LOOP"] == "1"  # ... the ones it ran loaded from the disk cache
    assert "took" in seen["NOTE"] and "apart from the frame search" in seen["NOTE"]
    assert seen["FRAME"] == "True"  # the frame's note is still the first


def test_the_plan_runs_the_cached_loop_by_address():
    t = CallableTarget(_lp, _gr, 2)
    plan = t.kernels()
    assert plan.loop[0] is fused.callable_loop and plan.energy[0] is energy.callable_energy
    assert plan.neglogp[0] is neglogp.callable_neglogp
    assert all(isinstance(a, int) for a in (plan.energy[1][0], plan.neglogp[1][0]))
    framed = refvi.fit(t, steps=200, seed=1)
    assert framed.frame.target(t).kernels().neglogp[0] is composed.affine_callable_neglogp
    # compiled once, when the plan was built: the next fit has nothing to compile and says nothing about it
    assert not any(n.startswith("compiling the target's") for n in framed.notes)


P2 = np.array([[2.0, 0.5], [0.5, 1.0]])


@numba.njit
def _lp(z):
    return -0.5 * z @ (P2 @ z)


@numba.njit
def _gr(z):
    return -(P2 @ z)


@numba.njit
def _lp32(z):  # a float32 value: called through the adapter
    return np.float32(-0.5 * z @ (P2 @ z))


@numba.njit
def _lp32_as64(z):  # the same values as a float
    return np.float64(np.float32(-0.5 * z @ (P2 @ z)))


@numba.njit
def _gr_strided(z):  # a strided (non-contiguous) array: called through the adapter
    G = np.empty((2, 2))
    G[:, 0] = -(P2 @ z)
    G[:, 1] = 0.0
    return G[:, 0]


def test_other_return_types_go_through_an_adapter_with_the_same_values():
    adapted = CallableTarget(_lp32, _gr_strided, 2)
    plain = CallableTarget(_lp32_as64, _gr, 2)  # the same values, of the fixed types: no adapter
    assert adapted.kernels().loop is not None and plain.kernels().loop is not None
    assert _gr_strided not in adapted._owners and _lp32 not in adapted._owners  # adapters own the code
    assert _gr in plain._owners and _lp32_as64 in plain._owners
    rng = np.random.default_rng(0)
    m, C, U = rng.standard_normal(2), np.tril(rng.standard_normal((2, 2))) + 2 * np.eye(2), rng.standard_normal((5, 2))
    for a, b in zip(E.energy(adapted, m, C, U, "tril"), E.energy(plain, m, C, U, "tril"), strict=True):
        np.testing.assert_array_equal(a, b)  # the adapter converts exactly: equal to the last bit
    from refvi.optim.fit import _neglogp

    Z = U @ C.T + m
    np.testing.assert_array_equal(_neglogp(adapted, Z), _neglogp(plain, Z))
    for frame in (None, "auto"):
        r_a = refvi.fit(adapted, steps=200, seed=2, frame=frame, M=None if frame else 3.0, diagnose=0)
        r_p = refvi.fit(plain, steps=200, seed=2, frame=frame, M=None if frame else 3.0, diagnose=0)
        assert r_a.fast_path and r_p.fast_path
        np.testing.assert_array_equal(r_a.m, r_p.m)
        np.testing.assert_array_equal(r_a.C, r_p.C)


def test_compiling_an_adapter_counts_as_compiling_even_when_the_users_function_was_compiled_already():
    """A model whose function returns another type than the kernels call for gets an adapter compiled for it: that
    compilation counts (``address`` says it compiled, and its seconds go to ``compile_seconds``) even when the user's
    own function was compiled before, by a call of theirs."""
    from refvi.kernels import userfn

    @numba.njit
    def lp32(z):
        return np.float32(-0.5 * (z[0] * z[0] + z[1] * z[1]))

    lp32(np.zeros(2))  # the user's own call compiles lp32 for a float64 vector
    addr, owner, compiled, seconds = userfn.address(lp32, "logp")
    assert owner is not lp32 and compiled and seconds > 0
    again = userfn.address(lp32, "logp")  # a new adapter per call: compiled again, counted again
    assert again[2] and again[0] != 0
