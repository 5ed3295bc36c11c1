"""Sphinx directive ``refvi-catalogue``: the statement catalogue, rendered from the ``catalog.toml`` rows.

Every package under ``refvi/verification/statements/`` keeps one row per statement and per erratum in its
``catalog.toml`` (see :mod:`refvi.verification.catalog`).  The directive reads those files (with :mod:`tomllib`,
not through refvi, so a row refvi would reject still shows up here as written) and renders, per paper, a table of
statements (id, result, source, kind, strength when a row has one, erratum, protocol methods used) and a table of
errata (id, where, printed, corrected, smallest instance).  Text is inserted as plain text, never parsed as markup,
so the formulas of the rows cannot break the build.  A counts line ("N statements and K errata over P papers")
is computed from the same rows, so it cannot drift.

Usage in a MyST page (``refvi_catalogue_folder`` in ``conf.py`` points it at another folder of packages)::

    ```{refvi-catalogue}
    ```
"""

from __future__ import annotations

import pathlib
import re
import tomllib

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

#: statement columns: (header, row key, relative width); "strength" only when some row has one
STATEMENT_COLUMNS = [
    ("id", "id", 12),
    ("result", "title", 34),
    ("source", "source", 22),
    ("kind", "kind", 8),
    ("strength", "strength", 8),
    ("erratum", "erratum", 7),
    ("uses", "uses", 14),
]
ERRATUM_COLUMNS = [
    ("id", "id", 8),
    ("where", "where", 22),
    ("printed", "printed", 22),
    ("corrected", "corrected", 24),
    ("instance", "instance", 24),
]


def statements_folder() -> pathlib.Path:
    """The folder of the statement packages of the refvi being documented."""
    import refvi.verification.statements as pkg

    return pathlib.Path(pkg.__file__).resolve().parent


def seed_of(package: str) -> str:
    """``convergence_000`` -> ``000`` (the paper's seed number, which orders the papers)."""
    match = re.search(r"_(\d{3})$", package)
    if match is None:
        raise ValueError(f"statement package {package!r} does not end in a three-digit seed (e.g. ngvi_004)")
    return match.group(1)


def load_catalogues(folder: pathlib.Path | None = None) -> list[tuple[str, dict]]:
    """(package name, parsed catalog.toml) of every statement package, by seed."""
    folder = statements_folder() if folder is None else folder
    out = []
    for path in folder.glob("*/catalog.toml"):
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        if not isinstance(data.get("citation"), str):
            raise ValueError(f"{path}: a top-level `citation` string is required")
        out.append((path.parent.name, data))
    if not out:
        raise ValueError(f"no catalog.toml under {folder}")
    return sorted(out, key=lambda item: seed_of(item[0]))


def anchor(kind: str, ident: str) -> str:
    """The HTML id of a statement's or an erratum's row (``stmt-000-thm3``, ``erratum-e000-3``)."""
    return nodes.make_id(f"{kind}-{ident}")


def _cell_text(key: str, ident: str, row: dict) -> str:
    if key == "id":
        return ident
    value = row.get(key)
    if value is None:
        return ""
    if key == "uses":
        return ", ".join(value) if value else "oracle-only"
    if key == "kind" and row.get("profiles"):
        return f"{value} ({', '.join(row['profiles'])} profile only)"
    return str(value)


def _cell(key: str, ident: str, row: dict, section: str) -> nodes.entry:
    text = _cell_text(key, ident, row)
    para = nodes.paragraph()
    if key == "id":
        para += nodes.literal(text, text)
    elif key == "erratum" and text:
        ref = nodes.reference("", "", internal=True, refid=anchor("erratum", text))
        ref += nodes.literal(text, text)
        para += ref
    elif key == "uses" and row.get("uses"):
        for i, method in enumerate(row["uses"]):
            if i:
                para += nodes.Text(", ")
            para += nodes.literal(method, method)
    else:
        para += nodes.Text(text)
    entry = nodes.entry()
    if key == "id":
        entry["ids"].append(anchor("stmt" if section == "statement" else "erratum", ident))
    entry += para
    return entry


def table(section: str, rows: dict[str, dict], columns: list[tuple[str, str, int]]) -> nodes.table:
    """A docutils table of ``rows`` (id -> row) with ``columns``."""
    tab = nodes.table(classes=["refvi-catalogue"])
    group = nodes.tgroup(cols=len(columns))
    tab += group
    for _, _, width in columns:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    header = nodes.row()
    for title, _, _ in columns:
        entry = nodes.entry()
        entry += nodes.paragraph(text=title)
        header += entry
    head += header
    group += head
    body = nodes.tbody()
    for ident, row in rows.items():
        line = nodes.row()
        for _, key, _ in columns:
            line += _cell(key, ident, row, section)
        body += line
    group += body
    return tab


class CatalogueDirective(SphinxDirective):
    """Render every statement package's catalogue: a counts line, then per paper its statements and errata."""

    has_content = False
    required_arguments = 0

    def run(self) -> list[nodes.Node]:
        configured = self.config.refvi_catalogue_folder
        folder = statements_folder() if configured is None else pathlib.Path(configured)
        catalogues = load_catalogues(folder)
        for package, _ in catalogues:
            self.env.note_dependency(str(folder / package / "catalog.toml"))
        n_statements = sum(len(data.get("statement", {})) for _, data in catalogues)
        n_errata = sum(len(data.get("erratum", {})) for _, data in catalogues)
        has_strength = any("strength" in row for _, data in catalogues for row in data.get("statement", {}).values())
        columns = [c for c in STATEMENT_COLUMNS if c[1] != "strength" or has_strength]

        out: list[nodes.Node] = [
            nodes.paragraph(
                text=f"{n_statements} statements and {n_errata} errata over {len(catalogues)} papers "
                f"(counted from the catalogues when this page was built)."
            )
        ]
        for package, data in catalogues:
            statements, errata = data.get("statement", {}), data.get("erratum", {})
            sec = nodes.section(ids=[nodes.make_id(f"catalogue-{package}")])
            sec += nodes.title(text=data["citation"])
            sec += nodes.paragraph(
                text=f"Package refvi.verification.statements.{package}: {len(statements)} "
                f"statements, {len(errata)} errata."
            )
            sec += table("statement", dict(sorted(statements.items(), key=lambda kv: _id_key(kv[0]))), columns)
            if errata:
                sub = nodes.section(ids=[nodes.make_id(f"errata-{package}")])
                sub += nodes.title(text=f"Errata of seed {seed_of(package)}")
                sub += table("erratum", dict(sorted(errata.items(), key=lambda kv: _id_key(kv[0]))), ERRATUM_COLUMNS)
                sec += sub
            out.append(sec)
        return out


def _id_key(ident: str) -> tuple:
    """Natural order of ids: ``000.thm2`` before ``000.thm10``, numbered results before named claims."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", ident) if part)


def setup(app: Sphinx) -> dict:
    # the folder holding the statement packages; None: refvi.verification.statements of the refvi being documented
    app.add_config_value("refvi_catalogue_folder", None, "env")
    app.add_directive("refvi-catalogue", CatalogueDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
