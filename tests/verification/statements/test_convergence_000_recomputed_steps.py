"""000.thm10 and 000.thm6 recompute the iterates they bound (docs/fidelity.md, "000.thm6 and 000.thm10"): a Proj-SGD
that caps its steps at 1 and a Prox-SGD that halves its step after a gradient spike (from step 5 on) pass the
T = 3 replays of 000.def8 / 000.def5, and are caught by the one-step node check at gamma in [1.5, 6] (000.thm10) and
by the replay of its runs (000.thm6 replays every run, convergence_000._rates.runs)."""

import importlib

import pytest

from refvi.verification.examples.bug_zoo import ZOO, load_zoo
from refvi.verification.running import runner

S = importlib.import_module("refvi.verification.statement")


@pytest.mark.parametrize(
    ("mutant", "replay", "catcher", "label"),
    [
        ("proj-sgd-step-capped-at-1", "000.def8", "000.thm10", "pathwise: w+ = proj_{W_M}(w - gamma g)"),
        ("prox-sgd-halve-after-spike", "000.def5", "000.thm6", "== the reference Prox-SGD (Def. 5) loop"),
    ],
)
def test_slip_invisible_to_the_short_replay_is_caught_by_the_recomputed_iterates(mutant, replay, catcher, label):
    runner.load_statements()
    load_zoo()
    impl = ZOO[mutant].build()
    assert runner.run_statement(S.REGISTRY[replay], impl)["verdict"] == "pass"
    rec = runner.run_statement(S.REGISTRY[catcher], impl)
    assert rec["verdict"] == "fail", rec["verdict"]
    assert label in str(rec["detail"]), rec["detail"]
