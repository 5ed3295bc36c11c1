"""The installed package must contain every source package of the work tree.

CI installs refvi non-editably (``pip install ".[test]"``); ``pyproject.toml`` lists the packages by hand because
three top-level folders (``refvi``, ``kernels``, ``verification``) map into one ``refvi`` namespace. A new folder
with an ``__init__.py`` that is not listed is silently left out of the wheel and breaks the installed copy only.
"""

from __future__ import annotations

import pathlib
import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _config():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def test_every_source_package_is_listed_and_mapped():
    cfg = _config()
    listed = set(cfg["packages"])
    mapped = {pathlib.PurePosixPath(v): k for k, v in cfg["package-dir"].items()}
    missing = []
    for init in sorted(ROOT.glob("*/**/__init__.py")):
        folder = pathlib.PurePosixPath(init.parent.relative_to(ROOT).as_posix())
        if folder.parts[0] not in {"refvi", "kernels", "verification"}:
            continue
        name = mapped.get(folder)
        if name is None:
            # refvi/x/y maps through its parent refvi/x when only the parent is in package-dir
            parent = next((p for p in folder.parents if p in mapped), None)
            assert parent is not None, f"{folder} is not under any package-dir entry"
            name = mapped[parent] + "." + ".".join(folder.relative_to(parent).parts)
        if name not in listed:
            missing.append(f"{folder} -> {name}")
    assert not missing, "packages missing from pyproject.toml [tool.setuptools] packages: " + ", ".join(missing)
