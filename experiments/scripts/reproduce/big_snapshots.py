#!/usr/bin/python3
"""Gigabyte PyTorch snapshots: wall time and peak memory of `fraglab info`, `verify`, `replay`
and `view` on each, side by side with Python's own `pickle.load` of the same file.

    experiments/scripts/reproduce/big_snapshots.py [--sizes 0.5,1,2] [--fraglab PATH] [--out-dir results]
                                         [--work-dir DIR] [--quick] [--no-pickle-load]

Each size (GB) is made twice from one generated workload (`fraglab gen random`, exported
under pytorch_caching by `fraglab export`, so `verify` has real decisions to match):
- without stack frames, as export writes it;
- with stack frames laid out as PyTorch writes them: each distinct stack is written once and
  referred to again through the pickle's memo, as are its frames. STACKS distinct stacks of
  16 to 64 frames drawn from FRAMES distinct frames, one per entry chosen at random: a
  training loop's allocation sites recur every iteration, so their stacks are few and shared.

On the largest framed file, every other command that reads a snapshot is run too (sweep,
capacity, tune, explain, report, export, plan, and a replay through the Python module).
Writes OUT/big_snapshots.csv and OUT/big_snapshots.md. A benchmark, not a test: the timings
are of this machine at the time, the ratios to pickle.load measured in the same run.
"""

import argparse
import glob
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from results_io import common_arguments, markdown_table, provenance, run, write_csv, write_markdown

BYTES_PER_ALLOCATION = 240  # an alloc and a free_completed as `fraglab export` writes them
STACKS = 20_000
FRAMES = 30_000
FRAMES_KEY = b"\x8c\x06frames"  # SHORT_BINUNICODE 'frames', as pickle_writer writes it
EMPTY_FRAMES = FRAMES_KEY + b"](e"  # and its value when there are none: EMPTY_LIST MARK APPENDS


def measure(cmd):
    """(seconds, peak resident bytes, exit status) of one command, its peak taken alone: a
    fresh Python runs it and reports its child's."""
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.monotonic()\n"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
             "t = time.monotonic() - t\n"
             "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, r.returncode)\n"
             "sys.stderr.write(r.stderr.decode(errors='replace')[-2000:])\n")
    done = subprocess.run([sys.executable, "-c", probe] + cmd, capture_output=True, text=True)
    seconds, peak, status = done.stdout.split()
    if int(status) != 0:
        print(f"big_snapshots.py: {' '.join(cmd)} exited {status}: {done.stderr.strip()[-500:]}", file=sys.stderr)
    return float(seconds), int(peak), int(status)


def memo_ref(key):
    """BINGET or LONG_BINGET of a memo key."""
    return b"h" + bytes([key]) if key < 256 else b"j" + key.to_bytes(4, "little")


def short_text(s):
    b = s.encode()
    return b"\x8c" + bytes([len(b)]) + b


class stack_writer:
    """Writes stacks into a pickle that has no memo of its own: the first use of a stack or a
    frame defines it (and MEMOIZEs it), every later use fetches it."""

    def __init__(self, seed):
        rng = random.Random(seed)
        self.rng = rng
        files = [f"/src/model/{m}.py" for m in ("attention", "mlp", "embedding", "norm", "optim", "data", "loss", "train")]
        self.frame_parts = [(rng.choice(files), rng.randrange(1, 2000), f"fn_{i}") for i in range(FRAMES)]
        self.stacks = [[rng.randrange(FRAMES) for _ in range(rng.randrange(16, 65))] for _ in range(STACKS)]
        self.frame_key = {}
        self.stack_key = {}
        self.memo = 0

    def _memoize(self):
        key = self.memo
        self.memo += 1
        return b"\x94", key

    def frame(self, f):
        if f in self.frame_key:
            return memo_ref(self.frame_key[f])
        filename, line, name = self.frame_parts[f]
        op, self.frame_key[f] = self._memoize()
        return (b"}" + op + b"(" + short_text("filename") + short_text(filename) + short_text("line") +
                b"J" + line.to_bytes(4, "little") + short_text("name") + short_text(name) + b"u")

    def stack(self):
        s = self.rng.randrange(STACKS)
        if s in self.stack_key:
            return memo_ref(self.stack_key[s])
        op, self.stack_key[s] = self._memoize()
        return b"]" + op + b"(" + b"".join(self.frame(f) for f in self.stacks[s]) + b"e"


def add_frames(plain, framed, seed=1):
    """Copies the export `plain` to `framed`, every empty `frames` given a stack."""
    stacks = stack_writer(seed)
    with open(plain, "rb") as src, open(framed + ".part", "wb") as dst:
        carry = b""
        while True:
            block = src.read(64 << 20)
            data = carry + block
            if not block:
                dst.write(data)
                break
            # Keep what could be the start of a split pattern for the next block.
            cut = max(len(data) - len(EMPTY_FRAMES) + 1, 0)
            last = data.rfind(EMPTY_FRAMES)
            if last >= 0:
                cut = max(cut, last + len(EMPTY_FRAMES))
            pieces = data[:cut].split(EMPTY_FRAMES)
            out = [pieces[0]]
            for piece in pieces[1:]:
                out.append(FRAMES_KEY + stacks.stack())
                out.append(piece)
            dst.write(b"".join(out))
            carry = data[cut:]
    os.replace(framed + ".part", framed)


def make_inputs(fraglab, work_dir, gigabytes):
    """The plain and framed snapshots of `gigabytes` GB, made once and kept."""
    os.makedirs(work_dir, exist_ok=True)
    tag = f"{gigabytes:g}gb"
    plain = os.path.join(work_dir, f"snapshot-{tag}.pickle")
    framed = os.path.join(work_dir, f"snapshot-{tag}-frames.pickle")
    if not os.path.exists(plain):
        allocations = int(gigabytes * 1e9 / BYTES_PER_ALLOCATION)
        trace = os.path.join(work_dir, f"random-{tag}.fbin")
        run([fraglab, "gen", "random", "--allocations", str(allocations), "-o", trace])
        run([fraglab, "export", trace, "-p", "pytorch_caching", "--to", "pytorch-snapshot", "-o", plain])
        os.remove(trace)
    if not os.path.exists(framed):
        add_frames(plain, framed)
    return [("no", plain), ("yes", framed)]


def open_seconds(page):
    """Seconds headless Chromium takes to load `page` and run its scripts ("" without Chromium)."""
    browser = shutil.which("chromium")
    if browser is None:
        return ""
    start = time.monotonic()
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + page],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return f"{time.monotonic() - start:.1f}" if done.returncode == 0 else f"(exit {done.returncode})"


def other_commands(fraglab, path, scratch):
    """The commands besides info, verify, replay and view that read a snapshot, and the Python
    module where the build made one: what each costs on the largest file."""
    out = lambda name: os.path.join(scratch, name)
    commands = [("sweep", [fraglab, "sweep", path, "-p", "pytorch_caching", "--vary", "max_split_size_mb=64,256"]),
                ("capacity", [fraglab, "capacity", path, "-p", "pytorch_caching"]),
                ("tune", [fraglab, "tune", path]),
                ("explain", [fraglab, "explain", path]),
                ("report", [fraglab, "report", path, "-p", "pytorch_caching", "-o", out("report.html")]),
                ("export", [fraglab, "export", path, "-p", "pytorch_caching", "--to", "pytorch-snapshot", "-o", out("export.pickle")]),
                ("plan", [fraglab, "plan", path, "-o", out("plan.csv")])]
    module = os.path.join(os.path.dirname(os.path.abspath(fraglab)), "python")
    if glob.glob(os.path.join(module, "fraglab", "_core*.so")):
        commands.append(("python: fraglab.replay", ["/usr/bin/python3", "-c",
                                                    "import sys; sys.path.insert(0, sys.argv[1]); import fraglab; "
                                                    "fraglab.replay(fraglab.read_trace(sys.argv[2]), ['pytorch_caching'])",
                                                    module, path]))
    return commands


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_arguments(parser, "big_snapshots")
    parser.add_argument("--sizes", default="0.5,1,2", help="snapshot sizes in GB, comma-separated")
    parser.add_argument("--no-pickle-load", action="store_true", help="leave out Python's pickle.load")
    args = parser.parse_args(argv)
    sizes = [0.01] if args.quick else [float(s) for s in args.sizes.split(",")]
    fraglab = args.fraglab
    columns = ["size_gb", "frames", "file_mb", "command", "seconds", "peak_mb", "speedup_vs_pickle_load", "memory_vs_pickle_load",
               "page_mb", "page_open_seconds"]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        page = os.path.join(scratch, "view.html")
        pages = {"view": page, "report": os.path.join(scratch, "report.html")}
        for gigabytes in sizes:
            for frames, path in make_inputs(fraglab, args.work_dir, gigabytes):
                file_mb = os.path.getsize(path) / 1e6
                commands = [("info", [fraglab, "info", path]),
                            ("verify", [fraglab, "verify", path]),
                            ("replay", [fraglab, "replay", path, "-p", "pytorch_caching"]),
                            ("view", [fraglab, "view", path, "-p", "pytorch_caching", "-o", page])]
                if gigabytes == sizes[-1] and frames == "yes":  # every other command, on the largest file
                    commands += other_commands(fraglab, path, scratch)
                if not args.no_pickle_load:
                    commands.insert(0, ("pickle.load", ["/usr/bin/python3", "-c",
                                                        "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))", path]))
                measured = {}
                for name, cmd in commands:
                    measured[name] = measure(cmd)
                base = measured.get("pickle.load")
                for name, (seconds, peak, status) in measured.items():
                    failed = status != 0
                    ratio = base and base[2] == 0 and not failed and name in ("info", "verify", "replay", "view")
                    page_mb = page_open = ""
                    if name in pages and not failed:
                        page_mb = f"{os.path.getsize(pages[name]) / 1e6:.1f}"
                        page_open = open_seconds(pages[name])
                    rows.append([f"{gigabytes:g}", frames, f"{file_mb:.0f}",
                                 name + (f" (exit {status})" if failed else ""),
                                 f"{seconds:.1f}", f"{peak / 1e6:.0f}",
                                 f"{base[0] / seconds:.1f}x" if ratio else "",
                                 f"{peak / base[1]:.3f}" if ratio else "", page_mb, page_open])
    header = provenance("big_snapshots.py", argv, [("stacks", f"{STACKS} distinct, 16-64 frames from {FRAMES} distinct frames")])
    out_csv = os.path.join(args.out_dir, "big_snapshots.csv")
    write_csv(out_csv, header, columns, rows)
    write_markdown(os.path.join(args.out_dir, "big_snapshots.md"), "Gigabyte PyTorch snapshots", "big_snapshots.py", header,
                   [["Wall time and peak resident memory of each command on one file; pickle.load is Python's C "
                     "unpickler reading the same file (ratios: its time over ours, our memory over its); the pages of "
                     "view and report: their size, and the seconds headless Chromium takes to load them and run their scripts."],
                    markdown_table(columns, rows)])
    print(open(out_csv).read(), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
