"""Atomic file writes: every file refvi writes (certificates, search results, reproducers, benchmark history,
reports, figures) goes to a temporary file beside its target and is renamed into place, so a reader never sees half
a file and a write that fails (a full disk, an unwritable folder, a killed process) leaves the previous file intact.

A failed write raises :class:`WriteError` (an ``OSError``) with one line naming the path and the cause; the
temporary file is removed (except after SIGKILL, when nothing can run: a stray ``.<name>.*.tmp`` may then remain
beside the target, and the target itself is untouched).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from typing import Any


class WriteError(OSError):
    """A file could not be written; the previous file at that path is unchanged."""


@contextlib.contextmanager
def replacing(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[Any]:
    """``with replacing(path) as fh: fh.write(...)``: the file appears at ``path`` complete, or not at all."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    binary = "b" in mode
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(path):
            with contextlib.suppress(OSError):
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        else:
            with contextlib.suppress(OSError):
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise WriteError(f"cannot write {path}: {exc.strerror or exc}; the previous file is unchanged") from None
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with replacing(path) as fh:
        fh.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with replacing(path, "wb") as fh:
        fh.write(data)


def write_json(path: str | os.PathLike, obj: Any, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON (with a final newline) to ``path`` atomically."""
    with replacing(path) as fh:
        json.dump(obj, fh, indent=indent)
        fh.write("\n")


def save_figure(fig, path: str | os.PathLike, **savefig_kwargs) -> None:
    """``fig.savefig(path)`` atomically (the format from the file's extension)."""
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
    with replacing(path, "wb") as fh:
        fig.savefig(fh, format=fmt, **savefig_kwargs)


def append_line(path: str | os.PathLike, line: str) -> None:
    """Append one line to a text file atomically (the whole file is rewritten beside it and renamed)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
    except FileNotFoundError:
        old = ""
    if old and not old.endswith("\n"):
        old += "\n"
    write_text(path, old + line.rstrip("\n") + "\n")
