"""The environment of a process a test starts: ``PYTHONPATH`` with the test's own folders first and this process's
``PYTHONPATH`` after them, never replaced.  The mutation driver runs the tests of a mutant with ``PYTHONPATH`` = a
worker's copy of the repository (tests/mutation/mutant.py): a child that dropped it would import the unmutated
checkout and pass whatever the mutant does."""

import os


def pythonpath(*folders) -> str:
    """``folders`` then the current ``PYTHONPATH``, joined with ``os.pathsep``."""
    return os.pathsep.join([*map(str, folders), *filter(None, [os.environ.get("PYTHONPATH")])])


def env_with(*folders) -> dict[str, str]:
    """A copy of ``os.environ`` with :func:`pythonpath` of ``folders``."""
    return {**os.environ, "PYTHONPATH": pythonpath(*folders)}
