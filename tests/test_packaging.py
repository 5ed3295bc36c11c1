"""The package layout: the repository's top-level folders ``refvi``, ``kernels`` and ``verification`` form one package
``refvi`` (``refvi/kernels`` and ``refvi/verification`` are symbolic links to the folders), found by setuptools'
package discovery, with no list kept by hand.  CI installs refvi non-editably, so these checks run against the wheel:
a source package missing from it, or a module importable under a second name, fails here.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pathlib

import pytest

import refvi

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = {"refvi": "refvi", "kernels": "refvi.kernels", "verification": "refvi.verification"}


def _source_packages():
    """(folder, dotted name) of every package in the work tree's three top-level folders."""
    out = []
    for top, name in FOLDERS.items():
        for init in sorted((ROOT / top).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / top)
            if top == "refvi" and rel.parts[:1] in (("kernels",), ("verification",)):
                continue                                     # the links: counted under their own folder
            out.append((init.parent, ".".join((name,) + rel.parts)))
    return out


@pytest.mark.parametrize("folder,name", _source_packages(), ids=[n for _, n in _source_packages()])
def test_every_source_package_is_installed_under_refvi(folder, name):
    spec = importlib.util.find_spec(name)
    assert spec is not None, f"{folder} is not importable as {name} (missing from the installed package?)"
    installed = pathlib.Path(refvi.__file__).resolve().parent
    assert pathlib.Path(spec.origin).resolve().is_relative_to(installed.parent), (name, spec.origin)


@pytest.mark.parametrize("name", ["refvi.refvi", "refvi.tests", "refvi.notebooks"])
def test_no_module_is_importable_under_a_second_name(name):
    with pytest.raises(ImportError):
        importlib.import_module(name)


def test_kernels_and_verification_are_links_to_the_top_level_folders():
    for sub in ("kernels", "verification"):
        link = ROOT / "refvi" / sub
        assert link.is_symlink(), f"refvi/{sub} must be a symbolic link to ../{sub}"
        assert os.readlink(link) == f"../{sub}"


def test_pyproject_lists_no_package_by_hand():
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as fh:
        cfg = tomllib.load(fh)["tool"]["setuptools"]
    assert "packages" not in cfg or "find" in cfg["packages"], "packages are discovered, not listed"
    assert "package-dir" not in cfg


def test_py_typed_is_installed():
    """PEP 561: the installed package carries its py.typed marker, so type checkers read refvi's annotations."""
    from importlib import resources

    assert resources.files("refvi").joinpath("py.typed").is_file()
