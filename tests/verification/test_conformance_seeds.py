"""The plain-NumPy example adapter (written from the papers, importing nothing of refvi) passes every
implementation-facing statement of each paper it covers; oracle-only statements are skips for it."""

import pytest

from refvi.verification import runner
from refvi.verification.examples.numpy_adapter import IMPL


@pytest.mark.parametrize("seed", ["000", "001", "002", "003", "004"])
def test_numpy_adapter_passes_every_implementation_facing_statement(seed):
    cert = runner.run([f"{seed}.*"], "ci", IMPL)
    in_profile = [r for r in cert["statements"] if not r.get("detail", "").startswith("runs only in profiles")]
    bad = [(r["id"], r["verdict"], r.get("detail", "")[:300]) for r in in_profile
           if r["scope"] == "implementation" and r["verdict"] != "pass"]
    assert not bad, bad
    assert all(r["verdict"] == "skip" for r in cert["statements"] if r["scope"] == "oracle-only")
    assert runner.implementation_passes(cert) >= 10
