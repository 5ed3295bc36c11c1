"""Every registered verification statement, run under pytest against refvi (profile from $REFVI_PROFILE, default ci).

A statement that names an erratum passes only if the corrected form holds and the printed form is shown to fail
(see refvi.verification.running.runner.run_statement); the protocol methods it was called with are exactly those it declares.
It takes no value the implementation reported on trust: every reported value that reaches a bound was compared with
an oracle or recomputed (refvi.verification.statement.provenance).  Every bound of it (named by its label,
refvi.verification.statement.check_name) comes within 10x of its right side on some instance (tightness >= 0.1), or
the statement's catalogue row says why it cannot (``loose``); every statistical check resolves a violation of 25% at
80% power.
"""

import os

import pytest

from refvi.verification.implementation import REFVI
from refvi.verification.running.runner import load_statements, run_statement, select

PROFILE = os.environ.get("REFVI_PROFILE", "ci")
MIN_TIGHTNESS = 0.1      # lhs / rhs of every bound on its tightest instance
MAX_RESOLUTION = 0.25    # smallest relative violation detected with probability >= 80%
STATEMENTS = select(load_statements().values(), None)


@pytest.mark.parametrize("st", STATEMENTS, ids=[s.id for s in STATEMENTS])
def test_statement(st):
    rec = run_statement(st, REFVI, PROFILE)
    if rec["verdict"] == "skip":
        pytest.skip(rec.get("detail", "skipped"))
    assert rec["verdict"] == "pass", rec.get("detail")
    assert rec["examples"] > 0, "a statement must check at least one instance"
    # the methods a statement declares (its catalogue row's `uses`) are exactly those refvi was called with, and it is
    # oracle-only exactly when its row says so (what an outside implementation's certificate trusts)
    assert rec["methods"] == list(st.uses), f"declares {list(st.uses)}, called {rec['methods']}"
    assert (rec["scope"] == "oracle-only") == st.oracle_only, rec["scope"]
    trusted = [f"{t['method']}.{t['field']} in {t['label']!r} (x{t['uses']})" for t in rec["trusted"]]
    assert not trusted, "takes reported values on trust (check them first): " + "; ".join(trusted[:8])
    loose = dict(st.loose)
    weak = {name: c["tightness"] for name, c in rec["checks"].items()
            if name not in loose and (c["tightness"] is None or c["tightness"] < MIN_TIGHTNESS)}
    assert not weak, f"bounds never within 10x on any instance, without a `loose` reason in the catalogue: {weak}"
    stale = sorted(set(loose) - {n for n, c in rec["checks"].items()
                                 if c["tightness"] is None or c["tightness"] < MIN_TIGHTNESS})
    assert not stale, f"`loose` names checks that do not exist or come within 10x: {stale}"
    p = rec["power"]
    assert p is None or p["resolution"] <= MAX_RESOLUTION, f"underpowered statistical check: {p}"
    if st.kind == "statistical":
        assert p is not None, "a statistical statement must make at least one statistical check"
