"""The README's Python examples run as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    ns: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), ns)      # blocks build on each other, in order
    assert ns["res"].m.shape == (ns["target"].dim,)
