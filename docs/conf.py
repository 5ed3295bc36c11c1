"""Sphinx configuration of refvi's documentation site.

Build it with ``python -m sphinx -W --keep-going -n docs docs/_build/html`` (warnings are errors, every reference must
resolve); ``tests/test_docs_build.py`` runs exactly that.  The guides are the Markdown pages ``docs/*.md`` (MyST),
the API reference is rendered from the docstrings by autodoc (``docs/api/``), and the statement catalogue is rendered
from every ``verification/statements/*/catalog.toml`` by the local extension ``docs/_ext/refvi_catalog.py``.
"""

from __future__ import annotations

import os
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(ROOT))  # document the checkout's refvi, not whatever else is installed
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import refvi  # noqa: E402

project = "refvi"
author = "the refvi developers"
copyright = "the refvi developers"
release = version = refvi.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "refvi_catalog",
    "refvi_exports",
    "refvi_links",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# ---------------------------------------------------------------------------------------------------------- MyST
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links resolve to generated anchors

# ------------------------------------------------------------------------------------------------------- autodoc
autodoc_default_options = {"members": True, "member-order": "bysource", "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True  # show `steps=10_000`, not the evaluated repr of every default
autoclass_content = "both"  # the class docstring and __init__'s

# Nitpicky mode (-n) checks every cross-reference.  Types from other libraries cannot resolve without intersphinx
# inventories, which would need the network at build time, so exactly those are listed here (nothing of refvi is).
nitpick_ignore_regex = [
    ("py:.*", r"(np|numpy|numba|scipy|sympy|mpmath|hypothesis|dask|distributed|jax)(\..*)?"),
]
# the standard library's, in a signature of strategies.py
nitpick_ignore = [("py:class", "random.Random"), ("py:class", "pathlib.Path")]
# the standard library's abstract types in signatures (Callable, Iterable, Sequence, ...: ruff's UP035 asks for
# collections.abc, whose names Sphinx does not resolve without an inventory, unlike typing's)
nitpick_ignore_regex.append(("py:class", r"collections\.abc\.\w+"))

# ---------------------------------------------------------------------------------------------------------- HTML
html_theme = "furo"
html_title = f"refvi {release}"


# ------------------------------------------------------------------------------------------------ signature hook
def dataclass_factory_defaults(app, what, name, obj, options, signature, return_annotation):
    """Show a dataclass field's ``default_factory`` as the call it makes (``dict()``) instead of ``<factory>``,
    which is not Python: the signature parser would then split the annotations at every comma."""
    import dataclasses

    if what != "class" or not dataclasses.is_dataclass(obj) or not signature or "<factory>" not in signature:
        return None
    for field in dataclasses.fields(obj):
        if field.init and field.default_factory is not dataclasses.MISSING:
            factory = getattr(field.default_factory, "__qualname__", None) or "factory"
            signature = signature.replace("<factory>", f"{factory}()", 1)
    return signature, return_annotation


def setup(app):
    app.connect("autodoc-process-signature", dataclass_factory_defaults)
