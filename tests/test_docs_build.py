"""The documentation site builds in strict mode (warnings are errors, every reference resolves), shows the API
reference of ``refvi.fit`` and every statement of the catalogues, and its link rules hold: a broken relative link
fails the build, a link to a top-level file written as on GitHub (``../ARCHITECTURE.md``) does not.

The full build takes about 40 s on a busy 2-core machine (autodoc imports the modules; no kernel is compiled).
"""

from __future__ import annotations

import importlib
import pathlib
import pkgutil
import re
import subprocess
import sys
import textwrap
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
STRICT = ["-W", "--keep-going", "-n", "-q"]
#: the packages whose public modules the API reference must document (docs/api/<package>.rst)
API_PACKAGES = ["refvi.targets", "refvi.optim", "refvi.families", "refvi.boosting", "refvi.online", "refvi.ngvi",
                "refvi.kernels", "refvi.verification.protocol"]
API_MODULES = ["refvi", "refvi.estimators", "refvi.prox", "refvi.verification.running.runner"]


def sphinx_build(source: pathlib.Path, out: pathlib.Path) -> subprocess.CompletedProcess:
    """``python -m sphinx`` in strict mode, from the repository root (so this checkout's refvi is documented).
    Sphinx, MyST and furo are in the ``test`` extra: a missing one fails here, it is never skipped."""
    cmd = [sys.executable, "-m", "sphinx", *STRICT, "-d", str(out / ".doctrees"), str(source), str(out)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("html")
    proc = sphinx_build(DOCS, out)
    assert proc.returncode == 0, f"strict docs build failed:\n{proc.stderr[-6000:]}"
    assert not proc.stderr.strip(), f"the build printed warnings:\n{proc.stderr[-6000:]}"
    return out


def test_api_page_of_fit(site):
    html = (site / "api" / "refvi.html").read_text(encoding="utf-8")
    assert 'id="refvi.fit"' in html, "refvi.fit has no entry on the API page of refvi"
    entry = html[html.index('id="refvi.fit"'):]
    assert "Fit N(m, C C^T) to" in entry[:20000], "refvi.fit's docstring is not rendered"
    for name in ("FitResult", "FitConfig", "FitTrace", "DivergenceError", "ConvergenceWarning"):
        assert f'id="refvi.{name}"' in html, name


def test_every_guide_is_a_page(site):
    for guide in DOCS.glob("*.md"):
        assert (site / f"{guide.stem}.html").is_file(), f"docs/{guide.name} is not on the site"


def test_catalogue_lists_every_statement_and_erratum(site):
    html = (site / "catalogue" / "index.html").read_text(encoding="utf-8")
    n_statements = n_errata = 0
    for path in sorted((ROOT / "verification" / "statements").glob("*/catalog.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for ident, row in data.get("statement", {}).items():
            n_statements += 1
            assert f'id="stmt-{ident.replace(".", "-").lower()}"' in html, ident
            if row.get("erratum"):
                assert f'href="#erratum-{row["erratum"].lower()}"' in html, (ident, row["erratum"])
        for ident in data.get("erratum", {}):
            n_errata += 1
            assert f'id="erratum-{ident.lower()}"' in html, ident
    assert f"{n_statements} statements and {n_errata} errata" in html


def _public_modules(package: str) -> list[str]:
    pkg = importlib.import_module(package)
    return [f"{package}.{info.name}" for info in pkgutil.iter_modules(pkg.__path__) if not info.name.startswith("_")]


@pytest.mark.parametrize("package", API_PACKAGES)
def test_every_public_module_has_an_api_section(package):
    """No public module drops out of the reference: a new one needs its ``automodule`` line on the package's page."""
    page = DOCS / "api" / f"{package}.rst"
    assert page.is_file(), f"no API page docs/api/{package}.rst"
    documented = set(re.findall(r"^\.\. automodule:: (\S+)", page.read_text(encoding="utf-8"), re.M))
    missing = [m for m in _public_modules(package) if m not in documented]
    assert not missing, f"add '.. automodule:: <module>' sections to docs/api/{package}.rst for {missing}"


@pytest.mark.parametrize("module", API_MODULES)
def test_api_page_of_each_module(module):
    text = "\n".join(p.read_text(encoding="utf-8") for p in (DOCS / "api").glob("*.rst"))
    assert f".. automodule:: {module}\n" in text, f"{module} is on no API page"


# ------------------------------------------------------------------------------------------------ the link rules
MINI_CONF = """
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_parser", "refvi_links", "refvi_catalog"]
myst_heading_anchors = 3
refvi_catalogue_folder = {catalogues!r}
exclude_patterns = ["_build"]
"""


def _mini_project(tmp_path: pathlib.Path, guide: str) -> pathlib.Path:
    """A repository with a top-level ARCHITECTURE.md and a docs/ folder using the site's link extension."""
    (tmp_path / "ARCHITECTURE.md").write_text("# Architecture\n\n## Statements\n\nText.\n")
    (tmp_path / "CONTRIBUTING.md").write_text("# Contributing\n\nRead [ARCHITECTURE.md](ARCHITECTURE.md#statements) "
                                              "and [the guide](docs/guide.md).\n")
    cats = tmp_path / "statements" / "demo_009"
    cats.mkdir(parents=True)
    (cats / "catalog.toml").write_text(textwrap.dedent('''
        citation = "Demo (seed 009)"
        [statement."009.thm1"]
        module = "demo"
        title = "|x| <= 1 for *every* x"
        source = "Thm 1"
        kind = "exact"
        uses = ["energy"]
        strength = "tight"
        erratum = "E009-1"
        [erratum."E009-1"]
        module = "demo"
        where = "Thm 1"
        printed = "|x| < 1"
        corrected = "|x| <= 1"
        instance = "x = 1"
        '''))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "conf.py").write_text(MINI_CONF.format(ext=str(DOCS / "_ext"), catalogues=str(cats.parent)))
    (docs / "index.md").write_text("# Home\n\n```{toctree}\n:glob:\n\n*\nproject/*\n```\n")
    (docs / "project").mkdir()
    for name in ("ARCHITECTURE", "CONTRIBUTING"):
        include = f"```{{include}} ../../{name}.md\n:relative-docs: docs/\n```\n"
        (docs / "project" / f"{name.lower()}.md").write_text(include)
    (docs / "catalogue.md").write_text("# Catalogue\n\n```{refvi-catalogue}\n```\n")
    (docs / "guide.md").write_text(guide)
    return docs


def test_link_to_a_top_level_file_builds(tmp_path):
    docs = _mini_project(tmp_path, "# Guide\n\nSee [the layout](../ARCHITECTURE.md) and [its statements]"
                                   "(../ARCHITECTURE.md#statements).\n")
    proc = sphinx_build(docs, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert 'href="project/architecture.html#statements"' in (tmp_path / "out" / "guide.html").read_text()
    contributing = (tmp_path / "out" / "project" / "contributing.html").read_text()   # a top-level file, included
    assert 'href="architecture.html#statements"' in contributing and 'href="../guide.html"' in contributing
    catalogue = (tmp_path / "out" / "catalogue.html").read_text()
    assert "<th class=\"head\"><p>strength</p></th>" in catalogue and "<p>tight</p>" in catalogue
    assert "|x| &lt;= 1 for *every* x" in catalogue            # row text is shown as written, never parsed


@pytest.mark.parametrize("link", ["missing.md", "../MISSING.md", "project/architecture.md#no-such-heading"])
def test_broken_link_fails_the_build(tmp_path, link):
    docs = _mini_project(tmp_path, f"# Guide\n\nA [broken link]({link}).\n")
    proc = sphinx_build(docs, tmp_path / "out")
    assert proc.returncode != 0 and "guide.md" in proc.stderr, proc.stderr
