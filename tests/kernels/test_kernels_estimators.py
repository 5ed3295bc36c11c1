"""Numba energy / entropy / STL / score kernels: agreement with the NumPy reference path, determinism,
composition inside user @njit code, and bad input through the public API (refvi.estimators)."""

import _numpy_reference as npref  # tests/_numpy_reference.py: the plain-NumPy references
import numba
import numpy as np
import pytest

from refvi import estimators as E
from refvi.kernels import energy as ke
from refvi.kernels import estimators as kest
from refvi.kernels._fastmath_exp import exp_nonpos, log1pexp, sigmoid_neg
from refvi.kernels.structure import SYM, TRIL, project_V, structure_code
from refvi.targets import (
    CallableTarget,
    CosineQuadratic,
    Gaussian,
    HierarchicalLogisticRegression,
    LinearRegression,
    LogisticRegression,
)

KINDS = ("energy", "entropy", "stl", "score")


def _labels(rng, n):
    return np.where(rng.random(n) < 0.5, -1.0, 1.0)


def make_target(name, rng):
    N, d = 30, 4
    X = rng.standard_normal((N, d))
    if name == "gaussian":
        A = rng.standard_normal((d, d))
        return Gaussian(rng.standard_normal(d), A @ A.T + d * np.eye(d))
    if name == "linear":
        return LinearRegression(X, rng.standard_normal(N), noise_scale=0.7, prior_scale=1.3)
    if name == "logistic":
        return LogisticRegression(X, _labels(rng, N), prior_scale=1.5)
    if name == "hierarchical":
        return HierarchicalLogisticRegression(X[:, :2], _labels(rng, N), rng.integers(0, 3, N), 1.2, 0.8)
    if name == "cosine":
        return CosineQuadratic(1.3, rng.standard_normal(d), 0.3, 2.0, rng.standard_normal(d))
    raise KeyError(name)


TARGETS = ("gaussian", "linear", "logistic", "hierarchical", "cosine")


def make_scale(rng, d, structure):
    """A well-conditioned C in the domain W of V (cond(C) <= ~3, so inverses agree to ~1e-15)."""
    A = 0.3 * rng.standard_normal((d, d)) / np.sqrt(d)
    if structure == "tril":
        C = np.tril(A)
        np.fill_diagonal(C, 1.0 + rng.random(d))
    elif structure == "sym":
        C = A + A.T + 2.0 * np.eye(d)
    elif structure == "diag":
        C = np.diag(1.0 + rng.random(d))
    else:
        C = A + 1.5 * np.eye(d)
    return C


def assert_agree(got, ref):
    # The kernels sum in a different order (and use a different but ~1 ulp exp); each output entry is a sum of
    # O(N d) terms, so the error is a few ulp of the largest magnitude: rtol 1e-12 with atol 1e-12 * scale.
    for g, r in zip(got, ref):
        scale = max(1.0, float(np.max(np.abs(r))))
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12 * scale)


@pytest.mark.parametrize("name", TARGETS)
@pytest.mark.parametrize("structure", ("tril", "sym", "full", "diag"))
@pytest.mark.parametrize("S", (1, 7))
def test_kernels_match_numpy_reference(name, structure, S):
    rng = np.random.default_rng([11, TARGETS.index(name), S, len(structure)])
    t = make_target(name, rng)
    m = rng.standard_normal(t.dim)
    C = make_scale(rng, t.dim, structure)
    U = rng.standard_normal((S, t.dim))
    assert E._energy_kernel(t) is not None and E._neglogp_kernel(t) is not None   # really on the kernel path
    for kind in KINDS:
        assert_agree(E.ESTIMATORS[kind](t, m, C, U, structure), npref.numpy_estimate(kind, t, m, C, U, structure))


@pytest.mark.parametrize("S", (1, 9))
def test_logistic_extreme_logits_match_reference(S):
    """Logits of magnitude up to ~2000 exercise the exp underflow branch (e^{-|a|} -> 0 below -708)."""
    rng = np.random.default_rng(5)
    N, d = 200, 3
    X = rng.standard_normal((N, d)) * np.logspace(-3, 2.5, N)[:, None]
    t = LogisticRegression(X, _labels(rng, N), prior_scale=2.0)
    m = rng.standard_normal(d) * 3
    C = np.diag([1.0, 0.5, 2.0])
    U = rng.standard_normal((S, d))
    for kind in KINDS:
        got = E.ESTIMATORS[kind](t, m, C, U, "tril")
        assert all(np.all(np.isfinite(g)) for g in got)
        assert_agree(got, npref.numpy_estimate(kind, t, m, C, U, "tril"))


def test_logistic_large_batch_paths_agree():
    """The fused S = 1 loop and the S > 1 matrix-product path compute the same mean."""
    rng = np.random.default_rng(8)
    t = make_target("logistic", rng)
    m, C = rng.standard_normal(t.dim), make_scale(rng, t.dim, "tril")
    U = rng.standard_normal((6, t.dim))
    per_row = [ke.logistic_energy(m, C, U[s:s + 1], t.X, t.y, t.prior_scale ** -2) for s in range(6)]
    batch = ke.logistic_energy(m, C, U, t.X, t.y, t.prior_scale ** -2)
    assert_agree(batch, (np.mean([p[0] for p in per_row], axis=0), np.mean([p[1] for p in per_row], axis=0)))


@numba.njit
def _nb_logp(z):
    return -0.5 * np.sum(z * z) - np.cos(z[0])


@numba.njit
def _nb_grad(z):
    g = -z.copy()
    g[0] += np.sin(z[0])
    return g


def test_numba_callable_target_runs_in_kernel_and_matches_python_path():
    t_nb = CallableTarget(_nb_logp, _nb_grad, 3)
    t_py = CallableTarget(lambda z: _nb_logp.py_func(z), lambda z: _nb_grad.py_func(z), 3)
    assert t_nb.is_numba and E._energy_kernel(t_nb) is not None
    assert not t_py.is_numba and E._energy_kernel(t_py) is None
    rng = np.random.default_rng(3)
    m, C, U = rng.standard_normal(3), make_scale(rng, 3, "tril"), rng.standard_normal((5, 3))
    for kind in KINDS:
        assert_agree(E.ESTIMATORS[kind](t_nb, m, C, U, "tril"), E.ESTIMATORS[kind](t_py, m, C, U, "tril"))


@pytest.mark.parametrize("name", TARGETS)
def test_same_seed_is_bit_identical(name):
    out = []
    for _ in range(2):
        rng = np.random.default_rng(2024)
        t = make_target(name, rng)
        m, C = rng.standard_normal(t.dim), make_scale(rng, t.dim, "tril")
        U = rng.standard_normal((4, t.dim))
        out.append([E.ESTIMATORS[k](t, m, C, U, "tril") for k in KINDS]
                   + [E.ESTIMATORS[k](t, m, C, U[:1], "tril") for k in KINDS])
    for a, b in zip(out[0], out[1]):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@numba.njit
def _user_entropy_step(m, C, U, X, y, ipv, code, lr):
    """A user's own @njit optimizer step built from refvi kernels (composition)."""
    gm, gC = ke.logistic_energy(m, C, U, X, y, ipv)
    gm, gC = kest.finish_entropy(gm, gC, C, code)
    return m - lr * gm, C - lr * gC


@numba.njit
def _user_projected_energy(m, C, U, X, y, ipv, code):
    gm, gC = ke.logistic_energy(m, C, U, X, y, ipv)
    return gm, project_V(gC, code)


def test_kernels_compose_inside_user_njit():
    rng = np.random.default_rng(4)
    t = make_target("logistic", rng)
    m, C, U = rng.standard_normal(t.dim), make_scale(rng, t.dim, "sym"), rng.standard_normal((3, t.dim))
    m2, C2 = _user_entropy_step(m, C, U, t.X, t.y, t.prior_scale ** -2, SYM, 0.1)
    gm, gC = E.entropy(t, m, C, U, "sym")
    assert_agree((m2, C2), (m - 0.1 * gm, C - 0.1 * gC))
    Ct = make_scale(rng, t.dim, "tril")
    assert_agree(_user_projected_energy(m, Ct, U, t.X, t.y, t.prior_scale ** -2, TRIL), E.energy(t, m, Ct, U, "tril"))


# ------------------------------------------------------------------------------------------------- bad input

@pytest.fixture(scope="module")
def logistic():
    return make_target("logistic", np.random.default_rng(0))


def test_bad_scale_is_rejected(logistic):
    d, m, U = logistic.dim, np.zeros(logistic.dim), np.ones((2, logistic.dim))
    with pytest.raises(ValueError, match="positive definite"):
        E.entropy(logistic, m, -np.eye(d), U, "sym")
    with pytest.raises(ValueError, match="lower triangular"):
        E.energy(logistic, m, np.ones((d, d)), U, "tril")
    with pytest.raises(ValueError, match="strictly positive diagonal"):
        E.stl(logistic, m, -np.eye(d), U, "tril")
    with pytest.raises(ValueError, match="symmetric"):
        E.score(logistic, m, np.eye(d) + np.triu(np.ones((d, d)), 1), U, "sym")
    with pytest.raises(ValueError, match="invertible"):
        E.energy(logistic, m, np.zeros((d, d)), U, "full")
    with pytest.raises(ValueError, match="structure"):
        E.energy(logistic, m, np.eye(d), U, "upper")


@pytest.mark.parametrize("structure", ["tril", "diag"])
def test_one_entry_outside_v_anywhere_is_refused_by_every_estimator(logistic, structure):
    """The fused check of C (kernels/checked.py) looks at every entry outside V: a single nonzero entry at any
    position above the diagonal (and, for diag, below it) is refused, on the compiled fast path of each estimator
    (the certificate accepts either a refusal or the right value there; refvi documents the refusal)."""
    d, m, U = logistic.dim, np.zeros(logistic.dim), np.ones((2, logistic.dim))
    assert d >= 3
    outside = [(i, j) for i in range(d) for j in range(d) if j > i or (structure == "diag" and j < i)]
    for i, j in outside:
        C = np.eye(d)
        C[i, j] = 0.25
        for name in ("energy", "entropy", "stl", "score"):
            with pytest.raises(ValueError, match="lower triangular|diagonal"):
                getattr(E, name)(logistic, m, C, U, structure)


def test_shape_mismatch_and_nonfinite_are_rejected(logistic):
    d = logistic.dim
    with pytest.raises(ValueError, match="U must have shape"):
        E.energy(logistic, np.zeros(d), np.eye(d), np.ones((2, d + 1)))
    with pytest.raises(ValueError, match="m must have length"):
        E.energy(logistic, np.zeros(d + 1), np.eye(d), np.ones((2, d)))
    with pytest.raises(ValueError, match="C must have shape"):
        E.energy(logistic, np.zeros(d), np.eye(d + 1), np.ones((2, d)))
    with pytest.raises(ValueError, match="at least one sample"):
        E.energy(logistic, np.zeros(d), np.eye(d), np.ones((0, d)))
    with pytest.raises(ValueError, match="non-finite"):
        E.energy(logistic, np.full(d, np.nan), np.eye(d), np.ones((2, d)))
    with pytest.raises(ValueError, match="non-finite"):
        E.score(logistic, np.zeros(d), np.eye(d), np.full((2, d), np.inf))
    with pytest.raises(TypeError):
        E.energy(logistic, "m", np.eye(d), np.ones((2, d)))


def test_bad_data_is_rejected_by_targets():
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="-1 and \\+1"):
        LogisticRegression(X, np.array([0.0, 1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="non-finite"):
        LogisticRegression(np.where(np.eye(4, 2) > 0, np.nan, 1.0), np.ones(4))
    with pytest.raises(ValueError, match="rows"):
        LinearRegression(X, np.ones(3))
    with pytest.raises(ValueError, match="prior_scale"):
        LogisticRegression(X, np.ones(4), prior_scale=-1.0)


@numba.njit
def _nb_bad_grad(z):
    g = -z.copy()
    g[0] = np.nan
    return g


@numba.njit
def _nb_short_grad(z):
    return -z[:-1].copy()


@numba.njit
def _nb_inf_logp(z):
    return -np.inf


def test_numba_callable_failures_raise_clear_errors():
    m, C, U = np.zeros(3), np.eye(3), np.ones((2, 3))
    with pytest.raises(ValueError, match="non-finite"):
        E.energy(CallableTarget(_nb_logp, _nb_bad_grad, 3), m, C, U)
    with pytest.raises(ValueError, match="shape"):
        E.energy(CallableTarget(_nb_logp, _nb_short_grad, 3), m, C, U)
    with pytest.raises(ValueError, match="non-finite"):
        E.score(CallableTarget(_nb_inf_logp, _nb_grad, 3), m, C, U)


def test_structure_code_rejects_unknown():
    assert structure_code("sym") == SYM
    with pytest.raises(ValueError, match="structure"):
        structure_code("lower")


# ------------------------------------------------------------------------------ the vectorizable exp and sigmoid

@numba.njit
def _apply_exp(a):
    out = np.empty((3, a.size))
    for i in range(a.size):
        out[0, i] = exp_nonpos(-abs(a[i]))
        out[1, i] = sigmoid_neg(a[i])
        out[2, i] = log1pexp(a[i])
    return out


def test_fast_exp_sigmoid_log1pexp_match_numpy():
    a = np.concatenate([np.linspace(-800, 800, 20001), np.logspace(-300, 2.8, 500), -np.logspace(-300, 2.8, 500),
                        [0.0, 708.0, 708.5, 745.2, -745.2]])
    e, sig, sp = _apply_exp(a)
    ref_e = np.exp(-np.abs(a))
    live = ref_e >= np.exp(-708.0)
    # degree-13 Taylor on |r| <= ln2/2 (truncation < 4e-18) plus Horner rounding: <= 2 ulp relative where e >= e^-708
    np.testing.assert_allclose(e[live], ref_e[live], rtol=4.5e-16, atol=0)
    assert np.all(e[~live] == 0.0) and np.all(ref_e[~live] < 3.3e-308)
    ref_sig = np.where(a >= 0, ref_e / (1 + ref_e), 1 / (1 + ref_e))
    np.testing.assert_allclose(sig, ref_sig, rtol=1e-15, atol=3.3e-308)
    # log(1 + e^a) ~ e^a for a < -708 is returned as 0 (true value < 3.3e-308), the documented underflow
    np.testing.assert_allclose(sp, np.logaddexp(0.0, a), rtol=1e-15, atol=3.3e-308)


def test_resolve_hands_back_the_compiled_entry_point_not_the_dispatcher():
    """refvi.kernels._entry.resolve: after one call through the dispatcher, loops get the specialization's entry
    point (calling it skips Numba's per-call typing) with the same result."""
    import numba

    from refvi.kernels import _entry

    @numba.njit
    def kern(x, a, b):
        return x * a + b

    plan = (2.0, 1.0)
    fn, out = _entry.resolve(kern, (3.0,), plan)
    assert out == 7.0 and fn is not kern and fn(3.0, *plan) == 7.0
    assert fn is kern.overloads[(numba.float64, numba.float64, numba.float64)].entry_point


def test_the_entry_cache_keeps_every_plan_until_it_is_full_then_starts_again(monkeypatch):
    """refvi.kernels._entry.call remembers one entry point per (kernel, plan, argument types): two plans are both
    remembered (a second plan does not evict the first), and only a full cache (_MAX entries) is cleared."""
    import numba

    from refvi.kernels import _entry

    @numba.njit
    def kern(x, a):
        return x + a

    monkeypatch.setattr(_entry, "_ENTRIES", {})
    monkeypatch.setattr(_entry, "_MAX", 3)
    plans = [(float(k),) for k in range(4)]
    for k, plan in enumerate(plans[:3]):
        assert _entry.call(kern, (1.0,), plan) == 1.0 + k
        assert len(_entry._ENTRIES) == k + 1
    assert _entry.call(kern, (1.0,), plans[3]) == 4.0  # the fourth: the full cache is cleared, then it is stored
    assert [key[1] for key in _entry._ENTRIES] == [id(plans[3])]
    # a second call with that plan goes to the stored entry point, not through the dispatcher
    (key,) = _entry._ENTRIES
    _entry._ENTRIES[key] = (plans[3], lambda x, a: "the stored entry point")
    assert _entry.call(kern, (1.0,), plans[3]) == "the stored entry point"


def test_the_reduction_kernels_cache_their_machine_code_on_disk():
    """refvi.kernels._jit.jit_reduce compiles with cache=True (a new process loads the kernels instead of compiling
    them: the cold-start figures depend on it)."""
    from numba.core.caching import NullCache

    from refvi.kernels import framed

    assert not isinstance(framed.framed_prox_loop._cache, NullCache)
