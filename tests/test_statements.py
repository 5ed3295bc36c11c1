"""Every registered verification statement, run under pytest against refvi (profile from $REFVI_PROFILE, default ci).

A statement that names an erratum passes only if the corrected form holds and the printed form is shown to fail
(see refvi.verification.runner.run_statement).
"""

import os

import pytest

from refvi.verification.implementation import REFVI
from refvi.verification.runner import load_statements, run_statement, select

PROFILE = os.environ.get("REFVI_PROFILE", "ci")
STATEMENTS = select(load_statements().values(), None)


@pytest.mark.parametrize("st", STATEMENTS, ids=[s.id for s in STATEMENTS])
def test_statement(st):
    rec = run_statement(st, REFVI, PROFILE)
    if rec["verdict"] == "skip":
        pytest.skip(rec.get("detail", "skipped"))
    assert rec["verdict"] == "pass", rec.get("detail")
    assert rec["examples"] > 0, "a statement must check at least one instance"
