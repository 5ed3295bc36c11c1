"""The affine frame of refvi.fit: exact mapping (against the vi_objective oracle), the Laplace frame on Gaussians,
defaults on a user's badly conditioned Numba target, the plain algorithm one argument away, bad input."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from _fits import fit_expecting  # tests/_fits.py

import refvi
from refvi.optim.frame import Frame, find_frame, wants_frame
from refvi.targets import CallableTarget, Gaussian, LinearRegression, LogisticRegression, target_for
from refvi.targets.affine import AffineTarget
from refvi.verification.oracles import vi_objective as vo


def _gauss(d=4, cond=1e4, seed=0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    P = (Q * np.geomspace(1.0, cond, d)) @ Q.T
    return Gaussian(rng.standard_normal(d), 0.5 * (P + P.T))


def test_affine_target_transforms_gradient_hessian_and_objective_exactly():
    t = _gauss()
    rng = np.random.default_rng(1)
    L = np.tril(rng.standard_normal((4, 4))) + 3 * np.eye(4)
    z0 = rng.standard_normal(4)
    at = AffineTarget(t, z0, L)
    X = rng.standard_normal((5, 4))
    np.testing.assert_allclose(at.grad_logp(X), t.grad_logp(X @ L.T + z0) @ L, rtol=1e-13)
    np.testing.assert_allclose(at.hess_logp(X[0]), L.T @ t.hess_logp(z0 + L @ X[0]) @ L, rtol=1e-13)
    # f(z0 + L m', L C') = f_x(m', C') - log|det L| with p_x(x) = p(z0 + L x) (no Jacobian): oracle on both sides
    model = {"kind": "gaussian", "mean": t.mean, "precision": t.precision}
    P = L.T @ t.precision @ L
    framed = {"kind": "gaussian", "mean": np.linalg.solve(L, t.mean - z0), "precision": 0.5 * (P + P.T)}
    m, C = rng.standard_normal(4), np.tril(rng.standard_normal((4, 4))) + 2 * np.eye(4)
    assert vo.objective(model, *at.params_to_original(m, C)) == pytest.approx(vo.objective(framed, m, C), rel=1e-10)
    mb, Cb = at.params_to_frame(*at.params_to_original(m, C))
    np.testing.assert_allclose(mb, m, atol=1e-12)
    np.testing.assert_allclose(Cb, C, atol=1e-12)
    assert at.lower


def test_a_framed_target_is_convex_when_its_base_is_or_when_it_is_strongly_convex():
    """-log p(z0 + L x) is convex iff -log p is (L invertible); a declared mu' > 0 makes it convex whatever the base."""
    L, z0 = np.array([[2.0, 0.0], [0.5, 1.0]]), np.array([1.0, -1.0])
    gauss = Gaussian(np.zeros(2), np.eye(2))
    wavy = refvi.targets.CosineQuadratic(3.0, np.ones(2), beta=0.5)  # beta < |alpha| ||b||^2: not convex
    assert gauss.convex and not wavy.convex
    assert AffineTarget(gauss, z0, L).convex and AffineTarget(gauss, z0, L, strong_convexity=0.0).convex
    assert not AffineTarget(wavy, z0, L).convex
    assert AffineTarget(wavy, z0, L, strong_convexity=0.25).convex
    assert AffineTarget(wavy, z0, L, convex=True).convex and not AffineTarget(gauss, z0, L, convex=False).convex


def test_laplace_frame_of_a_gaussian_is_its_mean_and_covariance():
    t = _gauss(cond=1e6)
    f = find_frame(t)
    np.testing.assert_allclose(f.z0, t.mean, atol=1e-6 * np.sqrt(np.diag(t.covariance)).max())
    np.testing.assert_allclose(f.L @ f.L.T, t.covariance, rtol=1e-5, atol=1e-9)
    assert f.M == pytest.approx(1.0, abs=1e-4) and f.mu == pytest.approx(1.0, abs=1e-4)   # condition number 1
    assert f.constants == "estimated" and "not bounded" in f.notes[0]


def _blr_callable(X, y):
    """The issue's example: Bayesian linear regression on (beta, log sigma) written by a user in Numba."""
    N, D = X.shape

    @numba.njit
    def logp(z):
        s = np.exp(z[D])
        r = y - X @ z[:D]
        return (-N * z[D] - 0.5 * np.sum(r * r) / s**2 - 0.5 * np.sum(z[:D] ** 2) / 100.0
                - 0.5 * s**2 / 100.0 + z[D])

    @numba.njit
    def grad(z):
        s2 = np.exp(2 * z[D])
        r = y - X @ z[:D]
        g = np.empty(D + 1)
        g[:D] = X.T @ r / s2 - z[:D] / 100.0
        g[D] = -N + np.sum(r * r) / s2 - s2 / 100.0 + 1.0
        return g

    return CallableTarget(logp, grad, D + 1)


def test_default_fit_of_a_badly_conditioned_user_target_is_accurate():
    from refvi.targets import posteriordb as P

    ref = P.reference("sblrc-blr")
    import json
    d = json.loads((P.models.DATA / "sblrc.json").read_text())
    t = _blr_callable(np.array(d["X"]), np.array(d["y"]))
    with pytest.raises(ValueError, match="smoothness constant M"):
        refvi.fit(t, steps=10, frame=None)                      # the plain paper algorithm needs M
    r = refvi.fit(t, steps=10_000, seed=0)                      # defaults: the Laplace frame
    assert r.frame is not None and r.frame.kind == "laplace"
    assert any("frame" in n for n in r.notes)
    mean, sd = P.pushforward_moments(P.load("sblrc-blr"), r.m, r.C)
    err = np.abs(mean - ref["mean"]) / ref["sd"]
    assert err.max() < 0.1, err                                 # the goal: < 0.1 posterior sd
    assert np.all(np.abs(sd / ref["sd"] - 1) < 0.1)


def test_frame_none_is_the_plain_algorithm_and_auto_frames_every_default_run():
    t = target_for("wine")                                      # M known, M/mu = 210: framed by default all the same
    a = fit_expecting(t, seed=3, steps=300)
    b = fit_expecting(t, seed=3, steps=300, frame=None)
    assert a.frame is not None and b.frame is None
    assert np.all(b.step_sizes <= 1.0 / t.smoothness)           # the plain algorithm's default: 1/M, maybe halved
    assert wants_frame(t, "auto", method="prox-sgd", M=None, step_size=None, steps=300)
    bad = _gauss(cond=1e6)
    assert wants_frame(bad, "auto", method="prox-sgd", M=None, step_size=None, steps=10)
    assert not wants_frame(bad, "auto", method="prox-sgd", M=None, step_size=0.1, steps=10)
    assert not wants_frame(bad, "auto", method="prox-sgd", M=2.0, step_size=None, steps=10)


@pytest.mark.parametrize("method", ["prox-sgd", "proj-sgd"])
def test_fit_in_a_frame_reaches_the_optimum_of_an_ill_conditioned_gaussian(method):
    t = _gauss(cond=1e6, seed=4)
    model = {"kind": "gaussian", "mean": t.mean, "precision": t.precision}
    structure = "tril" if method == "prox-sgd" else "sym"
    fstar = vo.solve(model, structure)[2]
    r = refvi.fit(t, method, steps=4000, seed=2)                # M/mu = 1e6 > 1e4: framed by default
    assert r.frame is not None
    if method == "proj-sgd":
        np.testing.assert_allclose(r.C, r.C.T, atol=1e-12)
    else:
        assert np.all(np.triu(r.C, 1) == 0) and np.all(np.diag(r.C) > 0)
    gap = vo.objective(model, r.m, r.C) - fstar
    assert 0 <= gap < 0.01, gap                                 # exact objective (closed form)
    plain = refvi.fit(t, method, steps=4000, seed=2, frame=None)
    assert vo.objective(model, plain.m, plain.C) - fstar > 10 * gap
    # user-supplied frame (z0, L): the same as the Laplace frame here
    r2 = refvi.fit(t, method, steps=4000, seed=2, frame=(r.frame.z0, r.frame.L))
    assert vo.objective(model, r2.m, r2.C) - fstar < 0.05


def test_frame_runs_are_deterministic_and_map_traces_back():
    t = _gauss(cond=1e5)
    a = refvi.fit(t, steps=500, seed=5, keep_iterates=True)
    b = refvi.fit(t, steps=500, seed=5, keep_iterates=True)
    assert np.array_equal(a.m, b.m) and np.array_equal(a.C, b.C)
    model = {"kind": "gaussian", "mean": t.mean, "precision": t.precision}
    # trace_objective estimates f in the original coordinates: compare its last value with the exact f there
    f_exact = vo.objective(model, a.trace_m[-1], a.trace_C[-1])
    assert a.trace_objective[-1] == pytest.approx(f_exact, abs=0.5)


def test_bad_frames_are_clear_errors():
    t = _gauss()
    with pytest.raises(ValueError, match="frame must be one of"):
        refvi.fit(t, steps=10, frame="newton")
    with pytest.raises(ValueError, match="invertible"):
        refvi.fit(t, steps=10, frame=(np.zeros(4), np.zeros((4, 4))))
    with pytest.raises(ValueError, match="frame z0 must have length 4"):
        refvi.fit(t, steps=10, frame=(np.zeros(3), np.eye(4)))
    with pytest.raises(TypeError, match="frame must be"):
        refvi.fit(t, steps=10, frame=3)
    with pytest.raises(ValueError, match="applies to 'prox-sgd' and 'proj-sgd'"):
        refvi.fit(t, "gd-prox", steps=10, frame="laplace")
    with pytest.raises(TypeError, match="Target"):
        AffineTarget(object(), np.zeros(2), np.eye(2))
    assert isinstance(Frame(np.zeros(2), np.eye(2)).target(Gaussian(np.zeros(2), np.eye(2))), AffineTarget)
    lin = LinearRegression(np.ones((3, 2)), np.ones(3))
    assert refvi.fit(lin, steps=20, frame="diagonal").frame.kind == "diagonal"


def test_a_framed_fit_counts_the_frame_set_up_in_its_seconds():
    """``FitResult.seconds`` is the time before the loop (finding the frame: here every Hessian evaluation sleeps
    0.1 s) plus the loop's: at least the set-up's sleeps, at most the call's wall time."""
    import time

    class SlowHessian(Gaussian):
        calls = 0

        def hess_logp(self, x):
            type(self).calls += 1
            time.sleep(0.1)
            return super().hess_logp(x)

    g = _gauss(cond=1e4)
    t = SlowHessian(g.mean, g.precision)
    t0 = time.perf_counter()
    res = refvi.fit(t, steps=2000, seed=0)
    wall = time.perf_counter() - t0
    assert res.frame is not None and SlowHessian.calls >= 1
    assert 0.1 * SlowHessian.calls <= res.seconds <= wall


def test_a_refined_run_numbers_its_trace_across_both_stages():
    """A target that is not convex within one Laplace sd of its mode runs in two stages (the second in the frame of
    the first's q): the joined trace counts steps from 0 to the total, strictly increasing, and the steps add up."""
    from refvi.targets.cosine import CosineQuadratic

    t = CosineQuadratic(alpha=2.0, b=np.array([1.0, 0.0]), beta=1.0)
    res = fit_expecting(t, steps=400, seed=0)
    assert any(n.startswith("stage 1 of 2 (200 steps)") for n in res.notes)
    steps = res.trace_steps
    assert steps[0] == 0 and steps[-1] == res.steps == 400 and np.all(np.diff(steps) > 0)
    assert len(res.step_sizes) == 400 and len(res.trace_objective) == len(steps)


def test_an_m_given_with_a_frame_sets_the_step_rule_constants():
    """In a given frame, fit's default step rule (Thm 6 here: L^T H L = I) takes the M the caller gives, not the
    frame's: the steps are Thm 6's with M = 4, a = 2(d+3) M^2 (16 times smaller than with the frame's M' = 1)."""
    from refvi.optim import schedules

    t = _gauss(d=3, cond=50.0)
    frame = find_frame(t)
    plain = refvi.fit(t, steps=300, seed=0, frame=(frame.z0, frame.L))
    res = refvi.fit(t, steps=300, seed=0, frame=(frame.z0, frame.L), M=4.0)
    assert res.frame.M == pytest.approx(1.0) and res.frame.mu == pytest.approx(1.0) and res.estimator == "energy"
    a = schedules.noise_constants("energy", 3, 4.0)[0]
    np.testing.assert_array_equal(res.step_sizes, schedules.step_sizes("thm6", 300, M=4.0, mu=res.frame.mu, a=a))
    assert res.step_sizes[0] == pytest.approx(plain.step_sizes[0] / 16.0)


def test_the_laplace_mode_of_a_logistic_regression_is_found_by_damped_newton():
    """The mode search's first method is damped Newton (a few iterations where L-BFGS needs hundreds of
    evaluations); L-BFGS is only its fallback.  From far out (z = 8 per coordinate, where the full Newton step of
    the logistic loss overshoots), Newton must still get there, backtracking, and say so."""
    from refvi.optim.frame import _mode
    from refvi.targets import LogisticRegression

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 3))
    y = np.where(X @ np.array([1.5, -1.0, 0.5]) + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    t = LogisticRegression(X, y, prior_scale=2.0)
    for start in (np.zeros(3), np.full(3, 8.0)):
        z, how = _mode(t, start)
        assert how.startswith("Newton ("), how
        assert np.linalg.norm(t.grad_logp(z)) < 1e-8


def _badly_scaled_logistic():
    """A logistic regression with one predictor 300 times the others' scale."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 3))
    X[:, 2] *= 300.0
    y = np.where(X @ np.array([1.5, -1.0, 0.005]) + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    return LogisticRegression(X, y, prior_scale=2.0)


def _ill_conditioned_gaussian(cond=1e6, d=4, seed=0):
    """A Gaussian whose precision has condition number ``cond``, centred away from 0."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return Gaussian(3.0 * rng.standard_normal(d), Q @ np.diag(np.geomspace(1.0, cond, d)) @ Q.T)


@pytest.mark.parametrize("make", [_badly_scaled_logistic, _ill_conditioned_gaussian])
def test_when_newton_fails_lbfgs_then_newton_find_the_mode_and_say_so(make, monkeypatch):
    """The mode search's fallback, taken when damped Newton gives up from the start: L-BFGS (gradient only), then
    damped Newton again from where L-BFGS stopped.  L-BFGS alone stops at |grad log p| 7.6e-6 on the badly scaled
    logistic regression and 8.6e-4 on the Gaussian of condition number 1e6; after Newton both are below 1e-10."""
    import refvi.optim.frame as F

    t = make()
    real, starts = F._newton_mode, []

    def newton_failing_from_the_start(fun, target, start):
        starts.append(np.array(start))
        return None if len(starts) == 1 else real(fun, target, start)

    monkeypatch.setattr(F, "_newton_mode", newton_failing_from_the_start)
    z, how = F._mode(t, np.zeros(t.dim))
    assert len(starts) == 2 and np.linalg.norm(t.grad_logp(starts[1])) > 1e-7  # where L-BFGS stopped
    assert how.startswith("L-BFGS (") and ", then Newton (" in how, how
    assert np.linalg.norm(t.grad_logp(z)) < 1e-10
    monkeypatch.setattr(F, "_newton_mode", lambda *args: None)  # no Newton at all: L-BFGS's point, said so
    z, how = F._mode(t, np.zeros(t.dim))
    assert np.array_equal(z, starts[1]) and how.startswith("L-BFGS (") and "Newton" not in how, how


def test_damped_newton_tries_the_full_step_first_exact_on_a_gaussian():
    """Damped Newton's first trial is the full Newton step, which is exact on a quadratic: on a Gaussian it takes one
    step from any start (the second iteration finds the decrement at rounding level) and evaluates log p three times:
    at the start, at the step, at the converged check's last step."""
    from refvi.optim.frame import _mode

    class Counted(Gaussian):
        evaluations = 0

        def logp(self, z):
            Counted.evaluations += np.ndim(z) == 1
            return super().logp(z)

    base = _ill_conditioned_gaussian(cond=1e3, d=3, seed=1)
    t = Counted(base.mean, base.precision)
    z, how = _mode(t, np.full(3, 5.0))
    assert how == "Newton (2 iterations)" and Counted.evaluations == 3, (how, Counted.evaluations)
    assert np.linalg.norm(t.grad_logp(z)) < 1e-12


def test_a_frame_on_a_log_concave_target_has_the_full_radius_and_no_narrowing_note():
    """The note that -log p is not convex near the mode (and the run starts narrower) belongs to frames whose probe
    radius had to shrink below one Laplace sd, never to a Gaussian's."""
    frame = find_frame(_gauss(d=3, cond=50.0))
    assert frame.radius == 1.0
    assert not any("not convex" in n for n in frame.notes), frame.notes


def test_the_ridge_start_of_a_logistic_fit_is_timed_with_the_frame():
    """A default fit of a logistic regression starts from the ridge mean (a few Newton steps after the frame search):
    its time is in the frame's seconds, which stay within the call's wall time."""
    import time

    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 3))
    t = LogisticRegression(X, np.where(X @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0))
    t0 = time.perf_counter()
    res = refvi.fit(t, steps=200, seed=0)
    wall = time.perf_counter() - t0
    assert res.frame is not None and any("ridge" in n or "Newton" in n for n in res.frame.notes)
    assert 0.0 < res.frame.seconds <= res.seconds <= wall


def test_a_flat_but_positive_definite_posterior_is_not_taken_for_indefinite():
    """The Hessian's positive-definiteness floor is relative to its largest eigenvalue: a wide posterior (curvatures
    1e-2 and 1e-9, all below 1) is positive definite, whatever the scale of z."""
    t = Gaussian(np.zeros(2), np.diag([1e-2, 1e-9]))
    frame = find_frame(t)
    assert not any("not positive definite" in n for n in frame.notes), frame.notes


def test_the_frame_of_q_probes_narrower_only_where_the_target_is_not_convex():
    """frame_from_q probes at N(0, I) in the frame of q and narrows (0.5, then 0.1) only while mu' <= 0: a logistic
    regression (log-concave) keeps the full radius; a cosine-quadratic that is concave along b near 0 narrows until its
    probes find mu' > 0."""
    from refvi.optim.frame import frame_from_q
    from refvi.targets import CosineQuadratic

    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 2))
    logistic = LogisticRegression(X, np.where(X @ np.array([1.0, -1.0]) > 0, 1.0, -1.0))
    f = frame_from_q(logistic, np.zeros(2), 0.5 * np.eye(2))
    assert f.mu > 0 and "x ~ N(0, 1^2 I)" in f.notes[0], f.notes
    wavy = CosineQuadratic(2.0, np.array([1.0, 0.0]), beta=1.0)  # -log p = 2 cos(z_1) + |z|^2 / 2: concave at 0 along z_1
    f = frame_from_q(wavy, np.array([np.pi, 0.0]), np.eye(2))  # centred on a mode, where it is convex nearby
    assert f.mu > 0 and "x ~ N(0, 1^2 I)" not in f.notes[0], f.notes


def test_a_hessian_that_refuses_its_point_sends_the_mode_search_to_lbfgs():
    """The frame's Newton search treats a ValueError from the target's Hessian as a failed Newton step and falls back
    to L-BFGS (which needs only the gradient), finding the same mode."""
    from refvi.optim.frame import find_frame

    class FarHessian(Gaussian):  # a Hessian only near the mode (where the frame's L is taken)
        def hess_logp(self, z):
            if np.max(np.abs(np.asarray(z) - self.mean)) > 1e-3:
                raise ValueError("the Hessian is not available here")
            return super().hess_logp(z)

    t = FarHessian(np.array([1.0, -2.0]), np.array([[2.0, 0.3], [0.3, 1.0]]))
    f = find_frame(t, "diagonal")
    np.testing.assert_allclose(f.z0, [1.0, -2.0], atol=1e-6)


def test_the_ridge_start_note_counts_the_newton_steps_it_took(monkeypatch):
    """The note's count is the number of Newton steps taken: one linear solve per step, plus the one whose
    decrement says the start is found."""
    from refvi.optim import frame as frame_module

    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 3))
    t = LogisticRegression(X, np.where(X @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0))
    f = find_frame(t)
    solves = []
    real = np.linalg.solve
    monkeypatch.setattr(np.linalg, "solve", lambda *a: solves.append(1) or real(*a))
    frame_module._ridge_start(t, f)
    monkeypatch.setattr(np.linalg, "solve", real)
    assert f"{len(solves) - 1} Newton steps" in f.notes[-1], (len(solves), f.notes[-1])


def test_a_given_frames_constants_are_the_hessian_extremes_at_the_points_its_note_names():
    """frame=(z0, L) estimates M' and mu' as its note says: the largest and smallest eigenvalue of
    L^T (-Hess log p(z0 + L x)) L over x = 0 and 8 points x ~ N(0, I) drawn from the seed (on a logistic regression,
    whose curvature changes from point to point, so other points give other constants)."""
    from refvi.optim.frame import as_frame

    rng = np.random.default_rng(11)
    X = rng.standard_normal((25, 3))
    target = LogisticRegression(X, np.where(X @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0))
    z0, L = np.array([0.3, -0.2, 0.1]), np.array([[2.0, 0.0, 0.0], [0.5, 1.5, 0.0], [-0.3, 0.2, 1.0]])
    f = as_frame((z0, L), target, seed=1)
    points = np.vstack([np.zeros((1, 3)), np.random.default_rng(1).standard_normal((8, 3))])
    eig = np.array([np.linalg.eigvalsh(-L.T @ target.hess_logp(z0 + L @ x) @ L) for x in points])
    assert f.kind == "given" and "8 points x ~ N(0, I)" in f.notes[0]
    assert f.M == pytest.approx(eig[:, -1].max(), rel=1e-12) and f.mu == pytest.approx(eig[:, 0].min(), rel=1e-12)
    assert f.M_l == pytest.approx(eig[0, -1], rel=1e-12) and f.mu_l == pytest.approx(eig[0, 0], rel=1e-12)
    for more in (7, 9):  # one probe fewer or more gives other constants here
        other = np.vstack([np.zeros((1, 3)), np.random.default_rng(1).standard_normal((more, 3))])
        ev = np.array([np.linalg.eigvalsh(-L.T @ target.hess_logp(z0 + L @ x) @ L) for x in other])
        assert (ev[:, -1].max(), ev[:, 0].min()) != pytest.approx((f.M, f.mu), rel=1e-9)


def test_a_given_frame_whose_centre_has_no_finite_hessian_has_no_constants_at_the_centre():
    """The constants at x = 0 (M_l, mu_l: the curvature at the frame's centre) are None when the Hessian there is
    not finite, never those of another probe point; M' and mu' still come from the points where it is finite."""
    from refvi.optim.frame import as_frame

    z0 = np.array([0.5, -1.0])

    def hess(z):
        return np.full((2, 2), np.nan) if np.allclose(z, z0) else -np.diag([2.0, 3.0])

    target = CallableTarget(lambda z: -(z @ z), lambda z: -2.0 * z, 2, hess_logp=hess)
    f = as_frame((z0, np.eye(2)), target, seed=0)
    assert f.M_l is None and f.mu_l is None
    assert f.M == pytest.approx(3.0) and f.mu == pytest.approx(2.0)


def test_a_laplace_frame_at_a_point_of_negative_curvature_floors_it_and_says_so():
    """The mode search ends at a saddle of a cosine-quadratic (-log p = alpha cos(b^T z) + |z|^2 / 2 is concave along b
    at z = 0 for alpha > 1, and z = 0 is a stationary point): the frame floors the negative eigenvalue and a note
    names it; on a Gaussian, whose Hessian is positive definite, no such note."""
    from refvi.targets import CosineQuadratic

    saddle = CosineQuadratic(2.0, np.array([1.0, 0.0]), beta=1.0)
    f = find_frame(saddle, "laplace", start=np.zeros(2))
    assert np.allclose(f.z0, 0.0)
    assert any("is not positive definite (smallest eigenvalue -1); its eigenvalues were floored" in n
               for n in f.notes), f.notes
    assert np.all(np.isfinite(f.L)) and np.all(np.diag(f.L) > 0)
    plain = find_frame(_gauss(d=2, cond=10.0), "laplace")
    assert not any("not positive definite" in n for n in plain.notes), plain.notes
