"""docs/fraglab.ipynb runs top to bottom in a fresh Python kernel (nbclient, as Jupyter runs it),
on the real snapshot it names, with its own checks and figures: any error in any cell fails."""
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="python3-nbformat is not installed")
nbclient = pytest.importorskip("nbclient", reason="python3-nbclient is not installed (.ci/install-deps tests installs it)")
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel  # noqa: E402 (nbclient's own dependency)

from conftest import SHARED  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_notebook_runs_from_a_fresh_kernel():
    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        pytest.skip("no python3 Jupyter kernel (Debian: python3-ipykernel)")
    if not (SHARED / "pytorch").is_dir():
        pytest.skip(f"the notebook's snapshot lies in {SHARED}, which is not beside this checkout")
    notebook = nbformat.read(DOCS / "fraglab.ipynb", as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "the notebook is committed with outputs"
    # The kernel inherits this process's environment: the fraglab on PYTHONPATH is the one tested.
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(DOCS)}}).execute()
    assert all(c.execution_count for c in code)
    figures = sum("image/png" in o.get("data", {}) for c in code for o in c.outputs)
    assert figures == 3, f"{figures} figures drawn"
    tables = [o for c in code for o in c.outputs if "text/html" in o.get("data", {})]
    assert any("matched" in t["data"]["text/html"] for t in tables), "verify's table is not shown"
