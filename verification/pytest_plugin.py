"""Run refvi's statements inside another library's pytest suite: one pytest test per statement.

Installed with refvi as the pytest plugin ``refvi`` (entry point ``pytest11``), it does nothing unless asked::

    pytest --refvi-impl mylib.adapter:IMPL --refvi-select '000.*' '002.*' [--refvi-profile deep] [--refvi-strict]

adds one test per selected statement, named ``refvi::<statement id>``, and ends the session with the per-paper
verdict of the certificate (``--refvi-strict``: a paper that is not certified fails the session).  A statement that
skips (a protocol method the implementation lacks, an oracle-only check, nothing within the declared capabilities)
is a pytest *skip* with the reason; ``fail`` and ``error`` are pytest *failures* with the evidence.  ``-k``, ``-x``,
``-n`` and the other pytest options apply as usual.  Without command-line options, put the statements into a test
module::

    from refvi.verification.pytest_plugin import statement_tests

    test_refvi = statement_tests("mylib.adapter:IMPL", select=["000.*", "002.*"])
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import pytest


def leave_out_of_assertion_rewriting(names: Iterable[str] | None = None) -> None:
    """Take the packages ``names`` (every one marked, when None) out of pytest's assertion rewriting.

    pytest rewrites the ``assert`` statements of every module of a distribution that provides a plugin: for refvi,
    every module of the package.  Under ``PYTHONDONTWRITEBYTECODE`` it cannot keep the rewritten code, so every
    pytest process parsed and rewrote each such module it imported again (several seconds per process).  refvi's
    asserts are internal invariants, not test assertions, so this plugin leaves refvi out on loading; the tests'
    own modules are rewritten as usual (pytest finds them by file name, not by this set of package names).  (pytest
    offers no option for this; the hook's set of marked names is private, so this does nothing if it changes:
    ``tests/verification/test_pytest_plugin.py`` notices.)"""
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if not isinstance(marked, set):
            continue
        if names is None:
            marked.clear()
        else:
            marked.difference_update(names)
        cache = getattr(finder, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


leave_out_of_assertion_rewriting(["refvi"])


def pytest_addoption(parser):
    group = parser.getgroup("refvi", "refvi verification statements")
    group.addoption(
        "--refvi-impl",
        metavar="MODULE:OBJECT",
        default=None,
        help="run refvi's verification statements against this implementation (one test per statement)",
    )
    group.addoption(
        "--refvi-select",
        metavar="PATTERN",
        nargs="+",
        action="extend",
        default=None,
        help="statement ids by prefix or glob, e.g. '000.*' '002.thm2' (several, or repeat the option; default: all)",
    )
    group.addoption("--refvi-profile", choices=("ci", "deep"), default="ci", help="statement profile (default ci)")
    group.addoption(
        "--refvi-strict",
        action="store_true",
        default=False,
        help="fail the session unless every paper of the selected statements is certified",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "refvi_statement(id): a refvi verification statement run as a test")


def pytest_report_header(config):
    spec = config.getoption("--refvi-impl", default=None)
    if spec:
        return f"refvi statements: implementation {spec}, profile {config.getoption('--refvi-profile')}"
    return None


class StatementCollector(pytest.Collector):
    """The group of statement tests added by ``--refvi-impl``."""

    def __init__(self, *, impl, patterns, profile, **kw):
        super().__init__(**kw)
        self.impl, self.patterns, self.profile = impl, patterns, profile

    def collect(self):
        from refvi.verification.running import runner

        for st in runner.select(runner.load_statements().values(), self.patterns):
            yield StatementItem.from_parent(self, name=st.id, statement=st)


class StatementItem(pytest.Item):
    """One statement run against the implementation under test."""

    def __init__(self, *, statement, **kw):
        super().__init__(**kw)
        self.statement = statement
        self.add_marker(pytest.mark.refvi_statement(statement.id))

    def runtest(self):
        collector = self.parent
        assert isinstance(collector, StatementCollector)  # StatementCollector.collect makes every StatementItem
        rec = _run(self.statement, collector.impl, collector.profile)
        self.config.stash.setdefault(_RECORDS, {})[rec["id"]] = rec
        _check_record(rec)

    def reportinfo(self):
        return self.path, None, f"refvi statement {self.statement.id}: {self.statement.title}"

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, StatementFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


class StatementFailed(AssertionError):
    """A statement's verdict was ``fail`` or ``error`` for the implementation under test."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    spec = config.getoption("--refvi-impl", default=None)
    if not spec:
        return
    from refvi.verification.protocol.loading import ImplementationSpecError, load_implementation

    try:
        impl = load_implementation(spec)
    except ImplementationSpecError as exc:
        raise pytest.UsageError(str(exc)) from None
    collector = StatementCollector.from_parent(
        session,
        name="refvi",
        nodeid="refvi",
        impl=impl,
        patterns=_patterns(config.getoption("--refvi-select")),
        profile=config.getoption("--refvi-profile"),
    )
    from _pytest.runner import collect_one_node

    report = collect_one_node(collector)  # counted in "collected N items" like any collector's
    config.hook.pytest_collectreport(report=report)
    items.extend(x for x in report.result if isinstance(x, pytest.Item))


_RECORDS = pytest.StashKey[dict]()


def _paper_block(config) -> dict | None:
    """The per-paper coverage of the statements run in this session (None without --refvi-impl)."""
    records = config.stash.get(_RECORDS, None)
    if not records or not config.getoption("--refvi-impl", default=None):
        return None
    from refvi.verification.certificate import coverage
    from refvi.verification.protocol.loading import load_implementation
    from refvi.verification.running import runner

    impl = load_implementation(config.getoption("--refvi-impl"))
    registry = runner.load_statements()
    chosen = runner.select(registry.values(), _patterns(config.getoption("--refvi-select")))
    not_run = [st.id for st in chosen if st.id not in records]
    return coverage.papers(list(records.values()), registry, config.getoption("--refvi-profile"), impl, not_run)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """--refvi-strict: a selected paper that is not certified fails the session."""
    from refvi.verification.certificate import coverage

    if session.config.getoption("--refvi-strict", default=False) and exitstatus == 0:
        block = _paper_block(session.config)
        if block is not None and coverage.not_certified(block):
            session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The per-paper verdict of the statements run in this session (--refvi-impl)."""
    from refvi.verification.certificate import coverage

    block = _paper_block(config)
    if block is None:
        return
    terminalreporter.section("refvi certificate")
    terminalreporter.write_line(coverage.format_block(block))
    missing = coverage.not_certified(block)
    if config.getoption("--refvi-strict") and missing:
        terminalreporter.write_line(f"--refvi-strict: not certified: {', '.join(missing)} (the session fails)")


def statement_tests(impl, select: Iterable[str] | None = None, profile: str = "ci"):
    """A pytest test function parametrized over the selected statements, for ``test_x = statement_tests(...)``.

    ``impl`` is an implementation object or a ``module:object`` string (loaded when the tests run)."""
    from refvi.verification.running import runner

    chosen = runner.select(runner.load_statements().values(), _patterns(select))

    @pytest.mark.parametrize("statement", chosen, ids=[s.id for s in chosen])
    def test_statement(statement):
        from refvi.verification.protocol.loading import load_implementation

        obj = load_implementation(impl) if isinstance(impl, str) else impl
        _check_record(_run(statement, obj, profile))

    return test_statement


def _patterns(raw) -> list[str] | None:
    if not raw:
        return None
    if isinstance(raw, str):
        raw = [raw]
    out = [p for item in raw for p in item.replace(",", " ").split()]
    return out or None


def _run(statement, impl, profile) -> dict:
    from refvi.verification.running import runner

    return runner.run_statement(statement, impl, profile)


def _check_record(rec: dict) -> None:
    if rec["verdict"] == "skip":
        pytest.skip(rec.get("detail", "skipped"))
    if rec["verdict"] in ("fail", "error"):
        raise StatementFailed(
            f"{rec['id']} {rec['verdict']}: {rec.get('detail', '')}\n"
            f"  ({rec['source']}; methods called: {', '.join(rec['methods']) or 'none'})"
        )
    assert rec["verdict"] == "pass" and rec["examples"] > 0, rec
