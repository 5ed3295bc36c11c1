"""Every convention a statement relies on is written down where an outside maintainer reads: on the docstring of
each protocol method it belongs to and on its paper's protocol page (refvi.verification.protocol.conventions); the
conventions of a statement are those of the methods it uses, listed by ``--list``."""

import inspect
import pathlib

import pytest

from refvi.verification.protocol import boosting, core, ngvi, online
from refvi.verification.protocol.conventions import CONVENTIONS, normalize, of_statement
from refvi.verification.running import runner

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
CLASSES = {"": core.Implementation, "online": online.OnlineProtocol, "ngvi": ngvi.NGVIProtocol,
           "boosting": boosting.BoostingProtocol}


@pytest.mark.parametrize("conv", CONVENTIONS, ids=[c.name for c in CONVENTIONS])
def test_each_convention_is_on_its_methods_docstrings_and_its_page(conv):
    page = normalize((DOCS / conv.page).read_text(encoding="utf-8"))
    assert normalize(conv.phrase) in page, f"docs/{conv.page} does not state: {conv.phrase}"
    for method in conv.methods:
        sub, _, name = method.rpartition(".")
        fn = getattr(CLASSES[sub], name, None)
        assert fn is not None, f"{method} is not a protocol method"
        doc = normalize(inspect.getdoc(fn) or "")
        assert normalize(conv.phrase) in doc, f"the docstring of {method} does not state: {conv.phrase}"


def test_each_convention_is_relied_on_by_a_statement():
    statements = runner.load_statements().values()
    unused = [c.name for c in CONVENTIONS if not any(c in of_statement(st) for st in statements)]
    assert not unused, f"conventions no statement relies on (stale?): {unused}"


def test_the_conventions_of_a_statement():
    """What the outside maintainer found only by failing, now listed per statement."""
    st = runner.load_statements()
    names = lambda sid: {c.name for c in of_statement(st[sid])}
    assert "run_nn start clipped into the box" in names("003.claim-nn-replay")
    assert "EWA on an empty stream" in names("003.thm1")
    assert {"NGD runs start from natural parameters", "mini-batches of row indices"} <= names("004.thm1")
    assert {"SGD baseline starts from (m, C)", "SGD baseline estimator names", "NGD estimator names"} <= names(
        "004.claim-sgd-baseline-replay") | names("004.claim-glm-ngd-replay")
    assert names("002.lemma11") == set()                                  # oracle-only: no method, no convention


def test_list_prints_the_conventions(capfd):
    from refvi.verification.__main__ import main

    assert main(["--list", "--select", "003.claim-nn-replay"]) == 0
    assert "convention (run_nn start clipped into the box; docs/protocol-online.md)" in capfd.readouterr().out
