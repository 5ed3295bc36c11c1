"""Unit tests for the helpers of verification/statements/convergence_000/ (_structure.py)
and the hessian_bounds oracle, plus
mutation tests: each statement must FAIL against an implementation with a planted error (a check that cannot fail
proves nothing), and pass against a correct one."""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from refvi.verification.implementation import RefviImplementation  # noqa: E402
from refvi.verification.oracles import hessian_bounds as hb  # noqa: E402
from refvi.verification.oracles import matrices  # noqa: E402
from refvi.verification.running.runner import load_statements, run_statement  # noqa: E402
from refvi.verification.statements.convergence_000 import _structure  # noqa: E402

STATEMENTS = load_statements()


# ------------------------------------------------------------------------------------------------ helpers
@pytest.mark.parametrize("structure", _structure.STRUCTS)
def test_proj_is_orthogonal_projection(structure):
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    P = matrices.proj_V(X, structure)
    np.testing.assert_array_equal(matrices.proj_V(P, structure), P)                       # idempotent
    proj = matrices.proj_V
    assert abs(_structure.inner(X - P, proj(Y, structure))) < 1e-12                     # residual orthogonal to V
    assert abs(_structure.inner(proj(X, structure), Y) - _structure.inner(X, proj(Y, structure))) < 1e-12   # self-adjoint


@pytest.mark.parametrize("structure,dim", [("full", 9), ("tril", 6), ("sym", 6), ("diag", 3)])
def test_basis_orthonormal_and_spanning(structure, dim):
    B = _structure.basis(3, structure)
    assert len(B) == dim
    gram = np.array([[_structure.inner(a, b) for b in B] for a in B])
    np.testing.assert_allclose(gram, np.eye(dim), atol=1e-15)
    X = matrices.proj_V(np.random.default_rng(1).standard_normal((3, 3)), structure)
    np.testing.assert_allclose(sum(_structure.inner(X, E) * E for E in B), X, atol=1e-14)


@pytest.mark.parametrize("structure", _structure.STRUCTS)
def test_random_in_W(structure):
    rng = np.random.default_rng(2)
    for d in (1, 2, 4):
        C = _structure.random_in_W(rng, d, structure, smin=0.7)
        np.testing.assert_array_equal(matrices.proj_V(C, structure), C)
        assert _structure.sigma_min(C) >= 0.7
        if structure in ("tril", "diag"):
            assert np.all(np.diag(C) > 0)


def test_random_orthogonal():
    Q = matrices.random_orthogonal(np.random.default_rng(3), 4)
    np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-14)


def test_bad_structure_raises():
    with pytest.raises(ValueError, match="structure"):
        matrices.proj_V(np.eye(2), "upper")


# ------------------------------------------------------------------------------------------------ oracle
def _models(rng):
    X = rng.standard_normal((3, 2))
    y = np.array([1.0, -1.0, 1.0])
    yield {"kind": "linear", "X": X, "y": rng.standard_normal(3), "noise_scale": 0.7, "prior_scale": 1.3}
    yield {"kind": "logistic", "X": X, "y": y, "prior_scale": 0.8}
    yield {"kind": "hierarchical_logistic", "X": X[:, :1], "y": y, "groups": np.array([0, 1, 1]), "n_groups": 2,
           "Sigma": np.array([[2.0]]), "Delta": np.array([[0.5]])}


def test_oracle_gradient_and_hessian_roads_agree():
    rng = np.random.default_rng(4)
    for model in _models(rng):
        n = 3 if model["kind"] == "hierarchical_logistic" else 2
        z = rng.standard_normal(n)
        g = hb.grad_neg_log_joint(model, z)
        h = 1e-6
        g_fd = np.array([(hb.neg_log_joint(model, z + h * e) - hb.neg_log_joint(model, z - h * e)) / (2 * h)
                         for e in np.eye(n)])
        np.testing.assert_allclose(g, g_fd, atol=1e-8)
        np.testing.assert_allclose(hb.hessian_fd(model, z), hb.hessian_sympy(model, z), atol=1e-8)


def test_glm_hessian_and_interval():
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((4, 2)), np.array([1.0, -1.0, -1.0, 1.0])
    Si = np.eye(2) / 1.5**2
    model = {"kind": "logistic", "X": X, "y": y, "prior_scale": 1.5}
    z = rng.standard_normal(2)
    np.testing.assert_allclose(hb.glm_hessian(X, y, Si, hb.logistic_phi, z), hb.hessian_sympy(model, z), atol=1e-13)
    lo, hi = hb.glm_curvature_interval(X, Si, 0.0, 0.25)
    lam = np.linalg.eigvalsh(hb.hessian_sympy(model, np.zeros(2)))
    assert lo == pytest.approx(1 / 1.5**2) and hi == pytest.approx(lam[-1], rel=1e-13)


def test_model_constants_are_refvi_constants_and_attained():
    """The oracle's (mu, M) (hessian_bounds.model_constants) equal refvi's target constants, and M is the curvature
    at z = 0 (SymPy) for the logistic kinds, where every phi'' = 1/4."""
    import refvi.targets as T
    from refvi.verification.protocol import targets as specs
    from refvi.verification.protocol.refvi_core import as_refvi_target

    rng = np.random.default_rng(6)
    models = list(_models(rng)) + [
        {"kind": "gaussian", "mean": np.zeros(2), "precision": np.array([[2.0, 0.3], [0.3, 0.5]])},
        {"kind": "cosine", "alpha": -0.7, "b": np.array([1.0, 2.0]), "phi": 0.1, "beta": 0.9, "z0": np.zeros(2)}]
    for model in models:
        mu, M = hb.model_constants(model)
        ref = as_refvi_target(specs.from_model(model))
        assert isinstance(ref, T.Target)
        assert M == pytest.approx(ref.smoothness, rel=1e-12) and mu == pytest.approx(ref.strong_convexity, abs=1e-14)
        if model["kind"] in ("logistic", "hierarchical_logistic"):
            n = ref.dim
            assert M == pytest.approx(np.linalg.eigvalsh(hb.hessian_sympy(model, np.zeros(n)))[-1], rel=1e-12)
    decl = {"kind": "callable", "smoothness": 2.0, "strong_convexity": 0.5}
    assert hb.model_constants(decl) == (0.5, 2.0)
    with pytest.raises(ValueError, match="no smoothness"):
        hb.model_constants({"kind": "callable", "smoothness": None})


def test_oracle_rejects_unknown_kind():
    with pytest.raises(ValueError, match="unknown model kind"):
        hb.neg_log_joint({"kind": "poisson"}, np.zeros(1))


# ------------------------------------------------------------------------------------------------ mutation tests
class StableProx(RefviImplementation):
    """refvi with a cancellation-free prox written here: 2 gamma / (sqrt(c^2 + 4 gamma) - c) for c < 0 (same
    function), its square root and sums scaled so that nothing overflows at the ends of float64 (000.lemma31 has
    instances at gamma = 1e308 and c = -1.7e308)."""

    name = "stable-prox"

    def entropy_prox(self, C, gamma):
        C = np.array(C, dtype=np.float64)
        c = np.diag(C)
        half_r = np.hypot(c / 2, np.sqrt(gamma))  # sqrt(c^2 + 4 gamma) / 2
        out = C.copy()
        with np.errstate(divide="ignore"):
            neg = gamma / (half_r - np.minimum(c, 0.0) / 2)
        np.fill_diagonal(out, np.where(c >= 0, c / 2 + half_r, neg))
        return out


class SmallM(StableProx):
    name = "M too small"

    def smoothness(self, target):
        return 0.9 * super().smoothness(target)


class LargeMu(StableProx):
    name = "mu too large"

    def strong_convexity(self, target):
        return 1.1 * super().strong_convexity(target) + 1e-3


class NoTranspose(StableProx):
    name = "grad h = -proj C^{-1}"

    def grad_neg_entropy(self, C, structure="tril"):
        return -matrices.proj_V(np.linalg.inv(C), structure)


class WrongClip(StableProx):
    name = "clip at 1/M"

    def project_wm(self, C, M, structure="sym"):
        lam, Q = np.linalg.eigh(C)
        return (Q * np.maximum(lam, 1.0 / M)) @ Q.T


class Unprojected(StableProx):
    name = "energy gC not projected"

    def energy(self, target, m, C, U, structure="tril"):
        gm, _ = super().energy(target, m, C, U, "full")
        G = np.array([-np.asarray(target.grad_logp(C @ u + m)) for u in np.atleast_2d(U)])   # one point per call
        return gm, G.T @ U / U.shape[0]


def _root_prox(factor, label):
    """An implementation whose prox puts the root (c + sqrt(c^2 + factor gamma)) / 2 on the diagonal."""
    class RootProx(StableProx):
        name = label

        def entropy_prox(self, C, gamma):
            out = np.array(C, dtype=np.float64)
            c = np.diag(out).copy()
            np.fill_diagonal(out, 0.5 * (c + np.sqrt(c * c + factor * gamma)))
            return out
    return RootProx


WrongProx = _root_prox(1.0, "prox with gamma instead of 4 gamma")
TextbookProx = _root_prox(4.0, "textbook prox (cancels for c << -sqrt(gamma))")


@pytest.mark.parametrize("impl,ids", [
    (SmallM(), ["000.cor22", "000.cor23", "000.cor25", "000.thm21", "000.thm24"]),
    (LargeMu(), ["000.cor22", "000.cor23", "000.cor25", "000.thm21"]),
    (NoTranspose(), ["000.lemma16"]),
    (WrongClip(), ["000.lemma32"]),
    (Unprojected(), ["000.lemma33", "000.lemma15"]),
    (WrongProx(), ["000.lemma29", "000.lemma31"]),
    (TextbookProx(), ["000.lemma31"]),
], ids=lambda x: getattr(x, "name", None) if not isinstance(x, list) else "")
def test_statements_catch_planted_errors(impl, ids):
    for sid in ids:
        rec = run_statement(STATEMENTS[sid], impl, "ci")
        assert rec["verdict"] == "fail", (sid, impl.name, rec)


@pytest.mark.parametrize("sid", ["000.lemma29", "000.lemma31"])
def test_prox_statements_pass_for_a_correctly_rounded_prox(sid):
    rec = run_statement(STATEMENTS[sid], StableProx(), "ci")
    assert rec["verdict"] == "pass", rec


@pytest.mark.parametrize("eid", ["E000-1", "E000-2", "E000-5", "E000-6"])
def test_errata_registered_with_instances(eid):
    from refvi.verification.errata import ERRATA

    e = ERRATA[eid]
    assert e.printed and e.corrected and e.instance


def test_hessian_oracle_is_independent_of_refvi():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(hb))
    mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert {m.split(".")[0] for m in mods} <= {"__future__", "numpy", "scipy", "sympy", "mpmath"}, mods
