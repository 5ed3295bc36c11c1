"""refvi.estimators (Numba kernels for built-in targets) against independent oracles (seed 000 Eqs. 4, 6, 8, §5).

(a) single-sample replay: one base sample u, each estimator against the per-sample formula built from a SymPy
    gradient of the log-density written here from its math, and an mpmath finite difference of log q_w(z);
(b) unbiasedness made exact: means over cubature / tensor Gauss-Hermite nodes against vi_objective's exact gradient;
(c) STL vanishes sample by sample at the optimum of a Gaussian target.
"""

from __future__ import annotations

import functools

import mpmath as mp
import numba
import numpy as np
import pytest
import sympy as sp

from refvi import estimators as E
from refvi.targets import (
    CallableTarget,
    CosineQuadratic,
    Gaussian,
    HierarchicalLogisticRegression,
    LinearRegression,
    LogisticRegression,
)
from refvi.verification.oracles import quadrature as Q
from refvi.verification.oracles import vi_objective as VO
from refvi.verification.oracles.matrices import proj_V as _proj

STRUCTURES = ("full", "tril", "sym", "diag")
ESTIMATORS = ("energy", "entropy", "stl", "score")


# --------------------------------------------------------------------------------------------- instances
def _instances():
    """(name, refvi target, SymPy log-density builder, oracle model dict or None), all d = 3 (hierarchical: 4)."""
    rng = np.random.default_rng(20)
    d = 3
    mean = rng.standard_normal(d)
    A = rng.standard_normal((d, d))
    P = A @ A.T + np.eye(d)
    X = rng.standard_normal((6, d))
    yl = rng.standard_normal(6)
    yc = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    b, z0 = rng.standard_normal(d), rng.standard_normal(d)
    Xh = rng.standard_normal((5, 2))
    yh = np.array([1.0, -1.0, -1.0, 1.0, 1.0])
    gh = np.array([0, 1, 1, 0, 1])
    out = [
        ("gaussian", Gaussian(mean, P), {"kind": "gaussian", "mean": mean, "precision": P}),
        ("linear", LinearRegression(X, yl, noise_scale=0.8, prior_scale=1.4),
         {"kind": "linear", "X": X, "y": yl, "noise_scale": 0.8, "prior_scale": 1.4}),
        ("logistic", LogisticRegression(X, yc, prior_scale=1.4),
         {"kind": "logistic", "X": X, "y": yc, "prior_scale": 1.4}),
        ("cosine", CosineQuadratic(1.3, b, phi=0.3, beta=0.7, z0=z0),
         {"kind": "cosine", "alpha": 1.3, "b": b, "phi": 0.3, "beta": 0.7, "z0": z0}),
        ("hierarchical", HierarchicalLogisticRegression(Xh, yh, gh, prior_scale=1.5, group_scale=0.8), None),
    ]
    # the cosine target again as a user CallableTarget: Numba-compiled (fused callable kernel) and plain Python
    # (generic NumPy path); both must replay the same SymPy per-sample formulas
    bb, zz = b.copy(), z0.copy()

    def lp(z):
        r = z - zz
        return -1.3 * np.cos(bb @ z + 0.3) - 0.35 * (r @ r)

    def glp(z):
        return 1.3 * np.sin(bb @ z + 0.3) * bb - 0.7 * (z - zz)

    Xs, ys = np.array([[0.7], [-1.2], [0.4], [1.5], [-0.3]]), np.array([1.0, -1, -1, 1, 1])
    gs = np.array([0, 1, 1, 0, 1])
    out.append(("hiersmall", HierarchicalLogisticRegression(Xs, ys, gs, prior_scale=1.4, group_scale=0.6),
                {"kind": "hierarchical", "X": Xs, "y": ys, "groups": gs, "prior_scale": 1.4, "group_scale": 0.6}))
    out.append(("cosine_numba", CallableTarget(numba.njit(lp), numba.njit(glp), 3, smoothness=5.0), None))
    out.append(("cosine_python", CallableTarget(lp, glp, 3, smoothness=5.0), None))
    return out, {"X": X, "yl": yl, "yc": yc, "mean": mean, "P": P, "b": b, "z0": z0, "Xh": Xh, "yh": yh, "gh": gh}


#: the instances' names, for parametrizing; the targets are built on first use, not at collection (building them
#: compiles the constants' kernels, which at collection every pytest-xdist worker would do at once)
NAMES = ("gaussian", "linear", "logistic", "cosine", "hierarchical", "hiersmall", "cosine_numba", "cosine_python")


@functools.cache
def _built():
    out, data = _instances()
    assert tuple(name for name, _, _ in out) == NAMES
    return {name: (t, model) for name, t, model in out}, data


def _instance(name):
    """(refvi target, oracle model dict or None) of the instance called ``name``."""
    return _built()[0][name]


def _sym_logp(name):
    """log p(z) as a SymPy expression in z (written from each model's definition, normalizing constants included)."""
    D = _built()[1]
    L2P = sp.log(2 * sp.pi)
    if name == "hierarchical":
        d, G = 2, 2
        z = sp.symbols("z0:6", real=True)
        th, zg = sp.Matrix(z[:2]), [sp.Matrix(z[2:4]), sp.Matrix(z[4:6])]
        s2, g2 = sp.Float(1.5) ** 2, sp.Float(0.8) ** 2
        lp = -(th.T * th)[0] / (2 * s2) - d * (L2P + sp.log(s2)) / 2
        for k in range(G):
            r = zg[k] - th
            lp += -(r.T * r)[0] / (2 * g2) - d * (L2P + sp.log(g2)) / 2
        for n in range(len(D["yh"])):
            t = D["yh"][n] * (sp.Matrix(D["Xh"][n]).T * zg[D["gh"][n]])[0]
            lp += -sp.log(1 + sp.exp(-t))
        return z, lp
    d = 3
    z = sp.symbols("z0:3", real=True)
    zv = sp.Matrix(z)
    if name == "gaussian":
        r = zv - sp.Matrix(D["mean"])
        P = sp.Matrix(D["P"])
        return z, -(r.T * P * r)[0] / 2 + sp.log(P.det()) / 2 - d * L2P / 2
    if name == "cosine":
        r = zv - sp.Matrix(D["z0"])
        return z, -1.3 * sp.cos((sp.Matrix(D["b"]).T * zv)[0] + 0.3) - 0.7 * (r.T * r)[0] / 2
    s2 = sp.Float(1.4) ** 2
    prior = -(zv.T * zv)[0] / (2 * s2) - d * (L2P + sp.log(s2)) / 2
    if name == "linear":
        n2 = sp.Float(0.8) ** 2
        r = sp.Matrix(D["yl"]) - sp.Matrix(D["X"]) * zv
        return z, prior - (r.T * r)[0] / (2 * n2) - len(D["yl"]) * (L2P + sp.log(n2)) / 2
    t = [D["yc"][n] * (sp.Matrix(D["X"][n]).T * zv)[0] for n in range(len(D["yc"]))]
    return z, prior - sum(sp.log(1 + sp.exp(-tn)) for tn in t)


@functools.cache
def _sym_funcs(name):
    z, lp = _sym_logp(name.split("_")[0])
    grad = [sp.diff(lp, zi) for zi in z]
    f = sp.lambdify([z], lp, modules="mpmath")
    g = sp.lambdify([z], grad, modules="mpmath")
    return f, g


def _scale(rng, d, structure):
    if structure == "diag":
        return np.diag(rng.uniform(0.3, 1.0, d))
    if structure == "tril":
        return np.tril(0.3 * rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.3, 1.0, d))
    if structure == "sym":
        B = 0.2 * rng.standard_normal((d, d))
        return 0.5 * np.eye(d) + B @ B.T
    return 0.5 * np.eye(d) + 0.3 * rng.standard_normal((d, d))


# ------------------------------------------------------------------------------------ (a) single-sample replay
def _grad_log_q_mpmath(z, m, C):
    """(d/dm, d/dC) log N(z | m, C C^T) by central differences in 40-digit arithmetic (error ~1e-25)."""
    with mp.workdps(40):
        d = len(m)
        zz = mp.matrix([mp.mpf(v) for v in z])

        def logq(mv, Cm):
            r = zz - mv
            w = mp.lu_solve(Cm, r)
            return -mp.log(abs(mp.det(Cm))) - (w.T * w)[0] / 2 - d * mp.log(2 * mp.pi) / 2

        m0 = mp.matrix([mp.mpf(v) for v in m])
        C0 = mp.matrix([[mp.mpf(v) for v in row] for row in C])
        h = mp.mpf("1e-12")
        gm = np.zeros(d)
        gC = np.zeros((d, d))
        for i in range(d):
            e = mp.matrix(d, 1)
            e[i] = h
            gm[i] = float((logq(m0 + e, C0) - logq(m0 - e, C0)) / (2 * h))
            for j in range(d):
                Ep = C0.copy()
                Em = C0.copy()
                Ep[i, j] += h
                Em[i, j] -= h
                gC[i, j] = float((logq(m0, Ep) - logq(m0, Em)) / (2 * h))
    return gm, gC


def _replay(name, structure, kind, m, C, u):
    """The per-sample estimate of ``kind`` written from seed 000 (Eqs. 4, 6, 8; §5) with oracle gradients."""
    f, g = _sym_funcs(name)
    z = C @ u + m
    with mp.workdps(30):
        glp = np.array([float(v) for v in g([mp.mpf(v) for v in z])])
        lp = float(f([mp.mpf(v) for v in z]))
    if kind == "score":
        qm, qC = _grad_log_q_mpmath(z, m, C)
        return -lp * qm, _proj(-lp * qC, structure)
    gz = -glp
    if kind == "stl":
        qm, _ = _grad_log_q_mpmath(z, m, C)     # grad_m log q = -grad_z log q  ->  grad_z log q = -qm
        gz = gz - qm
    gC = np.outer(gz, u)
    if kind == "entropy":                       # + grad h = -C^{-T}, projected (Lemma 16.2)
        gC = gC - np.linalg.inv(C).T
    return gz, _proj(gC, structure)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "hiersmall"])
def test_single_sample_replay(name):
    target, _ = _instance(name)
    if name == "cosine_numba":
        assert target.is_numba                  # the fused callable-kernel path is the one under test
    rng = np.random.default_rng(21)
    d = target.dim
    for structure in STRUCTURES:
        m = 0.5 * rng.standard_normal(d)
        C = _scale(rng, d, structure)
        u = rng.standard_normal(d)
        for kind in ESTIMATORS:
            gm, gC = getattr(E, kind)(target, m, C, u[None, :], structure)
            rm, rC = _replay(name, structure, kind, m, C, u)
            # oracle is exact to ~1e-15 relative (mpmath); kernel rounding ~1e-15 * |terms| -> 1e-10 relative
            scale = 1.0 + np.max(np.abs(rm)) + np.max(np.abs(rC))
            np.testing.assert_allclose(gm, rm, rtol=1e-10, atol=1e-12 * scale, err_msg=f"{kind} {structure} gm")
            np.testing.assert_allclose(gC, rC, rtol=1e-10, atol=1e-12 * scale, err_msg=f"{kind} {structure} gC")
            if structure != "full":
                assert np.all(_proj(gC, structure) == gC), f"{kind} {structure}: gC is not in V"


def test_batch_is_mean_of_single_samples():
    """The S-row estimate equals the mean of the S one-row estimates (the kernels fuse the loop)."""
    target, _ = _instance("logistic")
    rng = np.random.default_rng(22)
    m, C, U = rng.standard_normal(3), _scale(rng, 3, "tril"), rng.standard_normal((7, 3))
    for kind in ESTIMATORS:
        gm, gC = getattr(E, kind)(target, m, C, U, "tril")
        parts = [getattr(E, kind)(target, m, C, U[s:s + 1], "tril") for s in range(7)]
        np.testing.assert_allclose(gm, np.mean([p[0] for p in parts], axis=0), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(gC, np.mean([p[1] for p in parts], axis=0), rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------------- (b) unbiasedness made exact
def _exact_gradient(model, m, C, structure, kind):
    _, gm, gC = VO.free_energy(model, m, C)
    if kind in ("entropy", "stl"):              # unbiased for grad f = grad l + grad h
        gC = gC - np.linalg.inv(C).T
    return gm, _proj(gC, structure)


@pytest.mark.parametrize("name", ["gaussian", "linear"])
def test_quadratic_targets_exact_mean_over_degree3_cubature(name):
    """energy / entropy / stl per-sample values are polynomials of degree <= 2 in u for quadratic -log p."""
    target, model = _instance(name)
    rng = np.random.default_rng(23)
    U, _ = Q.degree3_cubature(3)
    for structure in STRUCTURES:
        m, C = rng.standard_normal(3), _scale(rng, 3, structure)
        for kind in ("energy", "entropy", "stl"):
            gm, gC = getattr(E, kind)(target, m, C, U, structure)
            rm, rC = _exact_gradient(model, m, C, structure, kind)
            # both exact up to rounding (~1e-15 relative to the largest term)
            np.testing.assert_allclose(gm, rm, rtol=1e-11, atol=1e-11, err_msg=f"{kind} {structure}")
            np.testing.assert_allclose(gC, rC, rtol=1e-11, atol=1e-11, err_msg=f"{kind} {structure}")


def _weighted(kind, target, m, C, structure, U, W):
    gm, gC = 0.0, 0.0
    for u, w in zip(U, W):
        a, B = getattr(E, kind)(target, m, C, u[None, :], structure)
        gm, gC = gm + w * a, gC + w * B
    return gm, gC


@pytest.mark.parametrize("name", ["gaussian", "linear"])
def test_score_estimator_exact_expectation_on_quadratic_targets(name):
    """score per-sample is degree 4 in u: the 3-node tensor rule (exact to degree 5 per axis) gives E exactly."""
    target, model = _instance(name)
    rng = np.random.default_rng(24)
    U, W = Q.tensor_rule(3, 3)
    for structure in STRUCTURES:
        m, C = rng.standard_normal(3), _scale(rng, 3, structure)
        gm, gC = _weighted("score", target, m, C, structure, U, W)
        rm, rC = _exact_gradient(model, m, C, structure, "score")
        scale = 1 + abs(VO.free_energy(model, m, C)[0])      # score terms are -log p times O(1)
        np.testing.assert_allclose(gm, rm, rtol=1e-10, atol=1e-12 * scale, err_msg=structure)
        np.testing.assert_allclose(gC, rC, rtol=1e-10, atol=1e-12 * scale, err_msg=structure)


@pytest.mark.parametrize("name", ["logistic", "cosine", "hiersmall"])
def test_nonquadratic_targets_tensor_quadrature_matches_exact_gradient(name):
    """sum_k w_k * estimator(u_k) over a tensor GH rule in d = 3 equals the quadrature gradient of vi_objective."""
    target, model = _instance(name)
    rng = np.random.default_rng(25)
    # small scale so that ||C^T x_n|| <~ 0.6: the rule's error for sigmoid-type integrands decays like
    # exp(-2 pi sqrt(2 n) / beta), far below 1e-12 at 14 nodes per axis; cosine is entire (error ~ 0)
    U, W = Q.tensor_rule(3, 14)
    for structure in STRUCTURES:
        m = 0.3 * rng.standard_normal(3)
        C = 0.25 * _scale(rng, 3, structure)
        for kind in ESTIMATORS:
            gm, gC = _weighted(kind, target, m, C, structure, U, W)
            rm, rC = _exact_gradient(model, m, C, structure, kind)
            # score multiplies by -log p (~10): its quadrature error is larger; everything else ~1e-13
            tol = 1e-9 if kind == "score" else 1e-10
            np.testing.assert_allclose(gm, rm, rtol=tol, atol=tol, err_msg=f"{kind} {structure}")
            np.testing.assert_allclose(gC, rC, rtol=tol, atol=tol, err_msg=f"{kind} {structure}")


# ----------------------------------------------------------------------- (c) STL is zero at the optimum
@pytest.mark.parametrize("name", ["gaussian", "linear"])
def test_stl_vanishes_at_gaussian_optimum(name):
    target, model = _instance(name)
    rng = np.random.default_rng(26)
    U = rng.standard_normal((9, 3))
    for structure in ("full", "tril", "sym"):
        m, C, _ = VO.solve(model, structure)
        for s in range(U.shape[0]):
            gm, gC = E.stl(target, m, C, U[s:s + 1], structure)
            # per sample: (P - (C C^T)^{-1}) C u = 0 exactly; rounding ~ 1e-15 * ||P|| ||C|| ||u||
            bound = 1e-12 * (1 + np.linalg.norm(U[s])) ** 2 * np.linalg.norm(VO.quadratic_form(model)[0])
            assert np.max(np.abs(gm)) <= bound and np.max(np.abs(gC)) <= bound
        # ... while the energy estimator is not zero at the same point (the test can fail)
        gm, _ = E.energy(target, m, C, U[:1], structure)
        assert np.max(np.abs(gm)) > 1e-3
