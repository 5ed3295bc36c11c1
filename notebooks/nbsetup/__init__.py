"""What every notebook in this folder starts from: the size switch, the figure folder, and writing a figure.

``REFVI_SMALL=1`` selects the reduced runs (the test suite runs every notebook so); figures are PNG files in
``$REFVI_FIGURE_DIR`` (default ``notebooks/figures/``), drawn with the Agg backend.  A folder, not a ``.py`` beside
the notebooks: every ``notebooks/*.py`` is a notebook.  Imported as ``nbsetup`` (a script's folder and a Jupyter
kernel's working directory are on ``sys.path``).
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from refvi import _atomic  # noqa: E402

SMALL = os.environ.get("REFVI_SMALL", "0") == "1"
FIG_DIR = os.environ.get("REFVI_FIGURE_DIR",
                         os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "figures"))
os.makedirs(FIG_DIR, exist_ok=True)


def save(fig, name: str, title: str | None = None, dpi: int = 120) -> str:
    """Title (if given), lay out, write ``FIG_DIR/name`` and close ``fig``; returns the path written."""
    if title is not None:
        fig.suptitle(title)
    fig.tight_layout()
    path = os.path.join(FIG_DIR, name)
    _atomic.save_figure(fig, path, dpi=dpi)
    plt.close(fig)
    return path
