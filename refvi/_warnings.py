"""Warnings shown at the user's line: :func:`warn_at_caller` attributes a warning to the first frame outside refvi,
however deep inside refvi (the stages of ``fit``, an online learner's ``run`` called by ``update``) it was raised."""

from __future__ import annotations

import os
import sys
import types
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` with the stack level of the nearest caller outside the refvi package."""
    frame: types.FrameType | None = sys._getframe(1)
    level = 2  # stacklevel 1 is this function, 2 its caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
