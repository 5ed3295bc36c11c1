"""Every fit run says how it ended: a non-finite result is an error, a run that ends worse than it started warns,
notes it and flags the result (whatever the step: default, explicit, or gradient descent); the CLI exits non-zero
for both.  A target whose functions are non-finite at the start is reported as itself, not as a step size."""

import numpy as np
import pytest

from refvi.cli import main as cli
from refvi.optim.fastpath import DivergenceError
from refvi.optim.fit import ConvergenceWarning, fit
from refvi.targets import Gaussian
from refvi.targets.custom import CallableTarget
from refvi.targets.datasets import target_for


@pytest.fixture(scope="module")
def wine():
    return target_for("wine")


def test_explicit_step_far_too_large_is_an_error(wine):
    with pytest.raises(DivergenceError, match="not finite.*step size 100 too large"):
        fit(wine, steps=100, step_size=100.0)


def test_explicit_step_that_climbs_warns_notes_and_flags(wine):
    with pytest.warns(ConvergenceWarning) as caught:
        res = fit(wine, steps=100, step_size=0.05)
    assert any("ended worse than it started" in str(w.message) for w in caught)
    assert any("did not pass its diagnostics" in str(w.message) for w in caught)   # and it did not converge
    # each warning points at the line that called fit, not inside refvi
    assert {w.filename for w in caught} == {__file__}, [(w.filename, w.lineno) for w in caught]
    assert res.ended_worse and not res.diagnostics.converged
    assert any("ended worse than it started" in n for n in res.notes)
    assert "ended worse than it started" in res.summary()


def test_gradient_descent_that_climbs_is_flagged(wine):
    with pytest.warns(ConvergenceWarning) as caught:
        res = fit(wine, "gd-prox", steps=100, step_size=1.0)
    assert any("ended worse than it started" in str(w.message) for w in caught)
    assert res.ended_worse


def test_a_converging_run_is_not_flagged(wine):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = fit(wine, steps=4000)
    assert not res.ended_worse
    # the default run starts near the optimum (the ridge start in the Laplace frame), so its first objective is not the
    # mark to beat: the result must be near the exact optimum (exact.solve, projected gradient < 1e-10)
    from refvi.optim import exact
    mr, Cr, fstar = exact.solve(wine)
    assert exact.objective(wine, res.m, res.C) - fstar < 0.1
    assert np.max(np.abs(res.m - mr) / np.sqrt(np.diag(Cr @ Cr.T))) < 0.1
    assert res.diagnostics.converged and res.diagnostics.pareto_k < 0.5


def test_cli_exit_codes(wine, capsys):
    assert cli(["fit", "wine", "--step-size", "100", "--steps", "100", "--no-progress"]) == 2
    assert "diverged" in capsys.readouterr().err
    assert cli(["fit", "wine", "--step-size", "0.05", "--steps", "100", "--no-progress"]) == 1
    assert "ended worse than it started" in capsys.readouterr().err
    assert cli(["fit", "wine", "--steps", "200", "--no-progress"]) == 1          # too short: not converged
    assert "did not pass its diagnostics" in capsys.readouterr().err
    assert cli(["fit", "wine", "--steps", "4000", "--no-progress"]) == 0


def test_nan_gradient_is_reported_as_itself():
    t = CallableTarget(lambda z: -0.5 * float(z @ z), lambda z: np.full_like(z, np.nan), 2, smoothness=1.0)
    for frame in (None, "auto"):
        with pytest.raises(ValueError, match="grad_logp returned a non-finite value.*not of the step size"):
            fit(t, steps=20, frame=frame)


def test_refvi_verify_passes_every_option_through(capsys):
    assert cli(["verify", "--list", "--select", "001.thm4"]) == 0
    out = capsys.readouterr().out
    assert "001.thm4" in out and "002." not in out


def test_ctrl_c_stops_the_loop_and_the_cli_says_so_in_one_line(wine, capsys, monkeypatch):
    """The compiled loop runs in pieces of ~0.2 s, so a KeyboardInterrupt arrives between two pieces; fit lets it
    through (BLAS threads restored by the threadpoolctl context), the CLI prints one line and exits 130."""
    from threadpoolctl import threadpool_info

    from refvi.optim import fastpath

    before = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]
    real, calls = fastpath.run, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(fastpath, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fit(wine, steps=100_000, progress=False)
    assert len(calls) == 3
    assert [(i["internal_api"], i["num_threads"]) for i in threadpool_info()] == before
    calls.clear()
    assert cli(["fit", "wine", "--steps", "100000", "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["refvi fit: interrupted (Ctrl-C); no result"]


def test_an_interrupt_swallowed_during_compilation_still_stops_the_run(wine, monkeypatch):
    """llvmlite drops a KeyboardInterrupt raised inside its ctypes callbacks (while Numba compiles); fit's handler also
    sets a flag, which the loop checks between pieces."""
    import importlib
    import signal

    from refvi.optim import fastpath

    fitmod = importlib.import_module("refvi.optim.fit")  # the module (refvi.optim.fit is also the function's name)

    real, calls = fastpath.run, []

    def swallowed(*args):
        calls.append(1)
        if len(calls) == 2:
            try:
                fitmod._on_sigint(signal.SIGINT, None)
            except KeyboardInterrupt:  # what the ctypes callback does with it
                pass
        return real(*args)

    monkeypatch.setattr(fastpath, "run", swallowed)
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        fit(wine, steps=100_000, progress=False)
    assert len(calls) == 2 and not fitmod._INTERRUPTED[0] and signal.getsignal(signal.SIGINT) is handler
    monkeypatch.setattr(fastpath, "run", real)
    fit(wine, steps=4000, progress=False)                # the next fit is not interrupted by a stale flag


def test_a_gradient_descent_fit_that_climbs_is_judged_by_its_last_objective():
    """gd-prox with a step above 1/M on a Gaussian (M = 4, step 0.55: the mean's error grows by 1.2 a step) dips, then
    climbs: the run is judged by the exact objective at the returned iterate, the last of its trace (8.82 against
    6.14 at w^0: ended worse), not by an earlier one (7.02 one step before would not be)."""
    t = Gaussian(np.array([1.0, 1.0]), np.diag([1.0, 4.0]))
    with pytest.warns(ConvergenceWarning, match="ended worse than it started: objective estimate 8.81587 at the"):
        res = fit(t, method="gd-prox", steps=3, step_size=0.55, diagnose=0)
    assert res.ended_worse and res.trace_objective[1] < res.trace_objective[0] < res.trace_objective[-1]
    assert f"{res.trace_objective[-1]:.6g}" == "8.81587" and f"{res.trace_objective[2]:.6g}" == "7.01903"
