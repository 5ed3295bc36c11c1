"""The plain-NumPy example evaluates every target with its own model (``examples/numpy_targets.py``), built from
``kind`` and ``params``, never with the callables a target record carries (issue 26, item 9): handed records whose
callables raise, every protocol method that takes a target still works and returns what it returns on the intact
record, and the statements that reach targets still pass.  Only kind ``"callable"`` uses its callables."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import numpy as np
import pytest

from refvi.verification.examples import numpy_adapter
from refvi.verification.examples.numpy_adapter import NumpyImplementation
from refvi.verification.examples.numpy_targets import boosting_logp, model_of
from refvi.verification.protocol import boosting as bp
from refvi.verification.protocol import core
from refvi.verification.protocol import targets as specs
from refvi.verification.protocol.boosting import BoostingInstance, BoostingTarget
from refvi.verification.protocol.capabilities import OPTIONAL_METHODS
from refvi.verification.running import runner

BUILDABLE = ("gaussian", "linear", "logistic", "hierarchical_logistic", "cosine")
EXAMPLES = Path(numpy_adapter.__file__).resolve().parent


def _boom(*_):
    raise AssertionError("the example called a target record's own log p / gradient")


def _spec(kind, rng=None):
    rng = np.random.default_rng(7) if rng is None else rng
    X = 0.6 * rng.standard_normal((9, 2))
    y = np.where(rng.random(9) < 0.5, -1.0, 1.0)
    if kind == "gaussian":
        A = rng.standard_normal((2, 2))
        return specs.gaussian(rng.standard_normal(2), A @ A.T + np.eye(2))
    if kind == "linear":
        return specs.linear(X, rng.standard_normal(9), 0.8, 1.3)
    if kind == "logistic":
        return specs.logistic(X, y, 0.9)
    if kind == "hierarchical_logistic":
        return specs.hierarchical_logistic(X[:, :1], y, rng.integers(0, 2, 9), 2, [[1.5]], [[0.6]])
    return specs.cosine(0.4, np.array([0.7, -0.3]), 0.2, 1.5, np.array([0.1, -0.2]))


def _raising(spec):
    return dataclasses.replace(spec, logp=_boom, grad_logp=_boom)


# ---- the model itself ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", BUILDABLE)
def test_model_agrees_with_the_density_of_the_record(kind):
    """Same densities as docs/protocol-core.md: log p and its gradient to rounding (1e-12 relative: the same sums in
    another order), the closed-form Hessian within central differences' accuracy (step 1e-5: ~1e-9 here)."""
    rng = np.random.default_rng(1)
    spec = _spec(kind, rng)
    model = model_of(_raising(spec))
    Z = 1.5 * rng.standard_normal((6, spec.dim))
    ref_lp = np.array([spec.logp(z) for z in Z])
    ref_g = np.array([spec.grad_logp(z) for z in Z])
    np.testing.assert_allclose(model.logp(Z), ref_lp, rtol=1e-12, atol=1e-12 * np.abs(ref_lp).max())
    np.testing.assert_allclose(model.grad(Z), ref_g, rtol=1e-12, atol=1e-12 * np.abs(ref_g).max())
    h = 1e-5
    for z in Z[:3]:
        H = np.array([(spec.grad_logp(z + h * e) - spec.grad_logp(z - h * e)) / (2 * h) for e in np.eye(spec.dim)]).T
        np.testing.assert_allclose(model.hess(z), 0.5 * (H + H.T), atol=1e-7 * max(1.0, np.abs(H).max()))


def test_bad_targets_are_refused_by_name():
    with pytest.raises(ValueError, match="positive definite"):
        model_of(specs.gaussian(np.zeros(2), -np.eye(2)))
    X, y = np.ones((3, 1)), np.ones(3)
    with pytest.raises(ValueError, match="group labels"):
        model_of(specs.hierarchical_logistic(X, y, [0, 1, 3], 2, [[1.0]], [[1.0]]))
    with pytest.raises(ValueError, match="unknown target kind"):
        model_of(dataclasses.replace(_spec("gaussian"), kind="poisson"))
    with pytest.raises(ValueError, match="coordinates"):
        model_of(_spec("gaussian")).logp(np.zeros((2, 3)))


def test_callable_kind_is_the_one_that_uses_its_callables():
    """A "callable" record has no model to build: its own log p is the density (documented exception)."""
    seen = []

    def logp(z):
        seen.append("logp")
        return -0.5 * float(z @ z)

    def grad(z):
        seen.append("grad")
        return -np.asarray(z)

    spec = specs.from_callables(logp, grad, 2, smoothness=1.0, strong_convexity=1.0)
    impl = NumpyImplementation()
    np.testing.assert_allclose(impl.log_joint(spec, np.ones((3, 2))), -np.ones(3))
    np.testing.assert_allclose(impl.hess_log_joint(spec, np.ones(2)), -np.eye(2), atol=1e-9)
    assert "logp" in seen and "grad" in seen


# ---- every protocol method that takes a target -----------------------------------------------------------------
def _calls(kind, impl, t):
    """Every core / boosting protocol method taking a ``target``, called on ``t``: name -> result."""
    d = t.dim
    rng = np.random.default_rng(3)
    m, C = 0.3 * rng.standard_normal(d), np.tril(0.2 * rng.standard_normal((d, d)), -1) + np.eye(d)
    S = 0.5 * (C + C.T)
    U, UU = rng.standard_normal((4, d)), rng.standard_normal((5, 2, d))
    out = {"log_joint": impl.log_joint(t, U), "grad_log_joint": impl.grad_log_joint(t, U),
           "hess_log_joint": impl.hess_log_joint(t, m), "energy": impl.energy(t, m, C, U, "tril"),
           "entropy": impl.entropy(t, m, S, U, "sym"), "stl": impl.stl(t, m, C, U, "tril"),
           "score": impl.score(t, m, C, U, "tril"), "smoothness": impl.smoothness(t),
           "strong_convexity": impl.strong_convexity(t),
           "framed_energy": impl.framed_energy(t, m, 0.9 * C, m, C, U, "tril"),
           "framed_prox_sgd": impl.framed_prox_sgd(t, m, np.tril(0.9 * C), m, C, np.full(5, 0.05), UU, np.ones(6)),
           "prox_sgd": impl.prox_sgd(t, m, C, np.full(5, 0.05), UU, "energy", "tril", np.ones(6)),
           "proj_sgd": impl.proj_sgd(t, m, S, np.full(5, 0.05), UU, 4.0, "entropy", "sym", None),
           "frame": impl.frame(t, "laplace"), "fit": impl.fit(t, steps=20, seed=1).m,
           "fit framed": impl.fit(t, steps=20, seed=1, frame="diagonal").m,
           "mc_mean_field": impl.boosting.mc_mean_field(t, U)}
    boost = impl.boosting.mc_boost(t, 2, "corrective", init=(np.zeros(d), np.ones(d)), n_samples=4, seed=2)
    out["mc_boost"] = (boost.means, boost.weights_history[-1], boost.f)
    if kind in ("gaussian", "linear", "logistic"):
        out["mode"] = impl.mode(t)
        out["exact_energy"] = impl.exact_energy(t, m, C)
        out["exact_optimum"] = impl.exact_optimum(t, "tril")
        out["gradient_descent_exact"] = impl.gradient_descent_exact(t, m, C, 0.05, 3, "prox")
    if kind == "linear":
        out["log_evidence"] = impl.log_evidence(t)
    return out


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("kind", BUILDABLE)
def test_every_method_works_on_a_record_whose_callables_raise(kind):
    impl = NumpyImplementation()
    spec = _spec(kind)
    got, ref = _calls(kind, impl, _raising(spec)), _calls(kind, impl, spec)
    for name in ref:
        _same(got[name], ref[name])


def test_the_calls_above_cover_every_protocol_method_that_takes_a_target():
    takes_target = {name for name in core.METHODS
                    if "target" in inspect.signature(getattr(core.Implementation, name)).parameters}
    takes_target |= {f"boosting.{name}" for name in bp.METHODS
                     if "target" in inspect.signature(getattr(bp.BoostingProtocol, name)).parameters}
    # optional methods the example does not offer (refvi's own driver called with its defaults) are declined there
    takes_target -= {name for name in OPTIONAL_METHODS if not hasattr(NumpyImplementation, name)}
    covered = set(_calls("linear", NumpyImplementation(), _spec("linear"))) - {"fit framed"}
    covered = {("boosting." + n if n.startswith("mc_") else n) for n in covered}
    assert takes_target <= covered, sorted(takes_target - covered)


def test_boosting_targets_are_evaluated_from_their_params():
    mix = BoostingTarget.mixture([0.3, 0.7], [[0.0, 0.5], [1.0, -0.5]], [0.6, 0.9], log_shift=0.25)
    cau = BoostingTarget.cauchy(0.3, 1.7, log_shift=-1.0)
    Z = np.random.default_rng(0).uniform(-1.4, 1.4, (7, 2))
    np.testing.assert_allclose(boosting_logp(mix, Z), mix.logp(Z), rtol=1e-13)
    np.testing.assert_allclose(boosting_logp(cau, Z[:, :1]), cau.logp(Z[:, :1]), rtol=1e-13)
    impl = NumpyImplementation().boosting
    for target, box in ((mix, 2), (cau, 1)):
        inst = BoostingInstance.grid([-1.5] * box, [1.5] * box, 1.0, 0.7, target, (8, 8))
        quiet = dataclasses.replace(inst, target=dataclasses.replace(target, logp=_boom))
        alpha = np.full(inst.K, 1.0 / inst.K)
        for method in ("objective", "scores", "gap"):
            _same(getattr(impl, method)(quiet, alpha), getattr(impl, method)(inst, alpha))
        Zb = Z[:, :box]
        _same(impl.stochastic_lmo_step(quiet, alpha, Zb[0], Zb), impl.stochastic_lmo_step(inst, alpha, Zb[0], Zb))


# ---- the statements, with every target's callables raising -----------------------------------------------------
class Quiet:
    """The example with every target record it is handed (seed 000 / 002 TargetSpec, seed 001 boosting target)
    replaced by a copy whose callables raise, except kind "callable"."""

    def __init__(self, impl, subs=("boosting", "online", "ngvi")):
        self._impl, self._subs = impl, subs

    @staticmethod
    def _quiet(x):
        if isinstance(x, specs.TargetSpec) and x.kind != "callable":
            return _raising(x)
        if isinstance(x, BoostingTarget):
            return dataclasses.replace(x, logp=_boom)
        if isinstance(x, BoostingInstance):
            return dataclasses.replace(x, target=Quiet._quiet(x.target))
        return x

    def __getattr__(self, attr):
        value = getattr(self._impl, attr)
        if attr in self._subs and value is not None:
            return Quiet(value, ())
        if attr.startswith("_") or not callable(value) or isinstance(value, type):
            return value

        def call(*args, **kwargs):
            return value(*map(self._quiet, args), **{k: self._quiet(v) for k, v in kwargs.items()})
        return call


#: statements that hand the example targets through every target-taking method (log p, gradient, Hessian, frames,
#: estimators, optimizers, fit, Monte Carlo boosting, boosting objectives)
TARGET_STATEMENTS = ("000.claim-target-models", "000.claim-target-hessians", "000.claim-target-closed-forms",
                     "000.claim-implementation-frame", "000.claim-implementation-framed-energy", "000.def4",
                     "000.claim-score-replay", "000.claim-stl-zero-variance", "000.def5", "000.def8",
                     "000.claim-fit", "000.cor25", "000.lemma14", "002.thm1", "001.claim-mc-boosting",
                     "001.claim-shift-invariance")


def test_quiet_wrapper_really_makes_callables_raise():
    quiet = Quiet(NumpyImplementation())
    assert quiet._quiet(_spec("linear")).logp is _boom
    with pytest.raises(AssertionError, match="own log p"):
        quiet._quiet(_spec("linear")).grad_logp(np.zeros(2))


@pytest.mark.parametrize(
    "sid",
    # the boosting claim's plain-Python loops take the example about 10 s: with ``pytest --run-slow``
    [pytest.param(s, marks=pytest.mark.slow) if s == "001.claim-mc-boosting" else s for s in TARGET_STATEMENTS],
)
def test_statements_pass_when_every_target_callable_raises(sid):
    st = runner.load_statements()[sid]
    rec = runner.run_statement(st, Quiet(NumpyImplementation()), "ci")
    assert rec["verdict"] == "pass", rec.get("detail")


# ---- independence ----------------------------------------------------------------------------------------------
def test_the_example_imports_nothing_of_refvi():
    """The example is what a maintainer copies: its modules import only NumPy / SciPy and each other."""
    for path in sorted(EXAMPLES.glob("numpy_*.py")) + [EXAMPLES / "_validate.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            assert not any(n.split(".")[0] == "refvi" for n in names), f"{path.name} imports {names}"


def test_no_example_module_calls_a_records_callables_outside_the_callable_kind():
    """``.logp(`` / ``.grad_logp(`` of a record appear only in numpy_targets' GivenDensity (kind "callable")."""
    for path in sorted(EXAMPLES.glob("numpy_*.py")):
        tree = ast.parse(path.read_text())
        allowed = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "GivenDensity":
                allowed |= {id(n) for n in ast.walk(node)}
        for node in ast.walk(tree):
            holder = getattr(node, "value", None)
            holder = getattr(holder, "attr", None) or getattr(holder, "id", None)
            if (isinstance(node, ast.Attribute) and node.attr in ("logp", "grad_logp") and id(node) not in allowed
                    and holder in ("target", "spec", "t")):
                raise AssertionError(f"{path.name}:{node.lineno} calls a record's {node.attr}")

