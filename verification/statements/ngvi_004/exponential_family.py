"""Wu & Gardner, *Understanding stochastic natural gradient variational inference* (seed 004): exponential-family maps
(Def. 1, Eq. 4, Lemma 4).

Statements: 004.def1, 004.eq4, 004.claim-a-star-curvature, 004.lemma4.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.ngvi_004._common import flat, minimal_theta, natural_of, rand_spd, sym_dir

# ------------------------------------------------------------------------------------------------------------------
# §2.1 / App. A: exponential-family facts
# ------------------------------------------------------------------------------------------------------------------


def _small_gaussians(rng):
    """A random Gaussian in natural parameters in d = 1 and in d = 2: ``(d, (lam, Lam))`` pairs."""
    for d in (1, 2):
        yield d, natural_of(rng.standard_normal(d), rand_spd(rng, d))


@statement("004.def1")
def _def1(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        for d, (lam, Lam) in _small_gaussians(rng):
            F = impl.fisher_minimal(lam, Lam)
            H = OX.symbolic_A(d)[2](minimal_theta(lam, Lam))
            # both are float64 closed forms of the same rational functions: agreement to 1e-9 of the scale
            ctx.close(F, H, rtol=1e-9, atol=1e-10 * scalar(np.max(np.abs(H))), label=f"F == Hess A (d={d})")

    ctx.forall_drawn(check, seeds=[0])


@statement("004.eq4")
def _eq4(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        for d, (lam, Lam) in _small_gaussians(rng):
            # the map from moments (mu, Sigma) to natural parameters (Sigma^-1 mu, -Sigma^-1 / 2): the implementation's
            # (lam, Lam) of the oracle's moments of (lam, Lam) must be (lam, Lam) itself
            mu, S = OX.moments_from_natural(lam, Lam)
            l1, L1 = impl.natural_from_moment(mu, S)
            ctx.close(
                flat(l1, L1),
                flat(lam, Lam),
                rtol=1e-10,
                atol=1e-12,
                label=f"natural_from_moment(mu = {np.round(mu, 4).tolist()}, Sigma = {np.round(S, 4).tolist()}) = "
                "(Sigma^-1 mu, -Sigma^-1 / 2)",
            )
            xi, Xi = impl.expectation_from_natural(lam, Lam)
            gA = OX.symbolic_A(d)[1](minimal_theta(lam, Lam))  # E phi_min = (xi, Xi_ii, 2 Xi_ij)
            mine = np.concatenate([xi, np.diag(Xi), [2 * Xi[i, j] for i in range(d) for j in range(i + 1, d)]])
            ctx.close(mine, gA, rtol=1e-10, atol=1e-12, label="grad A == omega (SymPy)")
            l2, L2 = impl.natural_from_expectation(xi, Xi)
            ctx.close(flat(l2, L2), flat(lam, Lam), rtol=1e-10, atol=1e-12, label="grad A* o grad A == id")
            a = OX.symbolic_A(d)[0](minimal_theta(lam, Lam))
            ctx.close(impl.log_partition(lam, Lam), a, rtol=1e-11, atol=1e-12, label="A (Eq. 17) == SymPy")
            fen = impl.log_partition(lam, Lam) + impl.conjugate(xi, Xi) - (lam @ xi + np.sum(Lam * Xi))
            ctx.close(fen, 0.0, atol=1e-10 * max(1.0, abs(a)), label="A + A* - <eta, omega> == 0 (exact conjugate)")

    ctx.forall_drawn(check, seeds=[0])


@statement("004.claim-a-star-curvature")
def _a1(ctx):
    impl = ctx.adapter("ngvi")
    for mu_, L_ in [(1e-3, 1e3), (1e-6, 1e6), (0.5, 2.0)]:
        big, small = 1.0 / math.sqrt(2 * mu_) * 2.0, 1.0 / math.sqrt(2 * L_) / 2.0
        for X0, rel in [(big, "<"), (small, ">")]:
            h = 1e-3 * X0
            f = lambda x: impl.conjugate(np.zeros(1), np.array([[x]]))  # noqa: E731
            sec = (f(X0 + h) - 2 * f(X0) + f(X0 - h)) / h**2
            # central difference error O(h^2 f'''') = O(1e-6) relative
            ctx.close(sec, 1.0 / (2 * X0**2), rtol=1e-4, label="(A*)'' == 1/(2 Xi^2)")
            if rel == "<":
                ctx.bound(sec, mu_, label=f"curvature below any mu = {mu_:g}")
            else:
                ctx.geq(sec, L_, label=f"curvature above any L = {L_:g}")
            ctx.count()


@statement("004.lemma4")
def _lemma4(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        d = int(rng.integers(1, 5))
        mu1, S1, mu2, S2 = rng.standard_normal(d), rand_spd(rng, d), rng.standard_normal(d), rand_spd(rng, d)
        e1, e2 = natural_of(mu1, S1), natural_of(mu2, S2)
        w1, w2 = (mu1, S1 + np.outer(mu1, mu1)), (mu2, S2 + np.outer(mu2, mu2))
        ref = OX.kl_gauss(mu1, S1, mu2, S2)
        tol = 1e-10 * max(1.0, ref) * d
        ctx.close(impl.kl(mu1, S1, mu2, S2), ref, atol=tol, label="KL closed form == cross-entropy - entropy")
        ctx.close(impl.bregman_A_star(w1, w2), ref, atol=1e-9 * max(1.0, ref) * d, label="D_A*(w, w') == KL")
        ctx.close(impl.bregman_A(e2, e1), ref, atol=1e-9 * max(1.0, ref) * d, label="D_A(eta', eta) == KL")
        # d/d omega KL(q(omega), q') along a random direction (symmetric convention): central differences
        dxi, dXi = rng.standard_normal(d), sym_dir(rng, d)
        h = 1e-5

        def f(t):
            xi, Xi = w1[0] + t * dxi, w1[1] + t * dXi
            return OX.kl_gauss(xi, Xi - np.outer(xi, xi), mu2, S2)

        fd = (f(h) - f(-h)) / (2 * h)
        l1, L1 = impl.natural_from_expectation(*w1)
        an = (l1 - e2[0]) @ dxi + np.sum((L1 - e2[1]) * dXi)
        # central-difference truncation O(h^2) plus round-off O(eps / h): 1e-5 relative is ample
        ctx.close(an, fd, rtol=1e-5, atol=1e-6, label="grad_omega KL == eta - eta'")

    ctx.forall_drawn(check, seeds=[0])
