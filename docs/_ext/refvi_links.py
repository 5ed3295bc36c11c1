"""Links from the guides to the repository's top-level Markdown files, written as on GitHub.

A guide in ``docs/`` links ``[ARCHITECTURE.md](../ARCHITECTURE.md)``, which works when the file is read on GitHub or
in an editor; on the site that file is outside the source folder, so MyST reports an unknown document.  The
top-level files the site carries are included by pages of their own (``docs/project/architecture.md``
includes ``../../ARCHITECTURE.md``, and so on); this post-transform points such links at those pages, before MyST
resolves them.  Every other link is left alone, so a link to a page or heading that does not exist still fails the
strict build.  Inside an included top-level file, links are relative to the repository root (``ARCHITECTURE.md``,
``docs/conformance.md``): the include pages pass ``:relative-docs: docs/`` for the second kind, and this transform
handles the first.
"""

from __future__ import annotations

import pathlib

from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

#: top-level file (without .md) -> the site page that shows it
ROOT_PAGES = {
    "README": "index",
    "ARCHITECTURE": "project/architecture",
    "CONTRIBUTING": "project/contributing",
    "CHANGELOG": "project/changelog",
}


def root_page(target: str, srcdir: pathlib.Path, refdoc: str) -> str | None:
    """The site page for a MyST document target naming a top-level file, else None.

    ``target`` is MyST's document name for the link, relative to the source folder or absolute; it names a
    top-level file when it lies in the repository root, or, inside one of the pages that include a top-level file
    (whose links are relative to the root), when it lies beside that page."""
    path = pathlib.Path(target)
    path = (path if path.is_absolute() else srcdir / path).resolve()
    if path.name not in ROOT_PAGES:
        return None
    if path.parent == srcdir.parent.resolve():
        return ROOT_PAGES[path.name]
    if refdoc in ROOT_PAGES.values() and path.parent == (srcdir / refdoc).parent.resolve():
        return ROOT_PAGES[path.name]
    return None


class RootFileLinks(SphinxPostTransform):
    """Point MyST links to ``../README.md``, ``../ARCHITECTURE.md``, ... at the site pages that include them."""

    default_priority = 8  # before MyST's own resolver (9)

    def run(self, **kwargs) -> None:
        srcdir = pathlib.Path(self.env.srcdir)
        for node in self.document.findall(addnodes.pending_xref):
            if node.get("reftype") != "myst" or node["reftarget"] in self.env.all_docs:
                continue
            refdoc = node.get("refdoc", self.env.docname)
            if node.get("refdomain") == "doc":  # a path MyST took for a document: ../ARCHITECTURE.md
                page = root_page(node["reftarget"], srcdir, refdoc)
                if page is not None and page in self.env.all_docs:
                    node["reftarget"] = page
            elif node.get("refdomain") is None and refdoc in ROOT_PAGES.values():
                # inside an included top-level file, MyST did not find ARCHITECTURE.md beside the including page
                target, _, anchor = node["reftarget"].partition("#")
                if not target.endswith(".md"):
                    continue
                page = root_page(str(pathlib.Path(refdoc).parent / target[:-3]), srcdir, refdoc)
                if page is not None and page in self.env.all_docs:
                    node["refdomain"], node["reftarget"], node["reftargetid"] = "doc", page, anchor or None


def setup(app: Sphinx) -> dict:
    app.add_post_transform(RootFileLinks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
