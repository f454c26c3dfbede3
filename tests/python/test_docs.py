"""docs/python.md's Python blocks run as written, and the README's example too."""
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


@pytest.mark.parametrize("doc", ["docs/python.md", "README.md"])
def test_python_blocks_run(doc, tmp_path, generated, monkeypatch):
    blocks = python_blocks(ROOT / doc)
    assert blocks, f"{doc} has no Python block"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.trace").write_bytes(generated[0].read_bytes())  # what the README's example reads
    for code in blocks:
        exec(compile(code, doc, "exec"), {})
    if doc == "docs/python.md":
        figure = (tmp_path / "split_ratio.svg").read_text()
        assert "<svg" in figure and "frag4" in figure
