"""The README: its generated blocks are current and it stays a front page (its code blocks run in
tests/test_docs_code.py, with every page of docs/)."""

import pathlib

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_generated_blocks_are_current():
    """The papers block of the README, the strength table of docs/fidelity.md, the zoo count of
    docs/verification-power.md."""
    from refvi.verification.certificate import summary

    stale = summary.stale(README.parent)  # this checkout's files (CI imports refvi from its installed copy)
    assert not stale, f"stale generated blocks {stale}: python -m refvi.verification.certificate.summary --update"


def test_readme_is_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 220
    for link in ("docs/conformance.md", "docs/compatibility.md", "CONTRIBUTING.md", "ARCHITECTURE.md"):
        assert f"({link})" in text
