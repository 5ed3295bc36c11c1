"""Planted bugs in the seed 000 / 002 methods of the example adapter (estimators, prox, projections, constants,
optimizers).  Each is the kind of slip a careful implementer makes: a factor, a transpose, a sign, an index."""

from __future__ import annotations

import numpy as np

from refvi.verification.examples.bug_zoo import corrupts, mutant, substitutes
from refvi.verification.examples.numpy_adapter import proj_V as _proj


def _scaled(fn, i, factor):
    def buggy(*a, **k):
        out = list(fn(*a, **k))
        out[i] = factor * np.asarray(out[i])
        return tuple(out)

    return buggy


# ---- estimators (seed 000 Eqs. 6, 8, §2.3) -------------------------------------------------------------------------
@mutant("energy-mean-factor", "000", "energy", "gm off by 1% (a stray factor in the mean gradient)")
def _(orig, owner):
    return _scaled(orig, 0, 1.01)


@mutant("energy-no-projection", "000", "energy", "gC returned as the full outer product, not projected onto V")
def _(orig, owner):
    def energy(target, m, C, U, structure="tril"):
        U = np.atleast_2d(U)
        G = np.array([-np.asarray(target.grad_logp(C @ u + m), dtype=float) for u in U])
        return G.mean(axis=0), G.T @ U / len(U)

    return energy


@mutant("energy-transposed-scale", "000", "energy", "z = C^T u + m instead of C u + m")
def _(orig, owner):
    def energy(target, m, C, U, structure="tril"):
        return orig(target, m, np.asarray(C).T, U, structure)

    return energy


@mutant("energy-mean-off-by-one", "000", "energy", "the mean over S samples divides by S + 1")
def _(orig, owner):
    def energy(target, m, C, U, structure="tril"):
        S = len(np.atleast_2d(U))
        gm, gC = orig(target, m, C, U, structure)
        return gm * S / (S + 1), gC * S / (S + 1)

    return energy


@mutant("energy-first-sample-only", "000", "energy", "only the first row of U is used")
def _(orig, owner):
    def energy(target, m, C, U, structure="tril"):
        return orig(target, m, C, np.atleast_2d(U)[:1], structure)

    return energy


@mutant("entropy-sign", "000", "entropy", "g_ent = g_energy - grad h (sign of the entropy term)")
def _(orig, owner):
    def entropy(target, m, C, U, structure="sym"):
        gm, gC = owner.energy(target, m, C, U, structure)
        return gm, gC - owner.grad_neg_entropy(C, structure)

    return entropy


@mutant("entropy-unprojected-h", "000", "entropy", "grad h = -C^{-T} added without projecting onto V")
def _(orig, owner):
    def entropy(target, m, C, U, structure="sym"):
        gm, gC = owner.energy(target, m, C, U, structure)
        return gm, gC - np.linalg.inv(C).T

    return entropy


@mutant("stl-score-sign", "000", "stl", "STL adds +C^{-T}u instead of -C^{-T}u (grad_z log q sign)")
def _(orig, owner):
    def stl(target, m, C, U, structure="tril"):
        U = np.atleast_2d(U)
        V = np.array([-np.asarray(target.grad_logp(C @ u + m), dtype=float) + np.linalg.solve(C.T, u) for u in U])
        return V.mean(axis=0), _proj(V.T @ U / len(U), structure)

    return stl


@mutant("score-missing-identity", "000", "score", "grad_C log q uses C^{-T} u u^T, dropping the -C^{-T} term")
def _(orig, owner):
    def score(target, m, C, U, structure="tril"):
        U = np.atleast_2d(U)
        Cit = np.linalg.inv(C).T
        f = np.array([-float(target.logp(C @ u + m)) for u in U])
        gm = (f[:, None] * (U @ Cit.T)).mean(axis=0)
        gC = sum(fi * (Cit @ np.outer(u, u)) for fi, u in zip(f, U, strict=True)) / len(U)
        return gm, _proj(gC, structure)

    return score


@mutant("grad-h-no-transpose", "000", "grad_neg_entropy", "grad h = -proj_V(C^{-1}) (transpose forgotten)")
def _(orig, owner):
    def grad_neg_entropy(C, structure="tril"):
        return -_proj(np.linalg.inv(C), structure)

    return grad_neg_entropy


# ---- prox and projections (seed 000 Lemmas 31, 32; seed 002 Thm 7) -----------------------------------------------
@mutant("prox-cancelling", "000", "entropy_prox", "the printed (c + sqrt(c^2 + 4 gamma))/2 for every c (cancels)")
def _(orig, owner):
    def entropy_prox(C, gamma):
        out = np.array(C, dtype=float)
        c = np.diag(out).copy()
        out[np.diag_indices_from(out)] = (c + np.sqrt(c * c + 4 * gamma)) / 2
        return out

    return entropy_prox


@mutant("prox-factor-2", "000", "entropy_prox", "sqrt(c^2 + 2 gamma) instead of sqrt(c^2 + 4 gamma)")
def _(orig, owner):
    def entropy_prox(C, gamma):
        return orig(C, gamma / 2)

    return entropy_prox


@mutant("prox-below-diagonal", "000", "entropy_prox", "the prox map applied below the diagonal too")
def _(orig, owner):
    def entropy_prox(C, gamma):
        low = np.tril(np.asarray(C, dtype=float), -1)
        return orig(C, gamma) + np.tril((low + np.sqrt(low * low + 4 * gamma)) / 2 - low, -1)

    return entropy_prox


@mutant("wm-threshold-1-over-M", "000", "project_wm", "eigenvalues clipped at 1/M instead of 1/sqrt(M)")
def _(orig, owner):
    def project_wm(C, M, structure="sym"):
        return orig(C, M * M, structure)

    return project_wm


@mutant("wm-no-clip-when-psd", "000", "project_wm", "returns C unchanged whenever its eigenvalues are >= 0")
def _(orig, owner):
    def project_wm(C, M, structure="sym"):
        if np.linalg.eigvalsh((np.asarray(C) + np.asarray(C).T) / 2)[0] >= 0:
            return np.array(C, dtype=float)
        return orig(C, M, structure)

    return project_wm


@mutant("singular-clip-smallest-only", "002", "project_singular", "only the smallest singular value is clipped")
def _(orig, owner):
    def project_singular(C, M):
        U, s, Vt = np.linalg.svd(C)
        s = s.copy()
        s[-1] = max(s[-1], 1 / np.sqrt(M))
        return U @ np.diag(s) @ Vt

    return project_singular


# ---- constants (seed 000 Thm 21 - Cor 25) --------------------------------------------------------------------------
@mutant("smoothness-10pc-low", "000", "smoothness", "M 10% too small")
def _(orig, owner):
    return lambda target: 0.9 * orig(target)


@mutant("strong-convexity-doubled", "000", "strong_convexity", "mu twice too large")
def _(orig, owner):
    return lambda target: 2.0 * orig(target)


# ---- optimizers (seed 000 Defs. 5, 8; seed 002 §5.3) --------------------------------------------------------------
@mutant("prox-sgd-step-index", "000", "prox_sgd", "prox_{gamma_{t+1} h} after a gamma_t gradient step")
def _(orig, owner):
    def prox_sgd(target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None):
        g = np.asarray(gammas, dtype=float)
        shifted = np.append(g[1:], g[-1])
        return owner._sgd(
            lambda Y, gt, _it=iter(shifted): owner.entropy_prox(Y, next(_it)),  # noqa: B008 (one iterator per run)
            target,
            m0,
            C0,
            g,
            U,
            estimator,
            structure,
            weights,
        )

    return prox_sgd


@mutant("prox-sgd-average-offset", "000", "prox_sgd", "the average weights w^{t+1} by weights[t] (off by one)")
def _(orig, owner):
    def prox_sgd(target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None):
        if weights is None:
            return orig(target, m0, C0, gammas, U, estimator, structure, weights)
        w = np.asarray(weights, dtype=float) / np.sum(weights)
        m, C = np.array(m0, dtype=float), np.array(C0, dtype=float)
        m_avg, C_avg = w[-1] * m, w[-1] * C
        for t, g in enumerate(gammas):
            gm, gC = getattr(owner, estimator)(target, m, C, np.atleast_2d(U[t]), structure)
            m, C = m - g * gm, owner.entropy_prox(C - g * gC, g)
            m_avg, C_avg = m_avg + w[t] * m, C_avg + w[t] * C
        return m, C, m_avg, C_avg

    return prox_sgd


@mutant(
    "proj-sgd-average-unnormalised",
    "000",
    "proj_sgd",
    "the average sum_t weights[t] w^t with the weights as given, not normalised to sum 1",
)
def _(orig, owner):
    def proj_sgd(target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        m, C, m_avg, C_avg = orig(target, m0, C0, gammas, U, M, estimator, structure, weights)
        total = 1.0 if weights is None else float(np.sum(weights))
        return m, C, total * np.asarray(m_avg), total * np.asarray(C_avg)

    return proj_sgd


@mutant("proj-sgd-no-final-projection", "000", "proj_sgd", "the last iterate is not projected onto W_M")
def _(orig, owner):
    def proj_sgd(target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        T = len(gammas)
        calls = {"n": 0}

        def update(Y, g):
            calls["n"] += 1
            return Y if calls["n"] == T else owner.project_wm(Y, M, structure)

        return owner._sgd(update, target, m0, C0, gammas, U, estimator, structure, weights)

    return proj_sgd


@mutant(
    "proj-sgd-step-capped-at-1",
    "000",
    "proj_sgd",
    "steps above 1 silently clipped to 1 ('for stability')",
    try_first=("000.thm10",),
)
def _(orig, owner):
    def proj_sgd(target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        capped = np.minimum(np.asarray(gammas, dtype=float), 1.0)
        return orig(target, m0, C0, capped, U, M, estimator, structure, weights)

    return proj_sgd


@mutant(
    "prox-sgd-halve-after-spike",
    "000",
    "prox_sgd",
    "a stability heuristic: from step 5 on, a gradient norm above 3x the mean of the earlier ones halves the step "
    "for the rest of the run",
    try_first=("000.thm6",),
)
def _(orig, owner):
    def prox_sgd(target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None):
        orig(target, m0, C0, gammas, U, estimator, structure, weights)  # the example's input checks
        T = len(gammas)
        w = np.zeros(T + 1) if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
        if weights is None:
            w[T] = 1.0
        m, C = np.array(m0, dtype=float), np.array(C0, dtype=float)
        m_avg, C_avg = w[0] * m, w[0] * C
        norms: list[float] = []
        damping = 1.0
        for t, g in enumerate(np.asarray(gammas, dtype=float)):
            gm, gC = getattr(owner, estimator)(target, m, C, np.atleast_2d(U[t]), structure)
            size = float(np.sqrt(np.sum(gm**2) + np.sum(gC**2)))
            if t >= 5 and size > 3.0 * np.mean(norms):
                damping = 0.5
            norms.append(size)
            m, C = m - damping * g * gm, owner.entropy_prox(C - damping * g * gC, damping * g)
            m_avg, C_avg = m_avg + w[t + 1] * m, C_avg + w[t + 1] * C
        return (m, C, m, C) if weights is None else (m, C, m_avg, C_avg)

    return prox_sgd


def _gd_with_step(which, wrong_step):
    """gradient_descent whose ``which`` method takes ``wrong_step(owner, m, C, gm, gC, step) -> (m, C)`` (the other
    methods are the example's)."""

    def make(orig, owner):
        def gradient_descent(grad_l, m0, C0, step, steps, method, M=None):
            if method != which:
                return orig(grad_l, m0, C0, step, steps, method, M)
            step = 1.0 / M if step is None else step  # Thm 6's largest step, as the example
            ms, Cs = [np.array(m0, dtype=float)], [np.array(C0, dtype=float)]
            for _ in range(steps):
                m, C = wrong_step(owner, ms[-1], Cs[-1], *grad_l(ms[-1], Cs[-1]), step)
                ms.append(m)
                Cs.append(C)
            return np.array(ms), np.array(Cs)

        return gradient_descent

    return make


mutant("gd-prox-transposed-gradient", "002", "gradient_descent", "prox GD steps C along grad_C l transposed")(
    _gd_with_step(
        "prox", lambda owner, m, C, gm, gC, step: (m - step * gm, owner.entropy_prox(np.tril(C - step * gC.T), step))
    )
)
mutant("gd-naive-no-entropy-gradient", "002", "gradient_descent", "naive GD steps along grad l only (grad h dropped)")(
    _gd_with_step("naive", lambda owner, m, C, gm, gC, step: (m - step * gm, C - step * gC))
)


# ---- slips the rate statements could only see by recomputing what a run reports (the replays of
# convergence_000._rates.runs and smoothness_002._descent.replay): each keeps every bound and rate of the papers
@mutant(
    "prox-sgd-long-run-uniform-average",
    "000",
    "prox_sgd",
    "runs longer than 64 steps keep a streaming uniform average of w^1..w^T (to save memory) and ignore the weights",
    try_first=("000.thm7",),
)
def _(orig, owner):
    def prox_sgd(target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None):
        T = len(gammas)
        if weights is None or T <= 64:
            return orig(target, m0, C0, gammas, U, estimator, structure, weights)
        uniform = np.r_[0.0, np.full(T, 1.0 / T)]
        return orig(target, m0, C0, gammas, U, estimator, structure, uniform)

    return prox_sgd


@mutant(
    "proj-sgd-amortized-projection",
    "000",
    "proj_sgd",
    "from step 20 on the projection onto W_M (an eigendecomposition) is amortized: applied every 10th step only",
    try_first=("000.thm9",),
)
def _(orig, owner):
    def proj_sgd(target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        orig(target, m0, C0, gammas[:1], U[:1], M, estimator, structure)  # the example's input checks
        step = {"t": 0}

        def update(Y, g):
            t = step["t"]
            step["t"] += 1
            return Y if t >= 20 and t % 10 else owner.project_wm(Y, M, structure)

        return owner._sgd(update, target, m0, C0, gammas, U, estimator, structure, weights)

    return proj_sgd


def _gd_largest_step(orig, owner):
    def gradient_descent(grad_l, m0, C0, step, steps, method, M=None):
        if method != "prox" or step is None or M is None or step >= 1.0 / M or steps <= 10:
            return orig(grad_l, m0, C0, step, steps, method, M)
        # "once close, speed up": Thm 6's largest step 1/M (the fastest it allows) after the first 10 steps
        ms, Cs = orig(grad_l, m0, C0, step, 10, method, M)
        ms2, Cs2 = orig(grad_l, ms[-1], Cs[-1], 1.0 / M, steps - 10, method, M)
        return np.concatenate([ms, ms2[1:]]), np.concatenate([Cs, Cs2[1:]])

    return gradient_descent


mutant(
    "gd-prox-largest-step-after-10",
    "002",
    "gradient_descent",
    "prox GD given a step below 1/M switches to Thm 6's largest step 1/M after 10 steps ('once close, speed up')",
)(_gd_largest_step)


# ---- step-size rules and averages (seed 000 Thms 6, 7, 9, 10, 27) ---------------------------------------------
def _rule_override(rule_name, fn):
    def make(orig, owner):
        def step_sizes(rule, T, gamma=None, M=None, mu=None, a=None, L=None, A=None):
            if rule == rule_name:
                return fn(T, gamma=gamma, M=M, mu=mu, a=a, L=L, A=A)
            return orig(rule, T, gamma=gamma, M=M, mu=mu, a=a, L=L, A=A)

        return step_sizes

    return make


def _decay(T, mu, scale=1.0, shift=0):
    t = np.arange(T, dtype=float) + shift
    return scale * (2 * t + 1) / (mu * (t + 1) ** 2)


mutant("step-thm27-ceil", "000", "step_sizes", "Thm 27 switches at 4 ceil(L/mu) instead of 4 floor(L/mu)")(
    _rule_override(
        "thm27", lambda T, mu, L, **k: np.where(np.arange(T) < 4 * np.ceil(L / mu), 1 / (2 * L), _decay(T, mu))
    )
)
mutant("step-thm9-factor", "000", "step_sizes", "Thm 9's decaying branch (1/mu) instead of (2/mu)")(
    _rule_override("thm9", lambda T, mu, a, **k: np.minimum(mu / (2 * a), _decay(T, mu)))
)
mutant("step-decay-index", "000", "step_sizes", "decaying step indexed from t = 1: (2t+3)/(t+2)^2 at step t")(
    _rule_override("thm6", lambda T, mu, a, **k: np.minimum(mu / (2 * a), _decay(T, mu, shift=1)))
)
mutant("step-sqrt-T-plus-1", "000", "step_sizes", "1/(M sqrt(T + 1)) instead of 1/(M sqrt T)")(
    _rule_override("1/(M sqrt T)", lambda T, M, **k: np.full(T, 1 / (M * np.sqrt(T + 1))))
)


@mutant("avg-theta7-factor", "000", "average_weights", "Thm 7's theta = 1/(1 + a gamma^2) (the 2 dropped)")
def _(orig, owner):
    def average_weights(kind, T, a=None, gamma=None, **kw):
        if kind == "theta7":
            return orig(kind, T, a=a / 2, gamma=gamma)
        return orig(kind, T, a=a, gamma=gamma, **kw)

    return average_weights


@mutant("avg-theta10-offset", "000", "average_weights", "Thm 10's weights put on w^1..w^T instead of w^0..w^T-1")
def _(orig, owner):
    def average_weights(kind, T, a=None, gamma=None, **kw):
        w = np.asarray(orig(kind, T, a=a, gamma=gamma, **kw), dtype=float)
        return np.roll(w, 1) if kind == "theta10" else w

    return average_weights


@mutant(
    "avg-tail-float-ceil",
    "000",
    "average_weights",
    "the tail's length ceil(f T) taken on the rounded float product (7 % of 100 steps -> 8 iterates)",
)
def _(orig, owner):
    def average_weights(kind, T, a=None, gamma=None, tail_fraction=0.5):
        if kind != "tail":
            return orig(kind, T, a=a, gamma=gamma)
        k = max(1, int(np.ceil(tail_fraction * T)))
        w = np.zeros(T + 1)
        w[T - k + 1 :] = 1.0 / k
        return w

    return average_weights


@mutant("noise-b-printed-dL", "000", "noise_constants", "Thm 26's entropy b with d L as printed (E000-3), not 2 d L")
def _(orig, owner):
    def noise_constants(estimator, d, M, dist_sq, L=None):
        a, b = orig(estimator, d, M, dist_sq, L)
        return (a, b - d * (M if L is None else L)) if estimator == "entropy" else (a, b)

    return noise_constants


@mutant(
    "energy-group-block-shift",
    "000",
    "energy",
    "hierarchical targets: the group block of the gradient shifted by one group",
)
def _(orig, owner):
    def energy(target, m, C, U, structure="tril"):
        gm, gC = orig(target, m, C, U, structure)
        if getattr(target, "kind", "") != "hierarchical_logistic":
            return gm, gC
        d = np.asarray(target.params["X"]).shape[1]
        gm = np.asarray(gm, dtype=float).copy()
        gm[d:] = np.roll(gm[d:], d)
        return gm, gC

    return energy


# ---- seed 002 §6: the exact energy; §3.1: base laws ----------------------------------------------------------------
@corrupts(
    "exact-energy-logdet-sign",
    "002",
    "exact_energy",
    "Gaussian target: the normalising constant with +1/2 log|det P| instead of -1/2",
)
def _(out, target, **_):
    if target.kind != "gaussian":
        return out
    return out[0] + float(np.linalg.slogdet(np.asarray(target.params["precision"]))[1]), out[1], out[2]


@corrupts(
    "exact-energy-logistic-half-curvature",
    "002",
    "exact_energy",
    "logistic grad_C: the likelihood term X^T diag(E sigmoid') X C halved",
)
def _(out, target, C, **_):
    if target.kind != "logistic":
        return out
    prior = np.asarray(C, float) / target.params["prior_scale"] ** 2
    return out[0], out[1], prior + 0.5 * (np.asarray(out[2]) - prior)


@mutant("base-laplace-scale", "002", "base_charfun", "Laplace base with scale 1 (variance 2): psi(k) = 1/(1 + k^2)")
def _(orig, owner):
    def base_charfun(base, K):
        if base.kind == "laplace":
            return orig(base, np.sqrt(2.0) * np.asarray(K, float))
        return orig(base, K)

    return base_charfun


@mutant("base-affine-shift-sign", "002", "base_charfun", "affine base: exp(-i k^T b) instead of exp(i k^T b)")
def _(orig, owner):
    def base_charfun(base, K):
        out = np.asarray(orig(base, K))
        return (
            np.conj(out)
            * orig(base.inner, np.atleast_2d(K) @ base.scale)
            / np.conj(orig(base.inner, np.atleast_2d(K) @ base.scale))
            if base.kind == "affine"
            else out
        )

    return base_charfun


@mutant("base-entropy-laplace-log2", "002", "base_entropy", "Laplace entropy 1 + log 2 (the 1/2 dropped)")
def _(orig, owner):
    def base_entropy(base, d):
        h = orig(base, d)
        return h + 0.5 * d * np.log(2.0) if base.kind == "laplace" else h

    return base_entropy


@mutant("base-moments-transposed-cov", "002", "base_moments", "affine base covariance A^T A instead of A A^T")
def _(orig, owner):
    def base_moments(base, d):
        mu, S = orig(base, d)
        return (mu, base.scale.T @ base.scale) if base.kind == "affine" else (mu, S)

    return base_moments


@mutant(
    "base-atoms-probabilities-swapped",
    "002",
    "base_atoms",
    "two-point atoms weighted p^(d-k) (1-p)^k instead of p^k (1-p)^(d-k): the probabilities of hi and lo swapped",
)
def _(orig, owner):
    def base_atoms(base, d):
        U, w = orig(base, d)
        return U, w[::-1]  # the product law's probabilities in reversed order (= swapped for p != 1/2)

    return base_atoms


@mutant("to-base-params-shift-sign", "002", "to_base_params", "m0 = m + C R mu instead of m - C R mu")
def _(orig, owner):
    def to_base_params(m, C, base):
        m0, C0 = orig(m, C, base)
        return 2.0 * np.asarray(m, float) - m0, C0

    return to_base_params


@mutant(
    "standardize-cholesky-root",
    "002",
    "standardize",
    "the standardized base uses R = L^-1 with L the Cholesky factor of Sigma (also V u = I, but not Sigma^(-1/2))",
)
def _(orig, owner):
    def standardize(base, d):
        from refvi.verification.protocol.bases import affine

        mu, S = owner.base_moments(base, d)
        R = np.linalg.inv(np.linalg.cholesky(S))
        if base.kind == "affine":
            return affine(base.inner, R @ (base.shift - mu), R @ base.scale)
        return affine(base, -R @ mu, R)

    return standardize


# ---- the step-size hypotheses of the rate theorems ------------------------------------------------------------------
substitutes(
    "step-range-thm9-as-thm6",
    "000",
    "step_range_ok",
    "Thm 9's range checked with Thm 6's bound min(mu/(2a), 1/mu) instead of min(mu/(2a), 2/mu)",
    "theorem",
    "000.thm9",
    "000.thm6",
)


@corrupts(
    "step-range-cor30-horizon-ignored",
    "000",
    "step_range_ok",
    "Cor 30 checked on A >= 1/mu only: a horizon T with T / log T < 2aA/mu is accepted",
)
def _(out, theorem, gammas, mu=None, A=None, **_):
    return bool(A >= 1.0 / mu) if theorem == "000.cor30" else out


@corrupts(
    "step-range-varying-accepted",
    "000",
    "step_range_ok",
    "a varying schedule whose largest step is in range accepted by the constant-step theorems",
)
def _(out, theorem, gammas, M=None, mu=None, a=None, **_):
    g = np.asarray(gammas, dtype=float)
    if theorem in ("000.thm6", "000.thm7", "000.thm9", "000.thm10") and not np.all(g == g[0]):
        top = {
            "000.thm6": min(mu / (2 * a), 1 / mu) if mu and a else 0.0,
            "000.thm7": 1 / M if M else 0.0,
            "000.thm9": min(mu / (2 * a), 2 / mu) if mu and a else 0.0,
            "000.thm10": np.inf,
        }[theorem]
        return bool(np.max(g) <= top)
    return out


# ---- the location-scale family z = C u + m (seed 002 §3.1) ----------------------------------------------------------
@corrupts(
    "locscale-log-density-logdet-sign",
    "002",
    "locscale_log_density",
    "log q(z) = log s(C^-1 (z - m)) + log|det C|: the Jacobian with the wrong sign",
)
def _(out, C, **_):
    return np.asarray(out) + 2.0 * np.linalg.slogdet(np.asarray(C, float))[1]


@corrupts(
    "locscale-entropy-base-only",
    "002",
    "locscale_entropy",
    "Entropy[q] = Entropy[s]: the log|det C| of the change of variables left out",
)
def _(out, C, **_):
    return float(out) - float(np.linalg.slogdet(np.asarray(C, float))[1])


@mutant(
    "locscale-sample-transposed-scale",
    "002",
    "locscale_sample",
    "draws z = C^T u + m (the scale transposed): right for symmetric C only",
)
def _(orig, owner):
    def locscale_sample(base, m, C, n, seed=0):
        return orig(base, m, np.asarray(C, float).T, n, seed)

    return locscale_sample


@mutant(
    "locscale-sample-student-t-product",
    "002",
    "locscale_sample",
    "an elliptical Student-t base sampled with one chi^2 scale per coordinate (right marginals, wrong joint law)",
)
def _(orig, owner):
    import dataclasses

    def as_product(base):
        if base.kind == "affine":
            return dataclasses.replace(base, inner=as_product(base.inner))
        return dataclasses.replace(base, product=True) if base.kind == "student_t" else base

    def locscale_sample(base, m, C, n, seed=0):
        return orig(as_product(base), m, C, n, seed)

    return locscale_sample


@corrupts("locscale-cov-transposed", "002", "locscale_moments", "V z = C^T V[u] C instead of C V[u] C^T")
def _(out, base, C, **_):
    C = np.asarray(C, float)
    mean, cov = out
    Cinv = np.linalg.inv(C)
    S = Cinv @ np.asarray(cov) @ Cinv.T
    return mean, C.T @ S @ C


# ---- the target model: log p and its gradient -----------------------------------------------------------------------
@corrupts(
    "log-joint-prior-constant",
    "000",
    "log_joint",
    "log p without the prior's normalising constant -(d/2) log(2 pi s^2) for regression targets",
)
def _(out, target, **_):
    if target.kind not in ("linear", "logistic"):
        return out
    return np.asarray(out, dtype=float) + 0.5 * target.dim * np.log(2 * np.pi * target.params["prior_scale"] ** 2)


@corrupts(
    "grad-log-joint-prior-scale", "000", "grad_log_joint", "grad log p with the prior term -z / s instead of -z / s^2"
)
def _(out, target, Z, **_):
    if target.kind not in ("linear", "logistic"):
        return out
    s = target.params["prior_scale"]
    return np.asarray(out, dtype=float) + np.atleast_2d(Z) / s**2 - np.atleast_2d(Z) / s


@mutant(
    "gaussian-entropy-half-constant",
    "000",
    "gaussian_entropy",
    "Entropy of N(m, C C^T) with (d/2) log 2 pi but without the + d/2 (log(2 pi e) taken as log 2 pi)",
)
def _(orig, owner):
    return lambda C, structure="tril": orig(C, structure) - 0.5 * len(C)


@mutant(
    "exact-optimum-covariance-not-inverted",
    "002",
    "exact_optimum",
    "the optimum's C* from the Cholesky factor of E_q Hess instead of its inverse (precision for covariance)",
)
def _(orig, owner):
    def exact_optimum(target, structure="tril"):
        m, C, f = orig(target, structure)
        C2 = np.linalg.cholesky(np.linalg.inv(np.asarray(C) @ np.asarray(C).T))
        return m, C2, owner.exact_energy(target, m, C2)[0] - np.linalg.slogdet(C2)[1]

    return exact_optimum


@mutant(
    "gd-exact-gradient-dropped-prior",
    "002",
    "gradient_descent_exact",
    "gradient descent on a regression target computes its own gradient without the prior's m / s^2 term",
)
def _(orig, owner):
    def gradient_descent_exact(target, m0, C0, step, steps, method, M=None):
        def grad_l(m, C):
            _, gm, gC = owner.exact_energy(target, m, C)
            if target.kind in ("linear", "logistic"):
                gm = gm - m / target.params["prior_scale"] ** 2
            return gm, gC

        return owner.gradient_descent(grad_l, m0, C0, step, steps, method, M)

    return gradient_descent_exact


@mutant(
    "hess-log-joint-prior-unscaled",
    "000",
    "hess_log_joint",
    "Hess log p of a regression target with the prior term -I instead of -I / s^2",
)
def _(orig, owner):
    def hess_log_joint(target, z):
        H = np.asarray(orig(target, z), dtype=float)
        if target.kind in ("linear", "logistic", "hierarchical_logistic") and "prior_scale" in target.params:
            H = H + np.eye(len(H)) / target.params["prior_scale"] ** 2 - np.eye(len(H))
        return H

    return hess_log_joint


@mutant(
    "frame-laplace-uses-hessian",
    "000",
    "frame",
    "the Laplace frame takes L = chol(H) instead of chol(H^{-1}) (curvature for covariance)",
)
def _(orig, owner):
    def frame(target, kind="laplace"):
        z0, L, M, mu = orig(target, kind)
        if kind != "laplace":
            return z0, L, M, mu
        H = np.linalg.inv(np.asarray(L) @ np.asarray(L).T)
        L2 = np.linalg.cholesky(H)
        ev = np.linalg.eigvalsh(L2.T @ H @ L2)
        return z0, L2, float(ev[-1]), float(ev[0])

    return frame


@mutant(
    "framed-energy-gradient-not-pulled-back",
    "000",
    "framed_energy",
    "the framed target's energy uses L grad instead of L^T grad (the chain rule transposed)",
)
def _(orig, owner):
    def framed_energy(target, z0, L, m, C, U, structure="full"):
        U = np.atleast_2d(U)
        G = np.array([-np.asarray(L) @ np.asarray(target.grad_logp(z0 + L @ (C @ u + m)), dtype=float) for u in U])
        gC = G.T @ U / len(U)
        return G.mean(axis=0), gC if structure == "full" else np.tril(gC)

    return framed_energy


@corrupts(
    "gaussian-log-density-no-jacobian",
    "000",
    "gaussian_log_density",
    "log N(z; m, C C^T) without the -log|det C| of the change of variables",
)
def _(out, C, **_):
    return np.asarray(out) + np.linalg.slogdet(np.asarray(C, float))[1]


substitutes(
    "step-rule-thm9-switch-as-thm6",
    "000",
    "step_sizes",
    "the switching form of Thm 9 built with mu instead of mu/2 (Thm 6's mapping): the switch comes at 4 floor(a/mu^2)",
    "rule",
    "thm9-switch",
    "thm6-switch",
)


# ---- input checks (000.claim-bad-input) ------------------------------------------------------------------------------
@mutant(
    "prox-accepts-upper-entries",
    "000",
    "entropy_prox",
    "entropy_prox only checks the diagonal: entries above it pass through into an answer outside T^d",
)
def _(orig, owner):
    def entropy_prox(C, gamma):
        C = np.asarray(C, dtype=float)
        return orig(np.tril(C), gamma) + np.triu(C, 1)

    return entropy_prox


@mutant(
    "average-tail-fraction-clamped",
    "000",
    "average_weights",
    "a tail fraction above 1 silently clamped to 1 instead of refused",
)
def _(orig, owner):
    def average_weights(kind, T, a=None, gamma=None, tail_fraction=0.5):
        if kind == "tail":
            return orig(kind, T, tail_fraction=min(tail_fraction, 1.0))
        return orig(kind, T, a=a, gamma=gamma)

    return average_weights


# ---- target closed forms (000.claim-target-closed-forms) -------------------------------------------------------------
@mutant("mode-linear-no-prior", "000", "mode", "the linear model's mode solved without the prior's precision (the MLE)")
def _(orig, owner):
    def mode(target):
        if target.kind != "linear":
            return orig(target)
        X, y = np.asarray(target.params["X"]), np.asarray(target.params["y"])
        return np.linalg.lstsq(X, y, rcond=None)[0]

    return mode


@corrupts(
    "log-evidence-half-log-2pi-per-point",
    "000",
    "log_evidence",
    "log p(x) without the -(N/2) log 2 pi of the Gaussian likelihood",
)
def _(out, target):
    return out + 0.5 * len(target.params["y"]) * np.log(2 * np.pi)


# ---- the end-to-end driver (000.claim-fit) ---------------------------------------------------------------------------
@corrupts(
    "fit-uniform-average-includes-start",
    "000",
    "fit",
    "the uniform average taken over w^0..w^T (the start included) instead of w^1..w^T",
)
def _(out, target, method, steps, step_size, average, seed, frame, init=None):
    if average != "uniform":
        return out
    from types import SimpleNamespace

    return SimpleNamespace(**{**vars(out), "m": np.mean(out.ms, axis=0), "C": np.mean(out.Cs, axis=0)})


@mutant("fit-one-sample-for-all-steps", "000", "fit", "the driver draws u once and reuses it at every step")
def _(orig, owner):
    def fit(target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None, init=None):
        from types import SimpleNamespace

        if frame is not None or method.startswith("gd-"):
            return orig(target, method, steps, step_size, average, seed, frame, init)
        M = owner.smoothness(target)
        gamma = step_size or (1 / M if method == "prox-sgd" else 1 / (2 * M))
        u = np.random.default_rng(seed).standard_normal(target.dim)
        ms, Cs = ([np.zeros(target.dim)], [np.eye(target.dim)]) if init is None else ([init[0]], [init[1]])
        for _ in range(steps):
            est, step = (
                ("energy", lambda Y: owner.entropy_prox(Y, gamma))
                if method == "prox-sgd"
                else ("entropy", lambda Y: owner.project_wm(Y, M, "sym"))
            )
            gm, gC = getattr(owner, est)(target, ms[-1], Cs[-1], u, "tril" if method == "prox-sgd" else "sym")
            ms.append(ms[-1] - gamma * gm)
            Cs.append(step(Cs[-1] - gamma * gC))
        w = owner.average_weights(average, steps)
        M_, C_ = np.array(ms), np.array(Cs)
        return SimpleNamespace(
            m=w @ M_,
            C=np.tensordot(w, C_, 1),
            m_last=M_[-1],
            C_last=C_[-1],
            step_sizes=np.full(steps, gamma),
            ms=M_,
            Cs=C_,
        )

    return fit


def _fit_step(change):
    """A ``fit`` that runs with the step ``change(owner, target, method, steps, step_size, frame)`` instead."""

    def make(orig, owner):
        def fit(target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None, init=None):
            step_size = change(owner, target, method, steps, step_size, frame)
            return orig(target, method, steps, step_size, average, seed, frame, init)

        return fit

    return make


mutant("fit-default-step-2-over-M", "000", "fit", "the driver's default step 2/M (outside Thm 7's range (0, 1/M])")(
    _fit_step(
        lambda owner, target, method, steps, step, frame: (
            2.0 / owner.smoothness(target) if step is None and frame is None and not method.startswith("gd-") else step
        )
    )
)


@corrupts(
    "fit-frame-average-not-mapped-back",
    "000",
    "fit",
    "a run in the Laplace frame returns its average mean in frame coordinates (x, not z0 + L x)",
)
def _(out, target, method, steps, step_size, average, seed, frame, init=None):
    if frame is None:
        return out
    from types import SimpleNamespace

    from refvi.verification.examples.numpy_adapter import IMPL

    z0, L = IMPL.framed_constants(target, frame)[:2]
    return SimpleNamespace(**{**vars(out), "m": np.linalg.solve(L, out.m - z0)})


@mutant(
    "fit-theta-average-thm7-for-proj",
    "000",
    "fit",
    "Proj-SGD's theta average takes Thm 7's weights (theta = 1/(1 + 2 a g^2), on w^1..w^T), not Thm 10's",
)
def _(orig, owner):
    def fit(target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None, init=None):
        out = orig(target, method, steps, step_size, average, seed, frame, init)
        if average != "theta" or method != "proj-sgd":
            return out
        from types import SimpleNamespace

        a = owner.noise_constants("entropy", target.dim, owner.smoothness(target), 0.0)[0]
        w = owner.average_weights("theta7", steps, a=a, gamma=float(out.step_sizes[0]))
        return SimpleNamespace(**{**vars(out), "m": w @ out.ms, "C": np.tensordot(w, out.Cs, 1)})

    return fit


@mutant(
    "fit-given-frame-mapped-back-by-L",
    "000",
    "fit",
    "a run in a given frame (z0, L) maps C back as L C_x even when L is not lower triangular (C leaves V)",
)
def _(orig, owner):
    def fit(target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None, init=None):
        out = orig(target, method, steps, step_size, average, seed, frame, init)
        if not isinstance(frame, tuple) or method != "prox-sgd":
            return out
        from types import SimpleNamespace

        L = np.asarray(frame[1], dtype=float)
        Cs = np.array([L @ np.linalg.cholesky(np.linalg.solve(L, C @ C.T) @ np.linalg.inv(L).T) for C in out.Cs])
        return SimpleNamespace(**{**vars(out), "Cs": Cs, "C_last": Cs[-1]})

    return fit


@mutant(
    "fit-start-not-mapped-into-frame",
    "000",
    "fit",
    "a run in a frame starts from the given (m0, C0) taken as frame coordinates, not mapped by x = L^-1(z - z0)",
)
def _(orig, owner):
    def fit(target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None, init=None):
        if frame is None or init is None:
            return orig(target, method, steps, step_size, average, seed, frame, init)
        z0, L = owner.framed_constants(target, frame)[:2]
        from refvi.verification.examples.numpy_adapter import factor_in_V

        m0, C0 = (np.asarray(x, dtype=float) for x in init)  # the start whose frame coordinates are (m0, C0)
        C = factor_in_V(L @ C0 @ C0.T @ L.T, "tril" if method == "prox-sgd" else "sym")
        return orig(target, method, steps, step_size, average, seed, frame, (z0 + L @ m0, C))

    return fit


def _frame_constant_phase(owner, target, method, steps, step, frame):
    """Thm 6's constant phase mu'/(2a) of the frame, or ``step`` outside a frame / when one is given."""
    if frame is None or step is not None or method.startswith("gd-"):
        return step
    M, mu = owner.framed_constants(target, frame)[2:]
    a = owner.noise_constants("energy" if method == "prox-sgd" else "entropy", target.dim, M, 0.0)[0]
    return mu / (2.0 * a)


mutant(
    "fit-frame-default-constant-phase",
    "000",
    "fit",
    "in a frame the default step is Thm 6's constant phase mu'/(2a) at every step: no decay, and no switch to "
    "1/(M' sqrt T) when mu' < M'/10",
)(_fit_step(_frame_constant_phase))


mutant(
    "fit-cor30-A-over-M",
    "000",
    "fit",
    "fit's Cor 30 rule 'A log T / T' takes A = 1/M (the smoothness) instead of A = 1/mu",
)(
    _fit_step(
        lambda owner, target, method, steps, step, frame: (
            np.log(steps) / (steps * owner.smoothness(target))
            if isinstance(step, str) and step == "A log T / T"
            else step
        )
    )
)


mutant("fit-gd-prox-half-step", "002", "fit", "fit's gd-prox method takes 1/(2M) as its default step, not Thm 6's 1/M")(
    _fit_step(
        lambda owner, target, method, steps, step, frame: (
            0.5 / owner.smoothness(target) if method == "gd-prox" and step is None else step
        )
    )
)


substitutes(
    "proj-sgd-stl-runs-entropy",
    "000",
    "proj_sgd",
    "Proj-SGD asked for the STL estimator runs the entropy one (an estimator code shared by two names)",
    "estimator",
    "stl",
    "entropy",
)


mutant(
    "fit-proj-default-quarter-over-M",
    "000",
    "fit",
    "the driver's default Proj-SGD step 1/(4M) instead of 1/(2M) (a power of two off, inside every theorem's range)",
)(
    _fit_step(
        lambda owner, target, method, steps, step, frame: (
            0.25 / owner.smoothness(target) if method == "proj-sgd" and step is None and frame is None else step
        )
    )
)
