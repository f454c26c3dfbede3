"""PyTorch's own tools read what `fraglab export` writes: torch.cuda._memory_viz (torch's CPU
build, in the project's .venv; FRAGLAB_TORCH_PYTHON names another Python with torch) loads the
snapshot as `python -m torch.cuda._memory_viz` does, its stats, trace, segments and memory views
and its trace_plot and segment_plot pages are made without error, and the totals, blocks and
events its code computes from the file are those of fraglab's own replay of the same trace.

PyTorch's two pages load their viewer (MemoryViz.js) from cdn.jsdelivr.net when opened, which
these machines cannot reach, so they are written and checked to embed the snapshot, not opened
in a browser."""
import base64
import json
import os
import pickle
import re
import subprocess
from pathlib import Path

import pytest

import fraglab

from conftest import cli

TORCH_PYTHON = os.environ.get("FRAGLAB_TORCH_PYTHON", str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python"))
SUMMARY = Path(__file__).with_name("memory_viz_summary.py")


def torch_at_hand():
    try:
        return subprocess.run([TORCH_PYTHON, "-c", "import torch.cuda._memory_viz"], capture_output=True).returncode == 0
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not torch_at_hand(), reason=f"no PyTorch at {TORCH_PYTHON} (.ci/install-deps tests installs "
                                "torch's CPU build into .venv; FRAGLAB_TORCH_PYTHON names another Python)")


@pytest.fixture(scope="module")
def cut_training(tmp_path_factory):
    """Two thirds of a small transformer's training: blocks live and cached free at its end,
    segments of every size class, splits and merges."""
    where = tmp_path_factory.mktemp("pytorch_tools")
    whole = where / "training.trace"
    cli("gen", "transformer", "--layers", "2", "--hidden", "256", "--heads", "4", "--iterations", "2", "--seed", "3", "-o", whole)
    arrays = fraglab.read_trace(whole).to_arrays()
    n = len(arrays["kind"]) * 2 // 3
    cut = fraglab.Trace.from_arrays(*(arrays[c][:n] for c in ("kind", "id", "size", "alignment", "stream")), name="cut")
    cut.write(where / "cut.trace")
    return where / "cut.trace"


@pytest.mark.parametrize("policy", ["pytorch_caching", "pytorch_expandable", "tf_bfc"])
def test_memory_viz_reads_the_export_as_fraglab_replays_it(cut_training, tmp_path, policy):
    snapshot = tmp_path / f"{policy}.pickle"
    cli("export", cut_training, "-p", policy, "--to", "pytorch-snapshot", "-o", snapshot)
    done = subprocess.run([TORCH_PYTHON, str(SUMMARY), str(snapshot), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)

    results, samples = fraglab.replay(cut_training, policy, timeseries=True, repeat=0)
    row, end = results.iloc[0], samples.iloc[-1]
    assert end["event"] == row["events"]  # the state after the last event
    assert end["live_bytes"] > 0 and end["free_chunks"] > 0, "the trace must end with live and cached blocks"
    assert theirs["reserved_bytes"] == end["reserved_bytes"]
    assert theirs["live_bytes"] == end["live_bytes"]  # requested bytes of the active blocks
    assert theirs["allocated_bytes"] == end["allocated_bytes"]  # their block sizes
    assert theirs["free_chunks"] == end["free_chunks"]
    assert theirs["largest_free_bytes"] == end["largest_free_bytes"]
    assert theirs["stats_segments"] == theirs["segments"]
    for view in ("segments", "memory"):
        assert theirs["flame"][view] == {"active_allocated": end["allocated_bytes"],
                                         "inactive": end["reserved_bytes"] - end["allocated_bytes"]}, view
    actions = theirs["actions"]
    assert actions["alloc"] == row["allocs"] and actions["free_completed"] == row["frees"] == actions["free_requested"]
    grows = "segment_map" if policy == "pytorch_expandable" else "segment_alloc"
    assert actions[grows] == row["acquisitions"]
    assert theirs["trace_entries"] == sum(actions.values())

    for page in ("trace_plot", "segment_plot"):
        html = (tmp_path / f"{page}.html").read_text()
        embedded = json.loads(re.search(r"const local_files = (\[.*\])\n", html).group(1))[0]["base64"]
        with open(snapshot, "rb") as f:
            assert pickle.loads(base64.b64decode(embedded)) == pickle.load(f), f"{page} does not hold the snapshot"
