"""The Hypothesis adversary of seed 003 (drawn streams and the adaptive y_t = -sign(<hat theta_t, x_t>)) finds no
sequence breaking the SVA (Thm 2), SVB (Thm 3, proven constant) and OGA-EL (Thm 4) bounds -- and, as a test of the
test, it DOES find one as soon as the implementation is handed a wrong constant (a 20x learning rate) or the bound
is stated with a wrong constant.  Deep search: REFVI_PROFILE=deep (400 draws; the statements 003.thm2/3/4 do the
same through the runner)."""

import os

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from refvi.verification.statement import PROFILES, CheckFailed, Context
from refvi.verification.statements import seed003 as S

PROFILE = PROFILES[os.environ.get("REFVI_PROFILE", "ci")]
ON = S.ONLINE


def _search(strategy, check, n):
    """Run the adversary: raises CheckFailed at the first violating stream (no shrinking, to keep it fast)."""
    ctx = Context(None, PROFILE, "adversary")

    @settings(max_examples=n, derandomize=True, database=None, deadline=None, print_blob=False,
              suppress_health_check=list(HealthCheck), phases=(Phase.explicit, Phase.generate))
    @given(strategy)
    def run(inst):
        check(ctx, inst)

    run()
    return ctx


CORRECT = {
    "sva": (S.sva_instances(), lambda c, i: S.check_thm2(c, ON, i)),
    "svb": (S.svb_instances(), lambda c, i: S.check_thm3(c, ON, i)),
    "ogael": (S.ogael_instances(), lambda c, i: S.check_thm4(c, ON, i)),
}

WRONG = {
    "sva-eta-x20": (S.sva_instances(), lambda c, i: S.check_thm2(c, ON, i, eta_factor=20.0)),
    "ogael-eta-x20": (S.ogael_instances(), lambda c, i: S.check_thm4(c, ON, i, eta_factor=20.0)),
    "sva-penalty-x0.05": (S.sva_instances(), lambda c, i: S.check_thm2(c, ON, i, const=0.05)),
    "svb-constant-0.2": (S.svb_instances(), lambda c, i: S.check_thm3(c, ON, i, const=0.2)),
    "ogael-penalty-x0.05": (S.ogael_instances(), lambda c, i: S.check_thm4(c, ON, i, const=0.05)),
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_adversary_finds_no_violation(name):
    strategy, check = CORRECT[name]
    ctx = _search(strategy, check, PROFILE.max_examples)
    assert ctx.evidence and all(e.passed for e in ctx.evidence)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_adversary_catches_a_wrong_constant(name):
    strategy, check = WRONG[name]
    with pytest.raises(CheckFailed):
        _search(strategy, check, 300)
