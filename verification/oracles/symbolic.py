"""Symbolic oracles (SymPy only, never refvi).

* ``prox_scalar_solution()``: the positive root of the stationarity of -log x + (x - c)^2 / (2 gamma), the scalar
  problem behind the entropy prox (seed 000 Lemma 31): x^2 - c x - gamma = 0, x = (c + sqrt(c^2 + 4 gamma)) / 2.
* ``gaussian_polynomial_expectation(expr, u)``: E over u ~ N(0, I) of a polynomial in the symbols u, by replacing
  each monomial with its moment prod_i (k_i - 1)!! (0 for odd k_i).
* ``isserlis_quadratic_norm(d)``: E[u^T A u ||u||^2] = (d + 2) tr A for a symbolic symmetric A (used by the noise
  bounds of seed 000 §5, Lemma 18).
* ``isserlis_fourth_moment(d)``: E u_i u_j u_k u_l = d_ij d_kl + d_ik d_jl + d_il d_jk for all index tuples.
* ``quadratic_free_energy_symbolic(d)``: l(m, C) = E 1/2 (C u + m - mu)^T H (C u + m - mu)
  = 1/2 (m - mu)^T H (m - mu) + 1/2 tr(C^T H C), derived by expanding in u; returns (expr, symbols).
* ``logdet_gradient_identity(d)``: d/dC log det C = C^{-T} (seed 000 Lemma 16.2), checked symbolically.
* ``stein_identity(degree)``: E[g(u) u] = E[g'(u)] for a generic polynomial g of the given degree (the step behind
  the reparameterization / score equivalence and the oracle's Stein gradients).
* ``score_mean_zero(d)``: E_u[grad_w log q_w(C u + m)] = 0 for the Gaussian family, i.e. E[C^{-T} u] = 0 and
  E[C^{-T}(u u^T - I)] = 0 (seed 000 Eq. 4: the score estimator is unbiased), with symbolic C.
"""

from __future__ import annotations

import sympy as sp

C_SYM = sp.Symbol("c", real=True)
GAMMA_SYM = sp.Symbol("gamma", positive=True)


def prox_scalar_solution():
    """The positive root x(c, gamma) of d/dx [-log x + (x - c)^2 / (2 gamma)] = 0 (symbols C_SYM, GAMMA_SYM)."""
    x = sp.Symbol("x", positive=True)
    x = sp.Symbol("x")
    # multiply by gamma x (> 0 on the domain): x^2 - c x - gamma = 0; the roots' product is -gamma < 0, so exactly
    # one root is positive for every (c, gamma) and its sign never changes: pick it at (c, gamma) = (0, 1).
    roots = sp.solve(sp.expand(x * x - C_SYM * x - GAMMA_SYM), x)
    pos = [r for r in roots if r.subs({C_SYM: 0, GAMMA_SYM: 1}) > 0]
    if len(pos) != 1:
        raise RuntimeError(f"expected one positive root, SymPy found {roots}")
    return sp.simplify(pos[0])


def _normal_moment(k: int) -> int:
    return 0 if k % 2 else int(sp.factorial2(k - 1)) if k else 1


def gaussian_polynomial_expectation(expr, u):
    """E_{u ~ N(0, I)} expr for a polynomial expr in the symbols u (list), other symbols treated as constants."""
    poly = sp.Poly(sp.expand(expr), *u)
    total = sp.Integer(0)
    for exps, coeff in poly.terms():
        mom = 1
        for k in exps:
            mom *= _normal_moment(k)
            if mom == 0:
                break
        total += coeff * mom
    return sp.expand(total)


def _sym_matrix(name, d):
    A = sp.zeros(d, d)
    for i in range(d):
        for j in range(i, d):
            A[i, j] = A[j, i] = sp.Symbol(f"{name}{i}{j}", real=True)
    return A


def isserlis_quadratic_norm(d: int) -> bool:
    """True when E[u^T A u ||u||^2] - (d + 2) tr A simplifies to 0 for symbolic symmetric A in dimension d."""
    u = sp.symbols(f"u0:{d}", real=True)
    A = _sym_matrix("a", d)
    uv = sp.Matrix(u)
    lhs = gaussian_polynomial_expectation((uv.T * A * uv)[0, 0] * (uv.T * uv)[0, 0], u)
    return sp.simplify(lhs - (d + 2) * A.trace()) == 0


def isserlis_fourth_moment(d: int) -> bool:
    """True when E u_i u_j u_k u_l matches Isserlis' pairing formula for every (i, j, k, l)."""
    u = sp.symbols(f"u0:{d}", real=True)
    delta = lambda a, b: 1 if a == b else 0  # noqa: E731
    for i in range(d):
        for j in range(d):
            for k in range(d):
                for l in range(d):
                    lhs = gaussian_polynomial_expectation(u[i] * u[j] * u[k] * u[l], u)
                    rhs = delta(i, j) * delta(k, l) + delta(i, k) * delta(j, l) + delta(i, l) * delta(j, k)
                    if lhs != rhs:
                        return False
    return True


def quadratic_free_energy_symbolic(d: int):
    """(l, syms): l = E_u 1/2 (C u + m - mu)^T H (C u + m - mu) as a SymPy expression in the entries of m, C, mu, H.

    ``syms`` is a dict with keys "m", "mu" (lists), "C", "H" (SymPy matrices; H symmetric).
    """
    u = sp.symbols(f"u0:{d}", real=True)
    m = sp.Matrix(sp.symbols(f"m0:{d}", real=True))
    mu = sp.Matrix(sp.symbols(f"mu0:{d}", real=True))
    C = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"C{i}{j}", real=True))
    H = _sym_matrix("H", d)
    r = C * sp.Matrix(u) + m - mu
    l = gaussian_polynomial_expectation(sp.Rational(1, 2) * (r.T * H * r)[0, 0], u)
    closed = sp.Rational(1, 2) * ((m - mu).T * H * (m - mu))[0, 0] + sp.Rational(1, 2) * (C.T * H * C).trace()
    if sp.expand(l - closed) != 0:
        raise AssertionError("symbolic expansion disagrees with 1/2 (m-mu)^T H (m-mu) + 1/2 tr(C^T H C)")
    return l, {"m": list(m), "mu": list(mu), "C": C, "H": H}


def substitution(syms, *, mu, m, C, H):
    """A SymPy substitution dict mapping the symbols of ``quadratic_free_energy_symbolic`` to numbers."""
    d = len(syms["m"])
    out = {}
    for i in range(d):
        out[syms["m"][i]] = float(m[i])
        out[syms["mu"][i]] = float(mu[i])
        for j in range(d):
            out[syms["C"][i, j]] = float(C[i][j])
            out[syms["H"][i, j]] = float(H[i][j])
    return out


def logdet_gradient_identity(d: int) -> bool:
    """True when d/dC_ij log det C = (C^{-T})_ij for a generic symbolic d x d matrix C (seed 000 Lemma 16.2)."""
    C = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"C{i}{j}", real=True))
    det = C.det()
    adjT = C.adjugate().T  # C^{-T} det C, avoids dividing inside the comparison
    for i in range(d):
        for j in range(d):
            if sp.expand(sp.diff(det, C[i, j]) - adjT[i, j]) != 0:  # d log det / dC = (d det / dC) / det
                return False
    return True


def stein_identity(degree: int) -> bool:
    """True when E[g(u) u] = E[g'(u)] for u ~ N(0, 1) and g(u) = sum_k a_k u^k with symbolic a_k, k <= degree."""
    u = sp.Symbol("u", real=True)
    a = sp.symbols(f"a0:{degree + 1}", real=True)
    g = sum(a[k] * u**k for k in range(degree + 1))
    lhs = gaussian_polynomial_expectation(g * u, [u])
    rhs = gaussian_polynomial_expectation(sp.diff(g, u), [u])
    return sp.expand(lhs - rhs) == 0


def score_mean_zero(d: int) -> bool:
    """True when E_u[(C^{-T} u, C^{-T} (u u^T - I))] = 0 for a symbolic invertible d x d matrix C.

    grad_m log q_w(z) = C^{-T} u and grad_C log q_w(z) = C^{-T}(u u^T - I) at z = C u + m are derived here by
    differentiating log q = -log det C - 1/2 |C^{-1}(z - m)|^2 symbolically (d <= 2 keeps the algebra small).
    """
    u = sp.symbols(f"u0:{d}", real=True)
    m = sp.Matrix(sp.symbols(f"m0:{d}", real=True))
    C = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"C{i}{j}", real=True))
    zs = sp.Matrix(sp.symbols(f"z0:{d}", real=True))
    Ci = C.inv()
    r = Ci * (zs - m)
    logq = -sp.log(C.det()) - (r.T * r)[0] / 2
    at = {zs[i]: (C * sp.Matrix(u) + m)[i] for i in range(d)}
    grads = [sp.diff(logq, mi) for mi in m] + [sp.diff(logq, C[i, j]) for i in range(d) for j in range(d)]
    for gexpr in grads:
        num, den = sp.fraction(sp.together(sp.expand(gexpr.subs(at))))
        # den is free of u (a power of det C), so E[num / den] = E[num] / den
        if den.has(*u):
            return False
        if sp.simplify(gaussian_polynomial_expectation(sp.expand(num), list(u))) != 0:
            return False
    return True
