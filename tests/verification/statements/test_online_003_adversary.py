"""The Hypothesis adversary of seed 003 (drawn streams and the adaptive y_t = -sign(<hat theta_t, x_t>)) finds no
sequence breaking the SVA (Thm 2), SVB (Thm 3, proven constant) and OGA-EL (Thm 4) bounds -- and, as a test of the
test, it DOES find one as soon as the implementation is handed a wrong constant (a 20x learning rate) or the bound
is stated with a wrong constant.  Deep search: REFVI_PROFILE=deep (400 draws; the statements 003.thm2/3/4 do the
same through the runner)."""

import math
import os

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from refvi.verification.protocol.refvi_online import RefviOnline
from refvi.verification.statement import PROFILES, CheckFailed, Context
from refvi.verification.statements.online_003 import _common, oga, sva, svb

PROFILE = PROFILES[os.environ.get("REFVI_PROFILE", "ci")]
ON = RefviOnline()


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
    "sva": (_common.sva_instances(), lambda c, i: sva.check_thm2(c, ON, i)),
    "svb": (svb.svb_instances(), lambda c, i: svb.check_thm3(c, ON, i)),
    "ogael": (oga.ogael_instances(), lambda c, i: oga.check_thm4(c, ON, i)),
}

WRONG = {
    "sva-eta-x20": (_common.sva_instances(), lambda c, i: sva.check_thm2(c, ON, i, eta_factor=20.0)),
    "ogael-eta-x20": (oga.ogael_instances(), lambda c, i: oga.check_thm4(c, ON, i, eta_factor=20.0)),
    "sva-penalty-x0.05": (_common.sva_instances(), lambda c, i: sva.check_thm2(c, ON, i, const=0.05)),
    "svb-constant-0.2": (svb.svb_instances(), lambda c, i: svb.check_thm3(c, ON, i, const=0.2)),
    "ogael-penalty-x0.05": (oga.ogael_instances(), lambda c, i: oga.check_thm4(c, ON, i, const=0.05)),
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


@pytest.mark.parametrize("d", [1, 2, 4])
def test_thm3_ball_D_is_searched_over_pairs_not_assumed(d):
    """003.example1: Thm 3's D^2 = sup ||m - m'||^2 + ||sigma||^2 is found by a search over pairs of M x M and equals
    4 Mbar^2 + Sbar^2 in every d; diam(M)^2 (sigma' != 0 allowed) is a different number for d >= 2 (4 Mbar^2 +
    2 Sbar^2), and any other candidate constant is either exceeded by the search or not attained."""
    import numpy as np
    Mb, Sb = 1.5, 0.7
    proof, diam = svb.thm3_pair_search("ball", Mb, Sb, d, np.random.default_rng(d))
    assert proof == pytest.approx(4 * Mb ** 2 + Sb ** 2, rel=1e-12)
    assert diam == pytest.approx(4 * Mb ** 2 + (2 if d >= 2 else 1) * Sb ** 2, rel=1e-12)
    assert svb.thm3_D2("ball", Mb, Sb, d) == pytest.approx(proof, rel=1e-12)
    # the printed D (= 4 Mbar^2 + Sbar^2 taken as D itself) is exceeded on small sets: E003-8's instance
    p, _ = svb.thm3_pair_search("ball", 0.1, 0.1, d, np.random.default_rng(0))
    assert math.sqrt(p) > 4 * 0.1 ** 2 + 0.1 ** 2
    # test of the test: the statement's check fails for a wrong closed form (too small is exceeded, too large
    # is not attained)
    for wrong in (lambda k, M, s, dd: 4 * M * M, lambda k, M, s, dd: 4 * M * M + 2 * s * s):
        ctx = Context(None, PROFILES["ci"], "003.example1")
        orig = svb.thm3_D2
        try:
            svb.thm3_D2 = wrong
            with pytest.raises(CheckFailed):
                svb.example1(ctx)
        finally:
            svb.thm3_D2 = orig
