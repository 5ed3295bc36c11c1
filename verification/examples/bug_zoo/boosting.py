"""Planted bugs in the seed 001 (boosting VI) sub-adapter of the example implementation."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

from refvi.verification.examples.bug_zoo import corrupts, mutant, substitutes


def _fw_override(change):
    def make(orig, owner):
        def frank_wolfe(inst, n_iter, step="fixed", **kw):
            step, kw = change(step, dict(kw))
            return orig(inst, n_iter, step, **kw)

        return frank_wolfe

    return make


mutant("boosting-fixed-step-off-by-one", "001", "boosting.frank_wolfe", "Variant 0 step 2/(t+3) instead of 2/(t+2)")(
    lambda orig, owner: _fixed_step_plus_one(orig)
)
mutant(
    "boosting-delta-step-ignored",
    "001",
    "boosting.frank_wolfe",
    "step 'fixed_delta' runs 2/(t+2) (the printed Thm 4 step, E001-2) and reports 2/(delta t+2)",
)(lambda orig, owner: _delta_step_lying(orig))
mutant(
    "boosting-adversarial-lmo-is-exact",
    "001",
    "boosting.frank_wolfe",
    "the delta-approximate LMO returns the exact minimiser",
)(_fw_override(lambda step, kw: (step, {**kw, "lmo": "exact"})))


def _fixed_step_plus_one(orig):
    """Runs with a step one index late; reports it honestly (the weight closed form and rates see it)."""

    def frank_wolfe(inst, n_iter, step="fixed", **kw):
        if step != "fixed":
            return orig(inst, n_iter, step, **kw)
        # a run one step longer with its first step dropped takes 2/(t+3) at step t (from a different start)
        r = orig(inst, n_iter + 1, step, **{**kw, "keep_weights": True})
        return SimpleNamespace(
            weights=r.weights,
            f=r.f[1:],
            gap=r.gap[1:],
            gamma=r.gamma[1:],
            atom=r.atom[1:],
            weights_history=r.weights_history[1:] if kw.get("keep_weights") else None,
        )

    return frank_wolfe


def _delta_step_lying(orig):
    def frank_wolfe(inst, n_iter, step="fixed", **kw):
        if step != "fixed_delta":
            return orig(inst, n_iter, step, **kw)
        r = orig(inst, n_iter, "fixed", **kw)
        t = np.arange(np.asarray(r.gamma).size)
        told = 2.0 / ((kw.get("delta") or 1.0) * t + 2.0)
        if dataclasses.is_dataclass(r) and not isinstance(r, type):
            return dataclasses.replace(r, gamma=told)
        return SimpleNamespace(**{**vars(r), "gamma": told})

    return frank_wolfe


@mutant(
    "boosting-grid-means-upper-end-dropped",
    "001",
    "boosting.grid_means",
    "the quantized means lo + stride k for k < (hi - lo) / stride: the upper end hi is left out when the stride "
    "divides the side",
)
def _(orig, owner):
    def grid_means(lo, hi, stride):
        Z = np.asarray(orig(lo, hi, stride))
        return Z[~np.any(np.isclose(Z, np.atleast_1d(hi), rtol=0.0, atol=1e-12), axis=1)]

    return grid_means


@mutant("boosting-line-search-half", "001", "boosting.line_search", "line search returns half the minimising step")
def _(orig, owner):
    def line_search(inst, alpha, k):
        return 0.5 * orig(inst, alpha, k)

    return line_search


@mutant("boosting-scores-drop-logp", "001", "boosting.scores", "LMO scores <s_k, log q> without the target term")
def _(orig, owner):
    from refvi.verification.examples.numpy_boosting import _problem

    def scores(inst, alpha):  # <s_k, log q - log p> + <s_k, log p>: the example's own log p table
        P = _problem(inst)
        return np.asarray(orig(inst, alpha)) + P.T @ (P.w * P.logp)

    return scores


@mutant("boosting-gap-max-score", "001", "boosting.gap", "the FW gap <q, grad f> - max_k scores_k (max for min)")
def _(orig, owner):
    def gap(inst, alpha):
        sc = np.asarray(owner.scores(inst, alpha))
        return float(np.asarray(alpha, dtype=float) @ sc - sc.max())

    return gap


@mutant("boosting-objective-ignores-shift", "001", "boosting.objective", "f ignores the additive constant of log p")
def _(orig, owner):
    def objective(inst, alpha):
        return orig(inst, alpha) + inst.target.log_shift

    return objective


@mutant("boosting-gram-untruncated", "001", "boosting.gram", "Gram of the untruncated Gaussians (no 1/(Z_i Z_j))")
def _(orig, owner):
    def gram(inst):
        from scipy.special import ndtr

        G = np.asarray(orig(inst))
        z = np.prod(
            ndtr((inst.hi - inst.means) / inst.scales[:, None]) - ndtr((inst.lo - inst.means) / inst.scales[:, None]),
            axis=1,
        )
        return G * z[:, None] * z[None, :]

    return gram


@mutant(
    "boosting-score-gradient-no-logz",
    "001",
    "boosting.score_gradient",
    "Eq. (10) without the truncation normaliser's gradient",
)
def _(orig, owner):
    def score_gradient(lo, hi, mu, sigma, Z, values):
        return (np.asarray(values)[:, None] * (np.asarray(Z) - np.atleast_1d(mu)) / sigma**2).mean(0)

    return score_gradient


def _fields(record) -> dict:
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.asdict(record)
    return dict(vars(record))


@corrupts(
    "boosting-thm8-printed-constant",
    "001",
    "boosting.family_constants",
    "Thm 8 constant as printed (sigma_min^{d/2} in the denominator, E001-4)",
)
def _(out, **_):
    d = _fields(out)
    return SimpleNamespace(**{**d, "thm8_ldiam": d["thm8_ldiam_printed"]})


@corrupts(
    "boosting-family-K-at-centre",
    "001",
    "boosting.family_constants",
    "K = P(N(mu, sigma_max^2) in A) at the box centre instead of its minimum (a corner)",
)
def _(out, lo, hi, sigma_max, **_):
    from scipy.special import ndtr

    d = _fields(out)
    half = 0.5 * (np.atleast_1d(hi) - np.atleast_1d(lo)) / sigma_max
    K = float(np.prod(ndtr(half) - ndtr(-half)))
    return SimpleNamespace(**{**d, "K": K, "thm2_diam_sq": d["thm2_diam_sq"] * (d["K"] / K) ** 2})


def _scaled_curvature_bound(k):
    def make(orig, owner):
        return lambda inst: k * orig(inst)

    return make


mutant(
    "boosting-curvature-bound-halved",
    "001",
    "boosting.curvature_lower_bound",
    "C_f lower bound at gamma = 1 only, halved (not a valid chi^2 bound)",
)(_scaled_curvature_bound(0.5))
mutant(
    "boosting-curvature-bound-doubled",
    "001",
    "boosting.curvature_lower_bound",
    "the C_f lower bound 2 chi^2: Eq. 7's factor 2 / gamma^2 carried into the gamma -> 0 limit (over C_f's chi^2)",
)(_scaled_curvature_bound(2.0))


@mutant(
    "boosting-norm-corrective-L-one",
    "001",
    "boosting.norm_corrective_weights",
    "Variant 0 solves the quadratic model with L = 1 whatever L is passed",
)
def _(orig, owner):
    def norm_corrective_weights(inst, alpha, idx, L):
        return orig(inst, alpha, idx, 1.0)

    return norm_corrective_weights


@mutant(
    "boosting-fully-corrective-no-reopt",
    "001",
    "boosting.fully_corrective_weights",
    "Variant 1 keeps the old weights and gives the new atom the line-search step only",
)
def _(orig, owner):
    def fully_corrective_weights(inst, alpha, idx):
        idx = np.asarray(idx)
        a = np.asarray(alpha, dtype=float)
        new = [i for i in idx if a[i] <= 0]
        if not new:
            return a[idx] / a[idx].sum()
        g = owner.line_search(inst, a, int(new[0]))
        b = (1 - g) * a
        b[int(new[0])] += g
        return b[idx]

    return fully_corrective_weights


@mutant(
    "boosting-records-f-before-step",
    "001",
    "boosting.corrective",
    "corrective runs report f one step late (f_t is the value before step t-1)",
)
def _(orig, owner):
    def corrective(inst, n_iter, variant="full", **kw):
        r = orig(inst, n_iter, variant, **kw)
        f = np.concatenate([r.f[:1], r.f[:-1]])
        return SimpleNamespace(
            weights=r.weights, f=f, gap=r.gap, gamma=r.gamma, atom=r.atom, weights_history=r.weights_history
        )

    return corrective


@mutant(
    "boosting-fixed-weights-denominator",
    "001",
    "boosting.fixed_step_weights",
    "Variant 0's closed form with T(T+2) in the denominator instead of T(T+1)",
)
def _(orig, owner):
    def fixed_step_weights(chosen, n_atoms):
        T = len(chosen)
        return np.asarray(orig(chosen, n_atoms), dtype=float) * (T + 1) / (T + 2)

    return fixed_step_weights


@mutant(
    "boosting-stochastic-lmo-ascent",
    "001",
    "boosting.stochastic_lmo",
    "Algorithm 2 steps mu along +gradient (mu + lr g): SGD ascends E log(q/p)",
)
def _(orig, owner):
    def stochastic_lmo(inst, alpha, *, n_samples=64, n_steps=50, lr=0.05, seed=0):
        return orig(inst, alpha, n_samples=n_samples, n_steps=n_steps, lr=-lr, seed=seed)

    return stochastic_lmo


@mutant(
    "boosting-stochastic-lmo-step-no-clip",
    "001",
    "boosting.stochastic_lmo_step",
    "Algorithm 2's step leaves the mean outside the box (the projection onto A dropped)",
)
def _(orig, owner):
    def stochastic_lmo_step(inst, alpha, mu, Z, lr=0.05):
        g = (np.asarray(mu, dtype=float) - np.asarray(orig(inst, alpha, mu, Z, lr=1e-3), dtype=float)) / 1e-3
        return np.asarray(mu, dtype=float) - lr * g

    return stochastic_lmo_step


@mutant(
    "boosting-stochastic-lmo-step-mean-baseline",
    "001",
    "boosting.stochastic_lmo_step",
    "Algorithm 2's baseline is the mean of all S values, v_s's own included: (S - 1)/S times the gradient",
)
def _(orig, owner):
    def stochastic_lmo_step(inst, alpha, mu, Z, lr=0.05):
        S = np.asarray(Z).shape[0]
        return orig(inst, alpha, mu, Z, lr=lr * (S - 1) / S)

    return stochastic_lmo_step


@mutant(
    "boosting-truncation-mass-not-normalised",
    "001",
    "boosting.truncation_optimum",
    "p_A's atom weights w_j P_j(A) left unnormalised (not divided by P(A)); f* itself right",
)
def _(orig, owner):
    def truncation_optimum(inst):
        fstar, weights = orig(inst)
        return fstar, None if weights is None else np.asarray(weights) * np.exp(-fstar - inst.target.log_shift)

    return truncation_optimum


# ---- Monte Carlo boosting (§5, Figure 3) -----------------------------------------------------------------------------
def _reweighted(run, target, history):
    """The run with other weights and f recomputed for them on its own draws (the example's sample average)."""
    from refvi.verification.examples import numpy_boosting_mc as mc

    draws, S = np.asarray(run.draws), np.asarray(run.draws).shape[1]
    logp = mc._logp(target, draws.reshape(-1, draws.shape[2]))
    f = [
        mc._objective(
            a,
            mc._log_normal(draws[: a.size].reshape(-1, draws.shape[2]), run.means[: a.size], run.sigma),
            logp[: a.size * S],
            S,
        )
        for a in history
    ]
    return SimpleNamespace(
        means=run.means,
        sigma=run.sigma,
        draws=run.draws,
        weights=history[-1],
        weights_history=history,
        f=np.array(f),
        sample=mc.sampler(run.means, run.sigma, history),
    )


@corrupts(
    "boosting-mc-fixed-step-t-plus-2",
    "001",
    "boosting.mc_boost",
    "Monte Carlo boosting's fixed rule 2/(t+2) (q^0 discarded at t = 0) instead of 2/(t+3)",
)
def _(out, target, rule, **_):
    if rule != "fixed":
        return out
    history = [np.ones(1)]
    for t in range(len(out.weights_history) - 1):
        g = 2.0 / (t + 2.0)
        history.append(np.append((1 - g) * history[-1], g))
    return _reweighted(out, target, history)


substitutes(
    "boosting-mc-line-search-skipped",
    "001",
    "boosting.mc_boost",
    "the line-search rule takes the fixed step 2/(t+3) instead of minimising f on the segment",
    "rule",
    "line_search",
    "fixed",
)


@corrupts(
    "boosting-mc-objective-unweighted",
    "001",
    "boosting.mc_boost",
    "f(alpha) averages log q - log p over every component's draws equally, not weighted by alpha_k",
)
def _(out, target, **_):
    from refvi.verification.examples import numpy_boosting_mc as mc

    draws = np.asarray(out.draws)
    K, S, d = draws.shape
    f = []
    for a in out.weights_history:
        Z = draws[: a.size].reshape(-1, d)
        with np.errstate(divide="ignore"):
            lq = mc.logsumexp(mc._log_normal(Z, out.means[: a.size], out.sigma) + np.log(a)[:, None], axis=0)
        f.append(float(np.mean(lq - mc._logp(target, Z))))
    return SimpleNamespace(**{**vars(out), "f": np.array(f)})


@corrupts(
    "boosting-mc-sample-first-weights",
    "001",
    "boosting.mc_boost",
    "the run's sampler draws the components with alpha^1 padded with zeros (the weights of the first step, "
    "not of the requested iterate)",
)
def _(out, **_):
    from refvi.verification.examples import numpy_boosting_mc as mc

    h = [np.asarray(a, dtype=float) for a in out.weights_history]
    stale = [h[min(t, 1)] if t < 2 else np.append(h[1], np.zeros(t - 1)) for t in range(len(h))]
    return SimpleNamespace(**{**vars(out), "sample": mc.sampler(np.asarray(out.means), out.sigma, stale)})


@corrupts(
    "boosting-mc-mean-field-scale",
    "001",
    "boosting.mc_mean_field",
    "the mean-field q^0's sigma divided by sqrt 2 (the optimum with the entropy term -sum log sigma at half weight, "
    "for a Gaussian target)",
)
def _(out, target, U, **_):
    m, s = out
    return m, np.asarray(s) / np.sqrt(2.0)


# ---- the mixture q = sum_k alpha_k s_k as a distribution (Eq. 4, §4.2) --------------------------------------------
@mutant(
    "boosting-mixture-logpdf-unweighted",
    "001",
    "boosting.mixture_logpdf",
    "log q averages the active atoms' densities equally instead of weighting them by alpha",
)
def _(orig, owner):
    def mixture_logpdf(inst, alpha, Z):
        a = np.asarray(alpha, dtype=float)
        return orig(inst, np.where(a > 0, 1.0, 0.0) / np.count_nonzero(a), Z)

    return mixture_logpdf


@corrupts(
    "boosting-mixture-var-within-only",
    "001",
    "boosting.mixture_moments",
    "the mixture's variance keeps the within-component term sum_k alpha_k v_k and drops the between-component "
    "spread sum_k alpha_k (m_k - m)^2",
)
def _(out, inst, alpha, **_):
    from scipy.stats import truncnorm

    s = inst.scales[:, None]
    mk = truncnorm.stats((inst.lo - inst.means) / s, (inst.hi - inst.means) / s, loc=inst.means, scale=s, moments="m")
    mean, var = out
    return mean, var - np.asarray(alpha, dtype=float) @ (mk - mean) ** 2


@corrupts(
    "boosting-mixture-norm-sq-diagonal",
    "001",
    "boosting.mixture_norm_sq",
    "||q||^2 as sum_k alpha_k^2 ||s_k||^2, the cross terms <s_i, s_j> of alpha^T G alpha dropped",
)
def _(out, inst, alpha, **_):
    from refvi.verification.examples.numpy_boosting import _problem

    a = np.asarray(alpha, dtype=float)
    return float(a * a @ np.diag(_problem(inst).gram))


@corrupts(
    "boosting-mixture-sample-unshuffled",
    "001",
    "boosting.mixture_sample",
    "ancestral draws returned grouped by component (the last step, a random permutation, left out)",
)
def _(out, inst, alpha, **_):
    Z = np.asarray(out)
    k = np.argmin(((Z[:, None, :] - inst.means[None, :, :]) ** 2).sum(2), axis=1)  # nearest atom as a proxy
    return Z[np.argsort(k, kind="stable")]


@mutant(
    "boosting-mixture-sample-component-per-coordinate",
    "001",
    "boosting.mixture_sample",
    "the component is drawn afresh for every coordinate: right marginals, wrong joint law in d >= 2",
)
def _(orig, owner):
    def mixture_sample(inst, alpha, n, seed=0):
        cols = [np.asarray(orig(inst, alpha, n, seed + 7919 * j))[:, j] for j in range(inst.d)]
        return np.column_stack(cols)

    return mixture_sample


@corrupts(
    "boosting-density-bounds-nearest-corner",
    "001",
    "boosting.density_bounds",
    "eps taken at each atom's nearest box corner instead of its farthest (too large: L = 1/eps too small)",
)
def _(out, inst, **_):
    from refvi.verification.examples.numpy_boosting import _problem

    m, s = inst.means, inst.scales[:, None]
    near = np.where(m - inst.lo < inst.hi - m, inst.lo, inst.hi)
    z = (near - m) / s
    eps = np.exp(-0.5 * (z * z).sum(1) - inst.d * np.log(s[:, 0] * np.sqrt(2 * np.pi)) - _problem(inst).lz).min()
    return float(eps), out[1]


@corrupts(
    "boosting-cor3-diameter-squared-M",
    "001",
    "boosting.family_constants",
    "Cor 3's diameter bound as 4 M Leb instead of (2 M)^2 Leb",
)
def _(out, **_):
    return SimpleNamespace(**{**vars(out), "cor3_diam_sq": out.cor3_diam_sq / out.M})


# ---- input checks (001.claim-bad-input) ------------------------------------------------------------------------------
@mutant(
    "boosting-objective-underflow-nan",
    "001",
    "boosting.objective",
    "an atom density that underflows to 0 on the box is not refused: f comes back NaN",
)
def _(orig, owner):
    def objective(inst, alpha):
        try:
            return orig(inst, alpha)
        except ValueError:
            return float("nan")

    return objective


@mutant(
    "boosting-fixed-step-weights-wraps-index",
    "001",
    "boosting.fixed_step_weights",
    "atom index -1 wraps around to the last atom (NumPy indexing) instead of being refused",
)
def _(orig, owner):
    def fixed_step_weights(chosen, n_atoms):
        return orig([int(k) % n_atoms for k in chosen], n_atoms)

    return fixed_step_weights


@corrupts(
    "boosting-mc-log-predictive-of-mean-logit",
    "001",
    "boosting.mc_predictive",
    "the log predictive taken as mean_s log sigmoid (Jensen's lower bound) instead of log mean_s sigmoid",
)
def _(out, X, y, draws):
    T = (np.asarray(X) @ np.asarray(draws).T) * np.asarray(y)[:, None]
    return out[0], float(np.mean(-np.logaddexp(0.0, -T)))


@corrupts(
    "boosting-diameter-sq-largest-norm",
    "001",
    "boosting.diameter_sq",
    "diam(A)^2 taken as the largest ||s_k||^2 (the Gram's diagonal) instead of max_ij ||s_i - s_j||^2",
)
def _(out, inst, **_):
    from refvi.verification.examples.numpy_boosting import _problem

    return float(np.max(np.diag(_problem(inst).gram)))


@mutant(
    "boosting-variant1-step-over-delta",
    "001",
    "boosting.frank_wolfe",
    "Variant 1 with an approximate LMO divides the curvature step by delta, min(1, gap / (delta C)) (Thm 4's "
    "C/delta carried into the step); exact-LMO runs are unaffected",
)
def _(orig, owner):
    def frank_wolfe(
        inst, n_iter, step="fixed", *, lmo="exact", delta=None, curvature=None, L=None, init=None, keep_weights=False
    ):
        if step == "curvature" and lmo != "exact" and delta is not None and curvature is not None:
            curvature = curvature * delta
        return orig(
            inst, n_iter, step, lmo=lmo, delta=delta, curvature=curvature, L=L, init=init, keep_weights=keep_weights
        )

    return frank_wolfe


@corrupts(
    "boosting-thm8-one-dimensional-factor",
    "001",
    "boosting.family_constants",
    "Thm 8's corrected constant with the d = 1 factor 2^(-1/2) in every dimension (2^(-d/2) hard-coded at d = 1)",
)
def _(out, lo, **_):
    d = _fields(out)
    dim = np.atleast_1d(lo).size
    return SimpleNamespace(**{**d, "thm8_ldiam": d["thm8_ldiam"] * 2 ** (dim / 2 - 0.5)})


@corrupts(
    "boosting-fw-trace-coarse-quadrature",
    "001",
    "boosting.frank_wolfe",
    "Frank-Wolfe with an approximate LMO evaluates the intermediate f(q^t) of its trace with a coarse quadrature "
    "(a relative error of 2e-7, low), only the returned final value with the fine rule",
)
def _(out, lmo="exact", **_):
    if lmo == "exact":
        return out
    d = _fields(out)
    f = np.asarray(d["f"], dtype=float)
    return SimpleNamespace(**{**d, "f": np.concatenate([f[:-1] * (1.0 - 2e-7), f[-1:]])})


@mutant(
    "boosting-norm-corrective-family-eps",
    "001",
    "boosting.corrective",
    "Variant 0's default L is 1/eps of the continuous family (sigma_min at every mean, Thm 2's eps), not the atoms'",
)
def _(orig, owner):
    """A valid but larger smoothness constant (60x on 001.thm9's 3-atom instance with unequal scales): the steps are
    that much shorter.  On a common-scale atom set (I1, I2) the two eps coincide."""
    from scipy.stats import norm

    def corrective(inst, n_iter, variant="full", *, L=None, **kw):
        if variant == "norm" and L is None:
            s = float(np.min(inst.scales))
            far = np.maximum(inst.means - inst.lo, inst.hi - inst.means)
            mass = norm.cdf((inst.hi - inst.means) / s) - norm.cdf((inst.lo - inst.means) / s)
            L = 1.0 / float(np.min(np.prod(norm.pdf(far / s) / (s * mass), axis=1)))
        return orig(inst, n_iter, variant, L=L, **kw)

    return corrective


@mutant(
    "boosting-corrective-delta-lmo-sign",
    "001",
    "boosting.corrective",
    "corrective's delta-approximate LMO admits <grad, s - q> <= delta * gap (Eq. 9 with the gap's sign flipped)",
)
def _(orig, owner):
    def bad_lmo(sc, q_score, lmo, delta):
        lin = sc - q_score
        if lmo == "exact" or not lin.min() < 0.0:
            return int(np.argmin(lin))
        ok = np.nonzero(lin <= -delta * lin.min())[0]  # should be lin <= delta * lin.min()
        return int(ok[np.argmax(lin[ok])])

    def corrective(inst, n_iter, variant="full", **kw):
        saved = owner._lmo
        owner._lmo = bad_lmo
        try:
            return orig(inst, n_iter, variant, **kw)
        finally:
            owner._lmo = saved

    return corrective


# ---- runs that report what they did not do (a record consistent with itself, but not with the algorithm) ----------


def _relabel(record, **fields):
    return SimpleNamespace(**{**_fields(record), **fields})


@mutant(
    "boosting-line-search-reported-as-delta-step",
    "001",
    "boosting.frank_wolfe",
    "step 'fixed_delta' runs the line search and reports gamma_t = 2/(delta t + 2): every f, gap and weight it reports "
    "is that of the run it made",
    try_first=("001.thm4",),
)
def _(orig, owner):
    def frank_wolfe(inst, n_iter, step="fixed", **kw):
        if step != "fixed_delta":
            return orig(inst, n_iter, step, **kw)
        r = orig(inst, n_iter, "line_search", **kw)
        t = np.arange(np.asarray(r.gamma).size)
        return _relabel(r, gamma=2.0 / ((kw.get("delta") or 1.0) * t + 2.0))

    return frank_wolfe


@mutant(
    "boosting-fw-iterates-nudged",
    "001",
    "boosting.frank_wolfe",
    "after step 10 each reported iterate is moved a tenth of the way to the final one, with f and the gap recomputed "
    "for the moved iterates (a run that reports a better path than it took)",
    try_first=("001.thm4",),
)
def _(orig, owner):
    def frank_wolfe(inst, n_iter, step="fixed", **kw):
        r = orig(inst, n_iter, step, **{**kw, "keep_weights": True})
        W = np.array(r.weights_history, dtype=float)
        W[10:] = 0.9 * W[10:] + 0.1 * W[-1]
        f = np.array([owner.objective(inst, w) for w in W])
        gap = np.array([owner.gap(inst, w) for w in W])
        return _relabel(r, weights=W[-1], f=f, gap=gap, weights_history=W if kw.get("keep_weights") else None)

    return frank_wolfe


@mutant(
    "boosting-full-corrective-one-inner-step",
    "001",
    "boosting.corrective",
    "Variant 1 re-optimises its weights with one line-search step towards the new atom, not to the minimum of f on "
    "the active set, and reports it as the corrective step",
    try_first=("001.thm9",),
)
def _(orig, owner):
    def corrective(inst, n_iter, variant="full", **kw):
        if variant != "full":
            return orig(inst, n_iter, variant, **kw)
        return owner.frank_wolfe(inst, n_iter, "line_search", **{k: v for k, v in kw.items() if k != "L"})

    return corrective
