"""refvi.boosting: bad input, atoms / mixtures against scipy, and the algorithms' end-to-end guarantees."""

import math

import numpy as np
import pytest
from scipy import stats

from refvi.boosting import (
    ApproxLMO,
    AtomSet,
    BoostingProblem,
    Box,
    CauchyTarget,
    GaussianMixtureTarget,
    Mixture,
    StochasticLMO,
    corrective_frank_wolfe,
    fixed_step_weights,
    frank_wolfe,
)
from refvi.boosting.constants import curvature_lower_bound, family_constants
from refvi.targets import CallableTarget

MOG = GaussianMixtureTarget([0.4, 0.6], [-0.5, 0.6], [0.5, 0.5])


@pytest.fixture(scope="module")
def i1():
    atoms = AtomSet.grid(Box(-1, 1), 0.025, 0.5)
    return BoostingProblem(atoms, MOG), -MOG.log_prob_box(atoms.box)


# ---- bad input --------------------------------------------------------------------------------------------------

def test_bad_atoms_and_boxes():
    with pytest.raises(ValueError, match="positive volume"):
        Box(0.0, 0.0)
    with pytest.raises(ValueError, match="positive volume"):
        Box([0, 0], [1, 0])
    with pytest.raises(ValueError, match="outside"):
        AtomSet(Box(-1, 1), np.array([0.0, 1.5]), 0.5)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        AtomSet(Box(-1, 1), np.array([0.0]), 0.0)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        AtomSet(Box(-1, 1), np.array([0.0, 0.1]), np.array([0.5, -1.0]))
    with pytest.raises(ValueError, match="non-finite"):
        AtomSet(Box(-1, 1), np.array([np.nan]), 0.5)
    with pytest.raises(TypeError):
        AtomSet((-1, 1, 2), np.array([0.0]), 0.5)
    # a vector of scales is one sigma per atom: any other length is refused, shorter or longer, whatever d is
    box3 = Box([-2.0, -2.0, -2.0], [2.0, 2.0, 2.0])
    for scales in ([0.5], [0.5, 1.0, 1.5], [0.5, 1.0, 1.5, 2.0]):
        with pytest.raises(ValueError, match=r"one per atom\), got"):
            AtomSet(box3, [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], scales)
    np.testing.assert_array_equal(AtomSet(box3, [[0.0] * 3, [1.0] * 3], [0.5, 1.0]).scales, [[0.5] * 3, [1.0] * 3])


def test_bad_weights():
    atoms = AtomSet(Box(-1, 1), np.array([-0.5, 0.5]), 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        Mixture(atoms, [1.2, -0.2])
    with pytest.raises(ValueError, match="sum to one"):
        Mixture(atoms, [0.3, 0.3])
    with pytest.raises(ValueError, match="length 2"):
        Mixture(atoms, [1.0])
    prob = BoostingProblem(atoms, MOG)
    with pytest.raises(ValueError, match="sum to one"):
        frank_wolfe(prob, 3, init=[0.5, 0.6])


def test_bad_delta_and_steps(i1):
    prob, _ = i1
    for d in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="delta|finite"):
            ApproxLMO(d)
    with pytest.raises(ValueError, match="delta"):
        frank_wolfe(prob, 3, step="fixed_delta", delta=2.0)
    with pytest.raises(ValueError, match="curvature"):
        frank_wolfe(prob, 3, step="curvature")
    with pytest.raises(ValueError, match="step must be one of"):
        frank_wolfe(prob, 3, step="armijo")
    with pytest.raises(ValueError, match="variant"):
        corrective_frank_wolfe(prob, 3, variant="away")
    with pytest.raises(ValueError, match="n_iter"):
        frank_wolfe(prob, -1)


def test_target_not_finite_on_box():
    atoms = AtomSet(Box(-1, 1), np.array([0.0]), 0.5)
    bad = CallableTarget(lambda z: np.where(z[..., 0] > 0.5, -np.inf, 0.0), lambda z: np.zeros_like(z), 1)
    with pytest.raises(ValueError, match="finite on the box"):
        BoostingProblem(atoms, bad)
    with pytest.raises(ValueError, match="finite on the box"):
        with np.errstate(invalid="ignore"):
            BoostingProblem(atoms, lambda Z: np.log(Z[:, 0]))        # log of a negative number: NaN on the box
    with pytest.raises(ValueError, match="dimension"):
        BoostingProblem(atoms, GaussianMixtureTarget([1.0], [[0.0, 0.0]], [1.0]))


def test_underflowing_atoms_are_rejected():
    atoms = AtomSet(Box(-40, 40), np.array([-40.0, 40.0]), 0.3)
    with pytest.raises(ValueError, match="underflows"):
        BoostingProblem(atoms, CauchyTarget(0.0, 1.0), order=4, panels=50)


# ---- atoms and mixtures against scipy ---------------------------------------------------------------------------

def test_atom_moments_logpdf_and_sampling_match_scipy():
    atoms = AtomSet(Box([-1, 0], [1, 3]), np.array([[0.7, 0.2], [-0.9, 2.5]]), np.array([[0.3, 1.1], [0.8, 0.4]]))
    for k in range(2):
        m, v = atoms.moments(k)
        for j in range(2):
            lo, hi, mu, s = atoms.box.lo[j], atoms.box.hi[j], atoms.means[k, j], atoms.scales[k, j]
            d = stats.truncnorm((lo - mu) / s, (hi - mu) / s, loc=mu, scale=s)
            assert m[j] == pytest.approx(d.mean(), rel=1e-12)
            assert v[j] == pytest.approx(d.var(), rel=1e-10)
        Z = atoms.sample(k, 4000, 0)
        assert np.all(atoms.box.contains(Z))
        # CLT: 5 standard errors (false alarm < 1e-6 per coordinate)
        assert np.all(np.abs(Z.mean(0) - m) <= 5 * np.sqrt(v / 4000))
    z = np.array([[0.1, 1.0], [2.0, 1.0]])
    lp = atoms.logpdf(z, 0)
    assert np.isneginf(lp[1])
    assert lp[0] == pytest.approx(stats.truncnorm.logpdf(0.1, -1 / 0.3 - 0.7 / 0.3, 1 / 0.3 - 0.7 / 0.3, 0.7, 0.3)
                                  + stats.truncnorm.logpdf(1.0, -0.2 / 1.1, 2.8 / 1.1, 0.2, 1.1), rel=1e-12)
    # a 1-D vector is S points in one dimension and one point in d dimensions
    line = AtomSet(Box(-1, 1), np.array([0.0, 0.5]), 0.4)
    pts = np.array([-0.5, 0.1, 0.9])
    want = [stats.truncnorm.logpdf(pts, (-1 - mu) / 0.4, (1 - mu) / 0.4, mu, 0.4) for mu in (0.0, 0.5)]
    np.testing.assert_allclose(line.logpdf(pts), want, rtol=1e-12)
    np.testing.assert_allclose(atoms.logpdf(np.array([0.1, 1.0])), atoms.logpdf(z[:1]), rtol=0)


def test_mixture_density_integrates_to_one_and_samples():
    atoms = AtomSet.grid(Box(-1, 1), 0.5, 0.4)
    mix = Mixture.from_components(atoms, [0, 3], [0.25, 0.75])
    from scipy import integrate
    assert integrate.quad(lambda z: mix.pdf(np.array([[z]]))[0], -1, 1)[0] == pytest.approx(1.0, abs=1e-10)
    Z = mix.sample(20000, 1)
    assert abs(Z.mean() - mix.mean()[0]) <= 5 * math.sqrt(mix.var()[0] / 20000)
    assert mix.norm_sq() == pytest.approx(integrate.quad(lambda z: mix.pdf(np.array([[z]]))[0] ** 2, -1, 1)[0],
                                          rel=1e-10)


def test_grid():
    box = Box(-1, 1)
    g = box.grid(0.025)
    assert g.shape == (81, 1) and g[0, 0] == -1.0 and g[-1, 0] == pytest.approx(1.0)


# ---- constants ----------------------------------------------------------------------------------------------------

def test_constants_match_guide_numbers(i1):
    prob, fstar = i1
    assert prob.eps == pytest.approx(5.354e-4, rel=1e-3)
    assert prob.M == pytest.approx(1.5959, rel=1e-4)
    assert prob.atoms.diameter_sq() == pytest.approx(2.1748, rel=1e-4)
    assert fstar == pytest.approx(0.2126087, rel=1e-6)
    fc = family_constants(Box(-1, 1), 0.5, 0.5)
    assert fc.eps == pytest.approx(prob.eps, rel=1e-10) and fc.M == pytest.approx(prob.M, rel=1e-10)
    assert fc.thm6_curvature == pytest.approx(38058, rel=1e-4)
    lb, _ = curvature_lower_bound(prob.T, prob.w)
    assert 400 < lb <= prob.atoms.diameter_sq() / prob.eps


# ---- algorithms ---------------------------------------------------------------------------------------------------

def test_fully_corrective_reaches_fstar_and_weights(i1):
    prob, fstar = i1
    res = corrective_frank_wolfe(prob, 30, variant="full")
    assert abs(res.f[-1] - fstar) <= 1e-6
    np.testing.assert_allclose(res.weights, MOG.optimal_weights(prob.atoms), atol=1e-5)


@pytest.mark.parametrize("kw", [dict(step="fixed"), dict(step="line_search"), dict(step="local"),
                                dict(step="fixed_delta", delta=0.5, lmo=ApproxLMO(0.5))])
def test_gap_certifies_every_step(i1, kw):
    prob, fstar = i1
    res = frank_wolfe(prob, 30, **kw)
    assert np.all(res.f - fstar <= res.gap + 1e-12)
    assert np.all(res.f - fstar >= -1e-12)


def test_fixed_step_closed_form(i1):
    prob, _ = i1
    res = frank_wolfe(prob, 25, step="fixed")
    np.testing.assert_allclose(res.weights, fixed_step_weights(res.atom, prob.K), atol=1e-15)


def test_a_runs_active_atoms_are_those_of_positive_weight(i1):
    """BoostingResult.active: the indices of the atoms the run put weight on (Frank-Wolfe adds one per step, so at most
    T + 1 of the 81 atoms), in increasing order."""
    prob, _ = i1
    res = frank_wolfe(prob, 6, step="fixed")
    assert 1 <= res.active.size <= 7 < res.weights.size
    np.testing.assert_array_equal(res.active, np.flatnonzero(res.weights > 0))
    assert set(res.atom.tolist()) <= set(res.active.tolist())  # 1 - 2/(t+2) > 0 for t >= 1: chosen atoms stay


def test_approx_lmo_satisfies_eq9(i1):
    prob, _ = i1
    a = prob.vertex(10)
    sc, qv = prob.scores(a)
    for d in (1.0, 0.5, 0.1):
        k = ApproxLMO(d)(prob, a, sc, qv)
        assert sc[k] - qv <= d * (sc.min() - qv) + 1e-15
        # the random mode returns an admissible atom too (an atom index, not a position among the admissible ones),
        # and over many draws every admissible atom
        lmo = ApproxLMO(d, mode="random", rng=3)
        admissible = np.flatnonzero(sc - qv <= d * (sc.min() - qv))
        drawn = {lmo(prob, a, sc, qv) for _ in range(40 * admissible.size)}
        assert drawn == set(admissible.tolist()), (d, sorted(drawn), admissible)


def test_stochastic_lmo_is_approximate(i1):
    """Alg 2 with a modest budget returns an atom with delta_t = <grad, s - q>/min_s <grad, s - q> well above 0."""
    prob, _ = i1
    a = prob.vertex(20)
    sc, qv = prob.scores(a)
    lmo = StochasticLMO(n_samples=64, n_steps=40, lr=0.05, rng=3)
    deltas = [(sc[lmo(prob, a)] - qv) / (sc.min() - qv) for _ in range(5)]
    assert min(deltas) > 0.5


def test_cauchy_bracket():
    atoms = AtomSet.grid(Box(-3, 3), 0.1, 0.5)
    tgt = CauchyTarget(0.0, 1.0)
    prob = BoostingProblem(atoms, tgt)
    res = corrective_frank_wolfe(prob, 25, variant="full")
    lower = -tgt.log_prob_box(atoms.box)
    assert res.f[-1] - res.gap[-1] >= lower - 1e-9        # f* >= -log P(A) and f - gap <= f*
    assert res.f[-1] >= lower


# ---- Monte Carlo boosting (Figure 3 machinery) -------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_logistic():
    from refvi.targets import LogisticRegression
    rng = np.random.default_rng(0)
    X = np.hstack([rng.standard_normal((60, 2)), np.ones((60, 1))])
    y = np.where(X @ np.array([1.5, -1.0, 0.3]) + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    return LogisticRegression(X, y)


def test_the_mean_field_start_is_the_targets_mode_or_zero_without_one():
    """mean_field_gaussian starts L-BFGS at the target's mode when it knows one, else at 0; both find the same
    optimum (a Gaussian N(mu, diag(v)), where the optimum on any draws is m = mu when the draws are centred)."""
    from refvi.boosting import mc
    from refvi.targets import CallableTarget

    mu, v = np.array([3.0, -2.0]), np.array([0.5, 2.0])
    U = np.random.default_rng(0).standard_normal((64, 2))
    U -= U.mean(axis=0)
    lp = lambda z: -0.5 * np.sum((z - mu) ** 2 / v, axis=-1)  # noqa: E731
    gr = lambda z: -(z - mu) / v  # noqa: E731
    for mode in (None, mu):
        t = CallableTarget(lp, gr, 2, mode=mode)
        m, s = mc.mean_field_gaussian(t, base_samples=U)
        np.testing.assert_allclose(m, mu, atol=1e-5)


def test_mc_boosting_monotone_and_deterministic(small_logistic):
    from refvi.boosting import mc
    init = mc.mean_field_gaussian(small_logistic, n_samples=32, seed=0)
    kw = dict(init=init, n_samples=32, n_starts=1, lmo_samples=32, lmo_maxiter=30, seed=2)
    for rule in ("line_search", "corrective"):
        r = mc.boost_mc(small_logistic, 3, rule=rule, **kw)
        # the SAA objective of q^t is unchanged by adding a zero-weight atom, and both rules can keep q^t
        assert np.all(np.diff(r.f) <= 1e-12)
        assert r.weights.sum() == pytest.approx(1.0) and np.all(r.weights >= 0)
    a = mc.boost_mc(small_logistic, 2, rule="fixed", **kw)
    b = mc.boost_mc(small_logistic, 2, rule="fixed", **kw)
    assert np.array_equal(a.means, b.means) and np.array_equal(a.f, b.f)
    np.testing.assert_allclose(a.weights, [1 / 3 * 1 / 2, 2 / 3 * 1 / 2, 1 / 2], atol=1e-15)
    # the LMO's own draws are reported, one (lmo_samples, d) block per step; none for zero steps
    assert a.lmo_draws.shape == (2, 32, 3) and np.array_equal(a.lmo_draws, b.lmo_draws)
    assert mc.boost_mc(small_logistic, 0, rule="fixed", **kw).lmo_draws.shape == (0, 32, 3)
    with pytest.raises(ValueError, match="rule"):
        mc.boost_mc(small_logistic, 1, rule="armijo", init=init)
    for bad in (0, -1, 1.5, True):  # no start: the LMO would have no minimizer to return
        with pytest.raises(ValueError, match="n_starts"):
            mc.boost_mc(small_logistic, 1, init=init, n_starts=bad)


def test_mc_metrics_against_direct_formulas():
    from refvi.boosting import mc
    rng = np.random.default_rng(1)
    X, y, D = rng.standard_normal((5, 3)), np.array([1.0, -1, 1, 1, -1]), rng.standard_normal((7, 3))
    sig = 1 / (1 + np.exp(-(X @ D.T)))
    np.testing.assert_allclose(mc.predictive_prob(X, D), sig.mean(1), rtol=1e-14)
    ref = np.mean(np.log(np.where(y[:, None] > 0, sig, 1 - sig).mean(1)))
    assert mc.log_likelihood(X, y, D) == pytest.approx(ref, rel=1e-13)


# ---- test of the tests: 001.thm4 / 001.cor7 / 001.thm8 catch a broken Frank-Wolfe -------------------------------

def _broken_adapter(kind):
    """A seed-001 adapter whose Frank-Wolfe is wrong: ``wrong-step`` runs 2/(t+2) whatever the rule,
    ``wrong-step-lying`` does the same but reports gamma = 2/(delta t + 2) (the replay of the weights catches it),
    ``frozen`` never moves and reports the rule's gamma."""
    import dataclasses
    from types import SimpleNamespace

    from refvi.verification.protocol.refvi_boosting import RefviBoosting

    class Broken(RefviBoosting):
        def frank_wolfe(self, inst, n_iter, step="fixed", **kw):
            rule, delta = step, kw.get("delta") or 1.0
            if kind.startswith("wrong-step"):
                step = "fixed"
            res = super().frank_wolfe(inst, n_iter, step, **kw)
            t = np.arange(res.gamma.size)
            told = 2.0 / (delta * t + 2.0) if rule == "fixed_delta" else 2.0 / (t + 2.0)
            if kind == "wrong-step-lying":
                res = dataclasses.replace(res, gamma=told)
            if kind == "frozen":
                res = dataclasses.replace(res, f=np.full_like(res.f, res.f[0]), gamma=told)
            return res

    return SimpleNamespace(boosting=Broken())


def test_adversarial_lmo_at_the_optimum():
    """At the optimum the gap is 0 (or +1e-17 by rounding): the delta-LMO returns the exact minimizer instead of
    failing on an empty admissible set (regression: 'argmax of an empty sequence' on the tight instance I3)."""
    prob = BoostingProblem(AtomSet.grid(Box(-1, 1), 0.5, 2.0), GaussianMixtureTarget([1.0], [1.0], [2.0]))
    a = prob.vertex(prob.K - 1)                      # the optimum: the target restricted to A is this atom
    sc, qv = prob.scores(a)
    assert np.ptp(sc - qv) < 1e-14                   # grad f is constant at the optimum: gap 0
    # rounding can leave every <grad, s - q> slightly positive: then no atom passed lin <= delta * min lin before
    sc = qv + np.array([4.0, 3.0, 2.0, 1.0, 5.0]) * np.spacing(qv)
    for d in (1.0, 0.5, 0.05):
        assert ApproxLMO(d)(prob, a, sc, qv) == 3


@pytest.mark.parametrize("name,kind", [("thm4", "wrong-step"), ("thm4", "wrong-step-lying"), ("thm4", "frozen"),
                                       ("cor7", "frozen"), ("thm8", "frozen"), ("cor7", "wrong-step"),
                                       ("thm8", "wrong-step")])
def test_boosting_rate_statements_catch_a_broken_frank_wolfe(name, kind):
    from refvi.verification.statement import PROFILES, CheckFailed, Context
    from refvi.verification.statements.boosting_001 import rates_approximate_lmo

    ctx = Context(_broken_adapter(kind), PROFILES["ci"], f"001.{name}")
    with pytest.raises(CheckFailed) as exc:
        getattr(rates_approximate_lmo, name)(ctx)
    if kind == "wrong-step-lying":               # the reported gamma does not take the reported weights one step on
        assert "weights^(t+1) = (1 - gamma_t) weights^t + gamma_t e_(atom t)" in str(exc.value)
    if kind == "frozen":                         # the reported f(q^t) is not f of the reported weights
        assert "f(q^t) = f(weights^t), every t" in str(exc.value)


def test_stochastic_lmo_rejects_unequal_atom_scales():
    """Algorithm 2 moves the mean at one sigma: on an atom set with per-atom scales it used atoms.scales[0] for
    every atom (wrong score-function gradient); now it refuses with a clear error.  A common diagonal scale is fine."""
    means = np.array([[-0.5], [0.0], [0.5]])
    prob = BoostingProblem(AtomSet(Box(-1, 1), means, np.array([0.3, 0.5, 0.3])), MOG)
    a = prob.vertex(0)
    with pytest.raises(ValueError, match="this atom set has 2 different scales"):
        StochasticLMO(n_samples=8, n_steps=2, rng=0)(prob, a)
    ok = BoostingProblem(AtomSet(Box(-1, 1), means, 0.4), MOG)
    k = StochasticLMO(n_samples=8, n_steps=2, rng=0)(ok, ok.vertex(0))
    assert 0 <= k < ok.K


@pytest.mark.parametrize("asked, tty, shown", [(False, True, False), (True, False, False), (True, True, True)])
def test_the_frank_wolfe_progress_bar_only_when_asked_and_on_a_terminal(asked, tty, shown, monkeypatch):
    import importlib
    import sys

    module = importlib.import_module("refvi.boosting.frank_wolfe")  # refvi.boosting.frank_wolfe is the function
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty, raising=False)
    bar = module._progress(3, asked, "boosting")
    assert bar.disable is not shown
    bar.close()


@pytest.mark.parametrize("scale", [0.0, -0.5])
def test_a_mixture_target_with_a_scale_not_above_zero_is_refused(scale):
    from refvi.boosting.targets_1d import GaussianMixtureTarget

    with pytest.raises(ValueError, match="scales must be finite and > 0"):
        GaussianMixtureTarget([0.5, 0.5], [[0.0], [1.0]], [1.0, scale])
