"""Run by a Python with PyTorch (tests/python/test_pytorch_tools.py): what PyTorch's own
memory-visualisation module, torch.cuda._memory_viz, makes of a snapshot file.

    python memory_viz_summary.py SNAPSHOT.pickle OUT_DIR

Reads the file as `python -m torch.cuda._memory_viz` does, runs its text views (stats, trace,
segments, memory) and writes its two pages (OUT_DIR/trace_plot.html, segment_plot.html); prints
as JSON the totals its views report and the block and event counts its own code walks."""
import json
import pickle
import sys
from collections import Counter

from torch.cuda import _memory_viz as viz

path, out = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    data = pickle.load(f)

# stats: PyTorch checks that every segment's blocks add up to its size (AssertionError if not).
stats = viz.segsum(data)
lines = dict(line.split(": ", 1) for line in stats.splitlines() if line.startswith(("segments:", "total_")))
# segments and memory, their flame-graph lines kept as text: "PREFIX;STATE;FRAMES BYTES".
flame = {}
for name, view in (("segments", viz.segments), ("memory", viz.memory)):
    by_state = Counter()
    for line in view(data, format_flamegraph=lambda text: text).splitlines():
        stack, size = line.rsplit(" ", 1)
        by_state[stack.split(";")[2 if name == "segments" else 1]] += int(size)
    flame[name] = dict(by_state)
trace_text = viz.trace(data)
for kind, page in (("trace_plot", viz.trace_plot(data)), ("segment_plot", viz.segment_plot(data))):
    with open(f"{out}/{kind}.html", "w") as f:
        f.write(page)

blocks = [b for s in data["segments"] for b in s["blocks"]]
free = [b["size"] for b in blocks if b["state"] == "inactive"]
print(json.dumps({
    "stats_segments": int(lines["segments"]),
    "stats_total_reserved": lines["total_reserved"],
    "segments": len(data["segments"]),
    "reserved_bytes": sum(s["total_size"] for s in data["segments"]),
    "live_bytes": sum(viz._block_extra(b)[1] for b in blocks if b["state"] == "active_allocated"),
    "allocated_bytes": sum(viz.calc_active(s) for s in data["segments"]),
    "free_chunks": len(free),
    "largest_free_bytes": max(free, default=0),
    "flame": flame,
    "actions": dict(Counter(e["action"] for t in data["device_traces"] for e in t)),
    "trace_entries": sum(int(line.split()[0]) for line in trace_text.splitlines() if line.endswith(" entries")),
}))
