"""--impl end to end: the plain-NumPy example adapter (written only from the papers) passes seed 002, and
the suite catches a plausible bug in an outside implementation (a test of the tests)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from refvi.verification.examples.numpy_adapter import NumpyImplementation
from refvi.verification.running.runner import load_statements, run_statement, select

#: a cheap cross-section of paper 002 (implementation-facing and oracle-only): test_conformance_seeds runs every
#: statement of every paper against the example in-process; here only the command-line path with --impl
CLI_IDS = ("002.thm1", "002.lemma11", "002.claim-exact-energy", "002.claim-gd-own-gradient", "002.thm3")


def test_cli_verifies_the_example_adapter(tmp_path):
    cert_path = tmp_path / "cert.json"
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--select", *CLI_IDS,
                           "--impl", "refvi.verification.examples.numpy_adapter:IMPL", "--json", str(cert_path)],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    cert = json.loads(cert_path.read_text())
    assert cert["implementation"] == "numpy-adapter"
    assert sorted(r["id"] for r in cert["statements"]) == sorted(CLI_IDS)
    facing = [r for r in cert["statements"] if r["scope"] == "implementation"]
    bad = [(r["id"], r["verdict"], r.get("detail", "")[:200]) for r in facing if r["verdict"] != "pass"]
    assert not bad, bad
    assert len(facing) >= 3 and proc.returncode == 0
    assert f"certificate written to {cert_path}" in proc.stdout  # where the certificate went, said once
    # oracle-only checks never count as passes for an outside implementation
    oracle_only = [r for r in cert["statements"] if r["scope"] == "oracle-only"]
    assert oracle_only and all(r["verdict"] == "skip" for r in oracle_only)


class TextbookProx(NumpyImplementation):
    """The prox exactly as printed, (c + sqrt(c^2 + 4 gamma)) / 2: it cancels for c << -sqrt(gamma)."""

    name = "textbook-prox"

    def entropy_prox(self, C, gamma):
        out = np.array(C, dtype=float)
        c = np.diag(out).copy()
        out[np.diag_indices_from(out)] = (c + np.sqrt(c * c + 4 * gamma)) / 2
        return out


@pytest.mark.parametrize("sid", ["000.lemma31", "002.thm7"])
def test_suite_catches_the_cancelling_prox(sid):
    (st,) = select(load_statements().values(), [sid])
    rec = run_statement(st, TextbookProx(), "ci")
    assert rec["verdict"] == "fail", rec


def test_example_adapter_computes_its_constants_from_kind_and_params():
    """The adapter's M, mu come from target.kind / target.params (papers' formulas), equal to the oracle's."""
    from refvi.verification.oracles import hessian_bounds as hb
    from refvi.verification.protocol import targets as specs

    rng = np.random.default_rng(0)
    X, ypm = rng.standard_normal((6, 2)), np.array([1.0, -1, 1, 1, -1, -1])
    cases = [specs.gaussian(np.zeros(2), np.array([[2.0, 0.3], [0.3, 0.5]])),
             specs.linear(X, rng.standard_normal(6), 0.7, 1.3), specs.logistic(X, ypm, 2.0),
             specs.hierarchical_logistic(X, ypm, [0, 1, 2, 0, 1, 2], 3, np.eye(2) * 1.5, np.eye(2) * 0.5),
             specs.cosine(-0.7, [1.0, 2.0], 0.1, 0.9), specs.cosine(0.1, [1.0, 0.0], 0.0, 2.0),
             specs.from_callables(lambda z: 0.0, lambda z: 0 * z, 2, smoothness=3.0, strong_convexity=0.5)]
    impl = NumpyImplementation()
    for spec in cases:
        mu, M = hb.model_constants(spec.model)
        assert impl.smoothness(spec) == pytest.approx(M, rel=1e-12), spec
        assert impl.strong_convexity(spec) == pytest.approx(mu, rel=1e-12, abs=1e-15), spec
    with pytest.raises(ValueError, match="declares no smoothness"):
        impl.smoothness(specs.from_callables(lambda z: 0.0, lambda z: 0 * z, 2))


class EstimatorsOnly(NumpyImplementation):
    """A library with estimators, prox and optimizers but no model constants."""

    name = "no-constants"
    smoothness = None
    strong_convexity = None


def test_bounds_get_real_coverage_without_constants():
    """Bounds take M and mu from the oracle: an implementation without smoothness()/strong_convexity() still passes
    them, and only the constant statements skip, naming the missing method."""
    ids = ["000.thm1", "000.thm2", "000.thm3", "000.thm26", "000.lemma15", "000.lemma16", "000.lemma17",
           "000.lemma18", "002.thm3", "002.cor16", "000.cor22", "000.cor23", "000.cor25", "000.thm21", "000.thm24",
           "002.claim-logistic-constants"]
    recs = {sid: run_statement(st, EstimatorsOnly(), "ci") for sid in ids
            for (st,) in [select(load_statements().values(), [sid])]}
    constant = {"000.cor22", "000.cor23", "000.cor25", "000.thm21", "000.thm24", "002.claim-logistic-constants"}
    for sid, rec in recs.items():
        if sid in constant:
            detail = rec.get("detail", "")
            assert rec["verdict"] == "skip" and ("'smoothness'" in detail or "'strong_convexity'" in detail), rec
        else:
            assert rec["verdict"] == "pass" and rec["scope"] == "implementation", (sid, rec.get("detail"))


@pytest.mark.parametrize("which", ["refvi", "numpy-example"])
def test_every_protocol_default_is_the_adapters_default(which):
    """An optional argument of a protocol method (``n_samples=16`` of ``mc_boost``, ``structure="tril"``, ...) means
    the same to a caller whichever implementation answers: refvi's adapter and the NumPy example, when they implement
    the method, take that argument by the same name with the same default (or take ``**options``)."""
    import inspect

    from refvi.verification.examples.numpy_adapter import IMPL
    from refvi.verification.implementation import REFVI
    from refvi.verification.protocol import boosting, core, ngvi, online

    impl = REFVI if which == "refvi" else IMPL
    empty, checked, wrong = inspect.Parameter.empty, 0, []
    for proto, sub in ((core.Implementation, None), (boosting.BoostingProtocol, "boosting"),
                       (online.OnlineProtocol, "online"), (ngvi.NGVIProtocol, "ngvi")):
        owner = impl if sub is None else getattr(impl, sub)
        for name, spec in vars(proto).items():
            if name.startswith("_") or not inspect.isfunction(spec) or not hasattr(owner, name):
                continue
            got = inspect.signature(getattr(owner, name)).parameters
            options = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in got.values())
            for arg, p in inspect.signature(spec).parameters.items():
                if p.default is empty:
                    continue
                checked += 1
                if arg in got and got[arg].default != p.default or arg not in got and not options:
                    wrong.append(f"{proto.__name__}.{name}({arg}={p.default!r}): "
                                 f"{got[arg].default if arg in got else 'absent'!r}")
    assert not wrong, wrong
    assert checked > 50
