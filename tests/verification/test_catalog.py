"""The catalogues (verification/catalog.py): every row of every paper package's catalog.toml has its check and every
check its row; malformed rows, rows naming the wrong module and half-inline metadata are errors, not silent."""

import pathlib

import pytest

import refvi.verification.statements as statements_pkg
from refvi.verification import catalog
from refvi.verification.errata import ERRATA, erratum
from refvi.verification.running.runner import load_statements
from refvi.verification.statement import REGISTRY, statement

PACKAGES = sorted(p.name for p in pathlib.Path(statements_pkg.__file__).parent.iterdir()
                  if p.is_dir() and not p.name.startswith("_"))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_row_has_its_check_and_every_check_its_row(package):
    load_statements()
    full = f"refvi.verification.statements.{package}"
    seed = package[-3:]
    for section, registry, check in (("statement", REGISTRY, "claim"), ("erratum", ERRATA, "demonstrate")):
        rows = catalog.rows(full, section)
        assert rows, f"{package}: no {section} rows"
        for ident, row in rows.items():
            assert ident in registry, f"{package}/catalog.toml [{section}.{ident!r}] has no registered check"
            assert getattr(registry[ident], check).__module__ == f"{full}.{row['module']}"
        defined_here = {k for k, v in registry.items() if getattr(v, check).__module__.startswith(full + ".")}
        assert defined_here == set(rows), f"{package}: checks without rows: {defined_here - set(rows)}"
        prefix = seed if section == "statement" else f"E{seed}-"
        assert all(k.startswith(prefix) for k in rows)


def test_a_statement_reads_its_row(monkeypatch):
    load_statements()
    st = REGISTRY["004.lemma8"]
    assert st.source.startswith("Wu & Gardner (seed 004), Lemma 8")
    assert st.kind == "exact" and st.uses == ("ngvi.blr_grad", "ngvi.blr_stochastic_grad")


def _fake_package(tmp_path, monkeypatch, text):
    name = "fakecat_" + "".join(c for c in tmp_path.name if c.isalnum())     # one package per test: none cached
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "catalog.toml").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    catalog.catalog.cache_clear()
    return f"{name}.topic"


def test_rows_are_validated(tmp_path, monkeypatch):
    module = _fake_package(tmp_path, monkeypatch, 'citation = "X (seed 999)"\n[statement."999.thm1"]\nmodule = "topic"\n'
                                                  'title = "t"\nkind = "exact"\nstrength = "as printed"\nuses = []\ncolour = "red"\n')
    with pytest.raises(ValueError, match=r"missing \['source'\].*unknown \['colour'\]"):
        catalog.row("statement", "999.thm1", module)


def test_a_missing_or_misplaced_row_is_an_error(tmp_path, monkeypatch):
    module = _fake_package(tmp_path, monkeypatch, 'citation = "X (seed 999)"\n[erratum."E999-1"]\nmodule = "other"\n'
                                                  'where = "w"\nprinted = "p"\ncorrected = "c"\nstatus = "refuted"\ninstance = "i"\n')
    with pytest.raises(LookupError, match="no row"):
        catalog.row("statement", "999.thm2", module)
    with pytest.raises(ValueError, match="names module 'other'"):
        catalog.row("erratum", "E999-1", module)


def test_metadata_is_all_inline_or_all_from_the_catalogue():
    with pytest.raises(TypeError, match="inline"):
        statement("999.thm3", title="only a title")
    with pytest.raises(TypeError, match="inline"):
        erratum("E999-9", where="only where")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_row_states_its_strength_and_every_erratum_its_status(package):
    full = f"refvi.verification.statements.{package}"
    for ident, row in catalog.rows(full, "statement").items():
        kind = catalog.strength_kind(row["strength"])
        assert kind in catalog.STRENGTHS
        if "erratum" in row:
            assert row["strength"].startswith(f"corrected ({row['erratum']})"), ident
        if kind == "weaker":
            assert len(row["strength"].split("weaker: ", 1)[1]) > 20, f"{ident}: say what is weaker and why"
    for ident, row in catalog.rows(full, "erratum").items():
        assert row["status"] in catalog.STATUSES, ident
    counts = catalog.strength_counts([full])
    assert sum(counts.values()) == len(catalog.rows(full, "statement"))


@pytest.mark.parametrize("strength, message", [
    ('', "expected 'as printed'"), ('weaker', "expected 'as printed'"), ('as printed, mostly', "expected"),
    ('corrected (E999-2)', "must start with 'corrected \\(E999-1\\)'"),
])
def test_a_bad_strength_is_an_error(tmp_path, monkeypatch, strength, message):
    module = _fake_package(tmp_path, monkeypatch, 'citation = "X (seed 999)"\n[statement."999.thm1"]\nmodule = "topic"\n'
                                                  f'title = "t"\nsource = "s"\nkind = "exact"\nstrength = "{strength}"\n'
                                                  'erratum = "E999-1"\nuses = []\n')
    with pytest.raises(ValueError, match=message):
        catalog.row("statement", "999.thm1", module)


def test_a_bad_status_is_an_error(tmp_path, monkeypatch):
    module = _fake_package(tmp_path, monkeypatch, 'citation = "X (seed 999)"\n[erratum."E999-1"]\nmodule = "topic"\n'
                                                  'where = "w"\nprinted = "p"\ncorrected = "c"\nstatus = "wrong"\n'
                                                  'instance = "i"\n')
    with pytest.raises(ValueError, match="status must be one of"):
        catalog.row("erratum", "E999-1", module)


@pytest.mark.parametrize("extra, message", [
    ('strength = "corrected (E999-1)"\n', r"strength names E999-1 but the row has no erratum = 'E999-1'"),
    ('strength = "as printed"\nloose = ["c1"]\n', "loose must map check names to the reason"),
    ('strength = "as printed"\n[statement."999.thm1".loose]\nc1 = " "\n', "loose must map check names to the reason"),
])
def test_a_row_naming_an_erratum_it_lacks_or_a_loose_check_without_a_reason_is_an_error(
        tmp_path, monkeypatch, extra, message):
    module = _fake_package(tmp_path, monkeypatch, 'citation = "X (seed 999)"\n[statement."999.thm1"]\nmodule = "topic"\n'
                                                  f'title = "t"\nsource = "s"\nkind = "exact"\nuses = []\n{extra}')
    with pytest.raises(ValueError, match=message):
        catalog.row("statement", "999.thm1", module)


def test_a_package_without_a_catalogue_or_a_citation_is_an_error(tmp_path, monkeypatch):
    module = _fake_package(tmp_path, monkeypatch, '[statement."999.thm1"]\nmodule = "topic"\n')
    with pytest.raises(ValueError, match="a top-level `citation` string is required"):
        catalog.row("statement", "999.thm1", module)
    (tmp_path / module.split(".")[0] / "catalog.toml").unlink()
    catalog.catalog.cache_clear()
    with pytest.raises(LookupError, match="has no catalog.toml: its statements and errata need one"):
        catalog.row("statement", "999.thm1", module)


def test_a_statement_id_registered_twice_or_of_an_unknown_kind_is_an_error(monkeypatch):
    from refvi.verification.statement import decorator

    monkeypatch.setattr(decorator, "REGISTRY", {})
    statement("999.thm4", title="t", source="s", kind="exact")(lambda ctx: None)
    with pytest.raises(ValueError, match="statement 999.thm4 registered twice"):
        statement("999.thm4", title="t", source="s", kind="exact")(lambda ctx: None)
    with pytest.raises(ValueError, match=r"statement 999.thm5: kind must be one of .*got 'vague'"):
        statement("999.thm5", title="t", source="s", kind="vague")(lambda ctx: None)
    assert list(decorator.REGISTRY) == ["999.thm4"]
