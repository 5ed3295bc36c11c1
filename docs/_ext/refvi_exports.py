"""Sphinx directive ``refvi-exports``: the public names of a package (its ``__all__``), each linked to the page
where it is documented under its defining module, with the first line of its docstring.

The API pages document every object once, where it is defined (``refvi.optim.fit.fit``), which is where the
docstrings' cross-references point; this directive shows the names users import (``from refvi.optim import fit``)
without a hand-kept list: it reads ``__all__`` when the site is built.  Each public name is also registered with
the Python domain as an alias (``refvi.online.SVA``), so a docstring may refer to either name; the alias lands on
this table, one click from the definition.  A name whose definition is not documented is a broken reference, which
the strict build reports.

Usage in an ``.rst`` page::

    .. refvi-exports:: refvi.optim
"""

from __future__ import annotations

import importlib
import inspect
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def canonical_name(obj: object) -> str | None:
    """``module.qualname`` where ``obj`` is defined, or None for plain data (a tuple, a dict)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj)) or not module or not qualname:
        return None
    return f"{module}.{qualname}"


def objtype(obj: object) -> str:
    """The Python-domain object type of ``obj`` (what a :class: / :func: / :data: role looks for)."""
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj):
        return "function"
    if inspect.ismodule(obj):
        return "module"
    return "data"


def summary(obj: object) -> str:
    """The first sentence of ``obj``'s docstring (empty for plain data), never cut inside inline markup."""
    if canonical_name(obj) is None:
        return ""
    doc = (inspect.getdoc(obj) or "").strip()
    paragraph = " ".join(doc.split("\n\n")[0].split())
    for match in re.finditer(r"\.(\s|$)", paragraph):
        head = paragraph[: match.start() + 1]
        if head.count("``") % 2 == 0 and head.replace("``", "").count("`") % 2 == 0:
            return head
    return paragraph


class ExportsDirective(SphinxDirective):
    """A two-column table: public name (a reference to its documented definition) and its one-line summary."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None)
        if not names:
            raise self.error(f"refvi-exports: {modname} has no __all__")
        tab = nodes.table(classes=["refvi-exports"])
        group = nodes.tgroup(cols=2)
        tab += group
        group += nodes.colspec(colwidth=30)
        group += nodes.colspec(colwidth=70)
        body = nodes.tbody()
        domain = self.env.get_domain("py")
        for name in names:
            obj = getattr(module, name)
            target = canonical_name(obj)
            first = nodes.paragraph()
            if target is None:
                first += nodes.literal(name, name)
            else:
                ref = addnodes.pending_xref(
                    "", refdomain="py", reftype="obj", reftarget=target, refexplicit=True, refwarn=True
                )
                ref += nodes.literal(name, name)
                first += ref
            second = nodes.paragraph()
            if target:  # the docstring's own inline markup, its references read in the defining module
                saved = self.env.ref_context.get("py:module")
                self.env.ref_context["py:module"] = obj.__module__
                try:
                    parsed, messages = self.state.inline_text(summary(obj), self.lineno)
                finally:
                    self.env.ref_context["py:module"] = saved
                second += parsed
                second += messages
            else:
                second += nodes.Text(f"data ({type(obj).__name__})")
            row = nodes.row(ids=[nodes.make_id(f"export-{modname}.{name}")])
            domain.note_object(
                f"{modname}.{name}", objtype(obj), row["ids"][0], aliased=True, location=self.get_location()
            )
            for para in (first, second):
                entry = nodes.entry()
                entry += para
                row += entry
            body += row
        group += body
        caption = nodes.paragraph(text=f"Importable from {modname} (its __all__):")
        return [caption, tab]


def setup(app: Sphinx) -> dict:
    app.add_directive("refvi-exports", ExportsDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
