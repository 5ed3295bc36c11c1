"""The pytest plugin: an outside project runs refvi's statements inside its own test suite (one test per statement;
skips are skips, fails are failures), from the command line or from a test module."""

import subprocess
import sys
import textwrap

from _env import env_with  # tests/_env.py

ADAPTER = textwrap.dedent("""
    from refvi.verification.protocol import REFVI

    class EnergyOnly:
        name = "energy-only"

        def energy(self, target, m, C, U, structure="tril"):
            return REFVI.energy(target, m, C, U, structure)

    class Biased(EnergyOnly):
        def energy(self, target, m, C, U, structure="tril"):
            gm, gC = REFVI.energy(target, m, C, U, structure)
            return 1.01 * gm, gC                      # a wrong factor in the mean gradient

    IMPL, BIASED = EnergyOnly(), Biased()
""")


def _project(tmp_path, extra_test=""):
    (tmp_path / "outside_adapter.py").write_text(ADAPTER)
    (tmp_path / "test_own.py").write_text("def test_own():\n    assert True\n" + extra_test)
    return tmp_path


def _pytest(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=env_with(tmp_path))


def test_command_line_options_add_one_test_per_statement(tmp_path):
    proj = _project(tmp_path)
    proc = _pytest(proj, "--refvi-impl", "outside_adapter:IMPL", "--refvi-select", "002.thm1",
                   "--refvi-select", "002.lemma11,002.thm7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" not in proc.stdout and "2 passed" in proc.stdout     # test_own and 002.thm1
    assert "oracle-only" in proc.stdout                                     # 002.lemma11 is a skip for outsiders
    assert "method 'entropy_prox'" in proc.stdout                           # 002.thm7 names what is missing


def test_a_wrong_implementation_fails_the_outside_suite(tmp_path):
    proj = _project(tmp_path)
    proc = _pytest(proj, "--refvi-impl", "outside_adapter:BIASED", "--refvi-select", "002.thm1", "-v")
    assert proc.returncode == 1
    assert "refvi::002.thm1 FAILED" in proc.stdout and "methods called: energy" in proc.stdout
    assert "refvi certificate" in proc.stdout and "002 FAILED" in proc.stdout   # the per-paper verdict too


def test_bad_impl_is_a_usage_error(tmp_path):
    proc = _pytest(_project(tmp_path), "--refvi-impl", "no_such_module_xyz:IMPL")
    assert proc.returncode == 4 and "no module named 'no_such_module_xyz'" in proc.stderr


def test_without_options_nothing_is_added(tmp_path):
    proc = _pytest(_project(tmp_path))
    assert proc.returncode == 0 and "1 passed" in proc.stdout


def test_statement_tests_from_a_test_module(tmp_path):
    proj = _project(tmp_path, extra_test=textwrap.dedent("""
        from refvi.verification.pytest_plugin import statement_tests

        test_refvi = statement_tests("outside_adapter:IMPL", select=["002.thm1", "002.lemma12"])
    """))
    proc = _pytest(proj, "-v")
    assert proc.returncode == 0, proc.stdout
    assert "test_refvi[002.thm1] PASSED" in proc.stdout and "test_refvi[002.lemma12] PASSED" in proc.stdout


def test_the_plugin_loads_nothing_heavy_and_leaves_refvi_out_of_assertion_rewriting(tmp_path):
    """Installing refvi adds its plugin to every pytest run in the environment: loading it must not import Numba or
    refvi's fit, and refvi's modules load as Python compiled them, not through pytest's assertion rewriting (which,
    under PYTHONDONTWRITEBYTECODE, parses every module again in every pytest process).  A test's own module is still
    rewritten."""
    (tmp_path / "test_probe.py").write_text(textwrap.dedent("""
        import sys
        HEAVY_AT_COLLECTION = sorted(m for m in ("numba", "scipy", "refvi.optim.fit") if m in sys.modules)

        def test_probe():
            import refvi.optim.fit  # noqa: F401  (refvi.optim.fit is also the name of the function)
            from _pytest.assertion.rewrite import AssertionRewritingHook
            assert HEAVY_AT_COLLECTION == []
            assert "refvi.verification.pytest_plugin" in sys.modules
            assert not isinstance(sys.modules["refvi.optim.fit"].__loader__, AssertionRewritingHook)
            assert isinstance(__loader__, AssertionRewritingHook)
    """))
    proc = _pytest(tmp_path, "-q", "test_probe.py")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_the_plugin_unmarks_refvi_and_nothing_else(monkeypatch):
    """What the plugin does to pytest's rewriting hook (an editable install lists no refvi module for pytest to mark,
    so the subprocess test above shows the effect only on an installed copy, as in CI)."""
    from refvi.verification import pytest_plugin

    class Hook:
        _must_rewrite = {"refvi", "hypothesis"}
        _marked_for_rewrite_cache = {"refvi.optim.fit": True}

    hook = Hook()
    # a finder without pytest's set before it (an editable install's, a vendored importer's) is passed over
    monkeypatch.setattr(sys, "meta_path", [object(), hook, *sys.meta_path])
    pytest_plugin.leave_out_of_assertion_rewriting(["refvi"])
    assert hook._must_rewrite == {"hypothesis"} and hook._marked_for_rewrite_cache == {}
    hook._marked_for_rewrite_cache = {"hypothesis.core": True}
    pytest_plugin.leave_out_of_assertion_rewriting()  # every name (tests/conftest.py)
    assert hook._must_rewrite == set() and hook._marked_for_rewrite_cache == {}


def test_refvi_strict_fails_a_passing_session_whose_paper_is_not_certified(tmp_path):
    """002.thm7 is skipped for an implementation without entropy_prox, so every test passes but paper 002 is not
    certified: the session passes, and fails (saying why) with --refvi-strict."""
    proj = _project(tmp_path)
    args = ("--refvi-impl", "outside_adapter:IMPL", "--refvi-select", "002.thm1,002.thm7")
    lax, strict = _pytest(proj, *args), _pytest(proj, *args, "--refvi-strict")
    assert lax.returncode == 0 and "--refvi-strict" not in lax.stdout, lax.stdout
    assert strict.returncode == 1, strict.stdout
    assert "--refvi-strict: not certified: 002" in strict.stdout and "(the session fails)" in strict.stdout
    # without --refvi-impl no statement runs and no paper is judged: --refvi-strict leaves the session alone
    own = _pytest(proj, "--refvi-strict")
    assert own.returncode == 0 and "--refvi-strict" not in own.stdout, own.stdout


def test_select_patterns_split_on_commas_and_spaces_and_none_selects_everything():
    from refvi.verification.pytest_plugin import _patterns

    assert _patterns("000.*, 002.lemma15") == ["000.*", "002.lemma15"]
    assert _patterns(["000.lemma31 004.*", "003.*"]) == ["000.lemma31", "004.*", "003.*"]
    for nothing in (None, "", [], " , "):
        assert _patterns(nothing) is None
