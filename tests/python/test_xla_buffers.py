"""experiments/scripts/reproduce/xla_buffers.py: XLA's buffer assignment read as a planning problem with
XLA's own placement, on a hand-made dump whose buffers are worked out here, on a real dump of
JAX's (an LSTM's training step compiled with lax.scan, tests/policies/offline/data), and its
refusals."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "scripts" / "reproduce"))
import xla_buffers  # noqa: E402

SCRIPT = ROOT / "experiments" / "scripts" / "reproduce" / "xla_buffers.py"
CHECK = ROOT / "tests" / "policies" / "offline" / "check_placement.py"
LSTM = ROOT / "tests" / "policies" / "offline" / "data" / "xla_lstm_scan"


def dump(folder, assignment, live_ranges):
    folder.mkdir(exist_ok=True)
    (folder / "module_0000.jit_f.cpu_after_optimizations-buffer-assignment.txt").write_text(assignment)
    (folder / "module_0000.jit_f.cpu_after_optimizations-live-range.txt").write_text(
        "HloLiveRange (max 9):\n  InstructionSequence:\n    0:p\n  BufferLiveRange:\n" +
        "".join(f"    {v}\n" for v in live_ranges) + "  Live ranges at 6 (peak):\n    p{}: 1024 bytes\n")
    return folder


HAND_MADE = """BufferAssignment:
allocation 0: size 1024, parameter 0, shape |f32[256]| at ShapeIndex {}:
 value: <0 p @0> (size=1024,offset=0): f32[256]{0}
allocation 1: size 4, constant:
 value: <1 c @0> (size=4,offset=0): f32[]
allocation 2: size 4, thread-local:
 value: <2 t @0> (size=4,offset=0): f32[]
allocation 3: size 200, output shape is |(f32[32], f32[32])|, maybe-live-out:
 value: <3 out{} @0> (size=16,offset=0): (f32[32]{0}, f32[32]{0})
allocation 4: size 384, preallocated-temp:
 value: <4 a @0> (size=128,offset=0): f32[32]{0}
 value: <5 b @0> (size=128,offset=128): f32[32]{0}
 value: <6 a2 @0> (size=128,offset=0): f32[32]{0}
 value: <7 w{1} (phi) @0> (size=64,offset=256): f32[16]{0}
 value: <8 x{1} (phi) @0> (size=64,offset=256): f32[16]{0}
 value: <9 d @0> (size=128,offset=128): f32[32]{0}
"""
HAND_MADE_RANGES = ["p{}:0-9", "c{}:0-9", "t{}:3-3", "out{}:8-9", "a{}:1-3", "b{}:2-4", "a2{}:3-6", "w{1}:4-5",
                    "x{1}:5-7", "d{}:6-7"]


def test_what_is_planned_and_where_xla_put_it(tmp_path):
    # Parameters, constants and thread-local values are not XLA's to place. a2 is written in
    # place of a (it starts in the step a ends, at a's offset) and the loop's w{1} and x{1}
    # share one slot: each pair is one buffer. d follows b at its offset without meeting it.
    # The output allocation (200 bytes, at 0) and the temp one (at 256, the next multiple of 64)
    # are laid end to end.
    buffers, xla = xla_buffers.problem(dump(tmp_path / "d", HAND_MADE, HAND_MADE_RANGES))
    assert buffers == [(8, 9, 16, 0), (1, 6, 128, 256), (2, 4, 128, 384), (4, 7, 64, 512), (6, 7, 128, 384)]
    assert xla == {"xla_height_bytes": 576, "xla_allocations": 2, "xla_values": 7}
    buffers, xla = xla_buffers.problem(tmp_path / "d", temp_only=True)
    assert buffers == [(1, 6, 128, 0), (2, 4, 128, 128), (4, 7, 64, 256), (6, 7, 128, 128)]
    assert xla == {"xla_height_bytes": 320, "xla_allocations": 1, "xla_values": 6}


def test_merges_reach_a_fixed_point():
    # c meets neither a nor b alone; it meets the buffer a and b make once merged (b overwrites a
    # in place and is wider), which only a second pass sees, since c starts before b.
    a, b, c = (0, 64, 1, 3), (0, 128, 3, 5), (64, 128, 2, 2)
    assert xla_buffers.merge_shared([a, b, c]) == [[0, 128, 1, 5]]
    assert sorted(map(tuple, xla_buffers.merge_shared([a, c]))) == [a, c]


def test_a_real_dump_and_both_placements_valid(tmp_path):
    out = subprocess.run([sys.executable, SCRIPT, LSTM, "--out", tmp_path / "p.csv", "--xla-placement",
                          tmp_path / "xla.csv"], capture_output=True, text=True, check=True).stdout
    assert out == "buffers,xla_height_bytes,xla_allocations,xla_values\n60,6791940,5,149\n"
    with open(tmp_path / "p.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["id", "lower", "upper", "size", "alignment"] and len(rows) == 60
    # XLA's placement is valid read inclusively: XLA's live ranges are, and the merging is right.
    subprocess.run([sys.executable, CHECK, tmp_path / "xla.csv", "--inclusive", "--height", "6791940"], check=True)
    plan = cli("plan", tmp_path / "p.csv", "--lifetimes", "inclusive", "--time-limit", "1", "--format", "csv",
               "--placement", tmp_path / "ours.csv").stdout
    r = next(csv.DictReader(plan.splitlines()))
    assert int(r["lower_bound_bytes"]) <= int(r["height_bytes"]) <= 6791940
    subprocess.run([sys.executable, CHECK, tmp_path / "ours.csv", "--inclusive", "--height", r["height_bytes"]], check=True)
    buffers, xla = xla_buffers.problem(LSTM, temp_only=True)
    assert (len(buffers), xla["xla_height_bytes"], xla["xla_values"]) == (53, 6698116, 127)


@pytest.mark.parametrize("assignment,ranges,message", [
    (HAND_MADE, HAND_MADE_RANGES[:-1], "allocation 4's value d{} has no live range"),
    (HAND_MADE.replace(" value: <9 d @0> (size=128,offset=128)", " value: <9 d @0> (size=128,offset=96)"),
     HAND_MADE_RANGES, "value d{} at offset 96 is not a multiple of 64"),
    (HAND_MADE.replace(" value: <9 d @0> (size=128,offset=128)", " value: <9 d @0> (size=128,offset=320)"),
     HAND_MADE_RANGES, "within the allocation's 384 bytes"),
    (HAND_MADE + "Total bytes used: 1\n", HAND_MADE_RANGES, "-buffer-assignment.txt:17: expected `allocation N"),
    (HAND_MADE, HAND_MADE_RANGES + ["e{}:5-4"], "-live-range.txt:15: e{} ends at step 4, before it starts at 5"),
    (HAND_MADE, HAND_MADE_RANGES + ["e{}:x-4"], "-live-range.txt:15: expected `    NAME{INDEX}:FIRST-LAST`"),
], ids=["no live range", "misaligned", "past its allocation", "unknown line", "backwards range", "bad range"])
def test_refusals_name_the_file_and_place(tmp_path, assignment, ranges, message):
    folder = dump(tmp_path / "d", assignment, ranges)
    done = subprocess.run([sys.executable, SCRIPT, folder, "--out", tmp_path / "p.csv"], capture_output=True, text=True)
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert not (tmp_path / "p.csv").exists()


def test_a_folder_of_several_modules_is_refused(tmp_path):
    folder = dump(tmp_path / "d", HAND_MADE, HAND_MADE_RANGES)
    (folder / "module_0001.jit_g.cpu_after_optimizations-buffer-assignment.txt").write_text(HAND_MADE)
    with pytest.raises(xla_buffers.DumpError, match="expected one \\*buffer-assignment.txt .* found 2"):
        xla_buffers.problem(folder)
