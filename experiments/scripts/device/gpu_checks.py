#!/usr/bin/env python3
"""What a GPU run checked, from its logs: results/gpu_checks.md.

    python3 experiments/scripts/device/gpu_checks.py LOG_DIR [--out-dir results]

run_on_gpu.sh calls this at its end with its OUT_DIR. It reads the run's logs (steps.txt,
written by run_on_gpu.sh: one `NAME ok` or `NAME failed RC` line per step; device.txt; the
unit programs' GoogleTest output; memcheck's error and leak summaries; the training runs'
summaries; `fraglab verify`'s matches)
and writes one page that names the device, the commit, the binaries' commit where they were
prebuilt, and every step's outcome with the numbers it printed. Exits 1 if a step failed,
after writing the page, so that a failed run is recorded as failed.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reproduce"))
from results_io import ROOT, provenance, write_markdown  # noqa: E402


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def gtest_counts(text):
    """'N passed, M skipped, K failed' from a GoogleTest program's output."""
    def count(tag):
        m = re.search(rf"^\[ +{tag} +\] (\d+) test", text, re.M)
        return int(m.group(1)) if m else 0
    return f"{count('PASSED')} passed, {count('SKIPPED')} skipped, {count('FAILED')} failed"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log_dir")
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "results"))
    args = parser.parse_args(argv)
    steps_text = read(os.path.join(args.log_dir, "steps.txt"))
    if not steps_text:
        sys.exit(f"gpu_checks.py: {args.log_dir}/steps.txt is missing or empty: not a run_on_gpu.sh log folder")
    steps = []
    for number, line in enumerate(steps_text.splitlines(), 1):
        fields = line.split()
        if len(fields) < 2 or fields[1] not in ("ok", "failed"):
            sys.exit(f"gpu_checks.py: {args.log_dir}/steps.txt:{number}: expected 'NAME ok' or 'NAME failed RC'")
        steps.append(fields)

    device_lines = read(os.path.join(args.log_dir, "device.txt")).strip().splitlines()
    device = device_lines[-1] if device_lines else "unknown"
    binaries = read(os.path.join(args.log_dir, "binaries.txt")).strip() or "built in this run"
    # The speed step of the same run rewrote results/gpu_speed.* (and copied them into the log
    # folder); a rerun rewrites this page. Neither is a change to the code that was checked.
    outputs = ["results/gpu_checks.md"]
    if os.path.exists(os.path.join(args.log_dir, "gpu_speed.md")):
        outputs += ["results/gpu_speed.csv", "results/gpu_speed.md"]
    header = provenance("device/gpu_checks.py", [args.log_dir],
                        [("device (name, memory, driver)", device), ("binaries", binaries)], outputs)

    rows = []
    for fields in steps:
        name, outcome = fields[0], fields[1]
        log = read(os.path.join(args.log_dir, name + ".log"))
        if name.startswith("unit"):
            detail = gtest_counts(log)
        elif name.startswith("train"):
            detail = "; ".join(line for line in log.splitlines() if line.startswith(("policy ", "against ")))
        elif name == "verify":
            detail = "; ".join(line for line in log.splitlines() if "matched" in line)
        elif name == "sanitizer":
            detail = "; ".join(line.strip("= ") for line in log.splitlines() if "SUMMARY:" in line)
        elif name == "snapshot":
            detail = log.strip().splitlines()[-1] if log.strip() else ""
        else:
            detail = ""
        shown = outcome if outcome == "ok" else f"FAILED (exit {fields[2] if len(fields) > 2 else '?'})"
        rows.append(f"| {name} | {shown} | {detail.replace('|', '/')} |")

    failed = [f[0] for f in steps if f[1] != "ok"]
    os.makedirs(args.out_dir, exist_ok=True)
    write_markdown(os.path.join(args.out_dir, "gpu_checks.md"), f"GPU checks on {device.split(',')[0]}",
                   "device/run_on_gpu.sh", header, [
        ["Every step of `experiments/scripts/device/run_on_gpu.sh` (docs/gpu.md): the unit programs with the CUDA "
         "backends' device tests running, not skipping, and again under compute-sanitizer's memcheck; the "
         "plug-in training a transformer under PyTorch's own allocator and then under three policies, whose "
         "losses must agree with the native run's; a new snapshot recorded and checked against "
         "pytorch_caching, address for address. "
         + ("Every step passed." if not failed else f"Failed: {', '.join(failed)}.")],
        ["| step | outcome | what it printed |", "|---|---|---|"] + rows,
    ])
    print(f"wrote {args.out_dir}/gpu_checks.md", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
