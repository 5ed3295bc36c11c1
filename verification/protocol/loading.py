"""Load the implementation named by ``--impl MODULE:OBJECT``, with one clear error line for every way it can fail."""

from __future__ import annotations

import importlib
from typing import Any


class ImplementationSpecError(ValueError):
    """``--impl`` does not name a usable implementation object (the message is one line, fit for a terminal)."""


def import_root(spec: str | None) -> str | None:
    """The folder that makes ``spec``'s module importable (the one holding its top-level package), once it is
    imported; None for refvi, an installed module or a module not imported yet.  Reproducers record it, so that they
    import the adapter from any directory."""
    import os
    import sys

    if not spec or ":" not in spec:
        return None
    module = sys.modules.get(spec.partition(":")[0])
    path = getattr(module, "__file__", None)
    if not path or "site-packages" in path or "dist-packages" in path:
        return None
    root = os.path.dirname(os.path.abspath(path))
    for _ in range(spec.partition(":")[0].count(".") + (os.path.basename(path) == "__init__.py")):
        root = os.path.dirname(root)
    import refvi

    return None if os.path.abspath(refvi.__file__).startswith(root + os.sep + "refvi" + os.sep) else root


def load_implementation(spec: str | None, search: tuple[str, ...] = ()):
    """``module:object`` (``object`` may be dotted; a class is instantiated); ``None`` or ``"refvi"`` gives refvi.

    A module that is not importable as it stands is looked for in ``search`` and then in the current directory
    (``python -m`` puts it on the path, the ``pytest`` and ``refvi`` scripts and a reproducer run as a file do
    not), so an adapter beside you is found either way."""
    from refvi.verification.protocol import SUBPROTOCOLS, protocol_methods
    from refvi.verification.protocol.refvi_impl import REFVI

    if spec is None or spec == "refvi":
        return REFVI
    if not isinstance(spec, str) or ":" not in spec or spec.startswith(":") or spec.endswith(":"):
        raise ImplementationSpecError(
            f"--impl must look like 'module:object' (e.g. "
            f"'refvi.verification.examples.numpy_adapter:IMPL'), got {spec!r}"
        )
    mod_name, _, obj_name = spec.partition(":")
    try:
        obj: Any = _import(mod_name, search)  # then an attribute of it, then maybe an instance
    except ModuleNotFoundError as exc:
        if exc.name and (mod_name == exc.name or mod_name.startswith(exc.name + ".")):
            raise ImplementationSpecError(
                f"--impl {spec}: no module named {exc.name!r} (is it installed, or on PYTHONPATH?)"
            ) from None
        raise ImplementationSpecError(f"--impl {spec}: importing {mod_name!r} failed: {exc}") from None
    except Exception as exc:  # the module itself is broken: say so in one line
        raise ImplementationSpecError(
            f"--impl {spec}: importing {mod_name!r} raised {type(exc).__name__}: {exc}"
        ) from None
    for part in obj_name.split("."):
        if not hasattr(obj, part):
            raise ImplementationSpecError(
                f"--impl {spec}: {getattr(obj, '__name__', obj_name)!r} has no attribute {part!r}"
            )
        obj = getattr(obj, part)
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:
            raise ImplementationSpecError(
                f"--impl {spec}: instantiating {obj.__name__} raised {type(exc).__name__}: {exc}"
            ) from None
    if not any(callable(getattr(obj, m, None)) for m in protocol_methods(top_level=True)) and not any(
        getattr(obj, s, None) is not None for s in SUBPROTOCOLS
    ):
        raise ImplementationSpecError(
            f"--impl {spec}: the object implements no protocol method and no sub-adapter "
            f"(see refvi.verification.protocol); nothing to verify"
        )
    if not hasattr(obj, "name"):
        try:
            obj.name = spec
        except AttributeError:
            pass
    return obj


def _import(mod_name: str, search: tuple[str, ...]):
    import os
    import sys

    try:
        return importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        top = mod_name.split(".")[0]
        if exc.name != top:
            raise
        for folder in (*search, os.getcwd()):
            here = os.path.isfile(os.path.join(folder, top + ".py")) or os.path.isdir(os.path.join(folder, top))
            if folder and here and folder not in sys.path:
                sys.path.insert(0, folder)
                return importlib.import_module(mod_name)
        raise
