"""fraglab.read_trace(s), Trace.from_arrays and Trace.to_arrays: every format the command
line reads, the same checks, and errors that name the file and place."""
import gzip

import numpy as np
import pytest

from conftest import cli, cli_frame, fraglab, shared


def test_every_format_reads_as_the_command_line_reads_it(generated, tmp_path):
    text = generated[0]
    cli("convert", text, tmp_path / "p.fbin")
    cli("convert", text, tmp_path / "p.csv")
    (tmp_path / "p.trace.gz").write_bytes(gzip.compress(text.read_bytes()))
    arrays = fraglab.read_trace(text).to_arrays()
    for path, fmt in [(text, "native text"), (tmp_path / "p.fbin", "native binary"), (tmp_path / "p.csv", "RMM logging CSV"),
                      (tmp_path / "p.trace.gz", "native text")]:
        t = fraglab.read_trace(path)
        assert t.format.startswith(fmt), (path, t.format)
        assert t.name == path.name
        assert len(t) == t.events == cli_frame("info", path)["events"][0]
        # The same events; a binary trace numbers its slots its own way (releases take slot 0).
        assert all(np.array_equal(t.to_arrays()[k], arrays[k]) for k in ("kind", "size", "alignment", "stream")), path


def test_arrays_round_trip_and_replay_as_the_file_does(generated):
    t = fraglab.read_trace(generated[1])
    a = t.to_arrays()
    again = fraglab.Trace.from_arrays(a["kind"], a["id"], a["size"], a["alignment"], a["stream"], name=t.name)
    assert (again.events, again.allocs, again.frees) == (t.events, t.allocs, t.frees)
    assert all(np.array_equal(v, a[k]) for k, v in again.to_arrays().items())
    ours = fraglab.replay(again, "best_fit,tlsf", repeat=0)
    theirs = fraglab.replay(t, "best_fit,tlsf", repeat=0)
    assert ours.drop(columns=["ns_per_op"]).equals(theirs.drop(columns=["ns_per_op"]))


def test_from_arrays_hand_made():
    # a 0 100; a 7 200; f 0; r; a 9 50 (alignment 64, stream 2): ids become slots in order seen
    t = fraglab.Trace.from_arrays(np.array([0, 0, 1, 2, 0]), np.array([0, 7, 0, 0, 9], dtype=np.uint64),
                                  np.array([100, 200, 0, 0, 50]), alignment=np.array([1, 1, 1, 1, 64]),
                                  stream=np.array([0, 0, 0, 0, 2]), device=3, name="hand")
    assert (t.name, t.events, t.allocs, t.frees, t.releases, t.device) == ("hand", 5, 3, 1, 1, 3)
    a = t.to_arrays()
    assert a["id"].tolist() == [0, 1, 0, 3, 2]  # the release has a slot of its own, past the ids'
    assert a["alignment"].tolist() == [1, 1, 0, 0, 64]
    assert a["stream"].tolist() == [0, 0, 0, 0, 2]
    row = fraglab.info(t).iloc[0]
    assert (row["peak_live_bytes"], row["never_freed"], row["aligned_above_16"], row["streams"]) == (300, 2, 1, 2)
    assert fraglab.ALLOC == 0 and fraglab.FREE == 1 and fraglab.RELEASE == 2
    per_event = fraglab.Trace.from_arrays(np.array([0, 1]), np.array([5, 5]), np.array([8, 0]), device=np.array([2, 2]))
    assert per_event.device == 2


@pytest.mark.parametrize("args, error, message", [
    (([0, 3], [1, 1], [8, 8]), ValueError, r"kind\[1\]: expected 0 \(fraglab.ALLOC\), 1 \(fraglab.FREE\) or 2"),
    (([0, 0], [1, 2], [8, 0]), ValueError, r"size\[1\]: expected a size of at least 1 byte, got 0"),
    (([0, 0], [1, 2], [8, -8]), ValueError, r"size\[1\]: expected at least 0, got -8"),
    (([0, 0], [1, 2], [8, 8], [1, 3]), ValueError, r"alignment\[1\]: expected a power of two, got 3"),
    (([0, 0], [1, 2], [8]), ValueError, r"size: expected 2 values \(as many as kind\), got 1"),
    (([0, 0], [1, 2], [8.0, 8.0]), TypeError, r"size: expected an array of integers, got dtype float64"),
    (([[0, 0]], [[1, 2]], [[8, 8]]), ValueError, r"expected a one-dimensional array"),
    (([0, 0], [1, 2], [8, 8], None, None, [0, 1]), ValueError, r"device\[1\]: 1 where device\[0\] is 0: a trace is one device's"),
])
def test_from_arrays_refuses(args, error, message):
    with pytest.raises(error, match=message):
        fraglab.Trace.from_arrays(*[None if a is None else np.array(a) for a in args])


def test_read_errors_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.trace"
    bad.write_text("a 1 100\nf 1\nx 2\n")
    with pytest.raises(fraglab.InputError, match=r"bad.trace:3: expected an event 'a ID SIZE \[ALIGN\] \[STREAM\]', 'f ID' or 'r', got 'x'"):
        fraglab.read_trace(bad)
    assert issubclass(fraglab.InputError, ValueError)
    with pytest.raises(fraglab.InputError, match="missing.trace"):
        fraglab.read_trace(tmp_path / "missing.trace")
    # The command line refuses it with the same words.
    assert "bad.trace:3: expected an event" in cli("info", bad, check=False).stderr


@pytest.mark.skipif(not shared("pytorch/*.pickle"), reason="needs ../shared/traces")
def test_a_snapshot_reads_as_one_trace_a_device():
    for path in shared("pytorch/*.pickle") + shared("pytorch-cases/*.pickle"):
        traces = fraglab.read_traces(path)
        listed = cli_frame("info", path)
        assert [t.name for t in traces] == listed["trace"].tolist()
        assert [t.events for t in traces] == listed["events"].tolist()
        one = fraglab.read_trace(path, device=traces[0].device)
        assert (one.name, one.events) == (traces[0].name, traces[0].events)
        with pytest.raises(fraglab.InputError, match="cuda:99"):
            fraglab.read_trace(path, device=99)


def test_traces_arguments_are_checked(generated):
    t = fraglab.read_trace(generated[0])
    with pytest.raises(ValueError, match="two traces are named phases.trace"):
        fraglab.replay([t, generated[0]], "best_fit")
    with pytest.raises(TypeError, match="expected a fraglab.Trace or a path, got int"):
        fraglab.replay([3], "best_fit")
    with pytest.raises(ValueError, match="no trace given"):
        fraglab.replay([], "best_fit")


def test_write_gives_the_command_line_the_same_trace(generated, tmp_path):
    t = fraglab.read_trace(generated[1])
    for name in ("w.fbin", "w.csv", "w.trace"):
        t.write(tmp_path / name)
        back = fraglab.read_trace(tmp_path / name)
        assert (back.events, back.allocs, back.frees) == (t.events, t.allocs, t.frees)
        assert cli_frame("replay", tmp_path / name, "-p", "best_fit", "--repeat", "0")["peak_reserved_bytes"][0] == \
            fraglab.replay(t, "best_fit", repeat=0)["peak_reserved_bytes"][0]
    with pytest.raises(ValueError, match="tape"):
        t.write(tmp_path / "w.x", to="tape")
    assert not (tmp_path / "w.x").exists()


def test_a_binary_trace_is_the_files_content_when_it_was_read(tmp_path):
    # Two traces of the same counts (one 16 B, one 4096 B allocation, freed): a trace read
    # from the first must replay as the first whatever later happens to its name.
    small, large = tmp_path / "small.trace", tmp_path / "large.trace"
    small.write_text("a 1 16\na 2 176\nf 1\nf 2\n")
    large.write_text("a 1 4096\na 2 8192\nf 1\nf 2\n")
    path = tmp_path / "t.fbin"
    cli("convert", small, path)
    cli("convert", large, tmp_path / "other.fbin")
    t = fraglab.read_trace(path)
    peak = fraglab.replay(t, "best_fit", backend="simulated", repeat=0)["peak_live_bytes"][0]
    assert peak == 192
    (tmp_path / "other.fbin").replace(path)  # another file renamed over its name
    assert fraglab.replay(t, "best_fit", backend="simulated", repeat=0)["peak_live_bytes"][0] == 192
    t = fraglab.read_trace(path)  # now the large one; its file then rewritten in place
    cli("convert", small, tmp_path / "small.fbin")
    with open(path, "r+b") as f:
        f.write((tmp_path / "small.fbin").read_bytes())
    with pytest.raises(fraglab.InputError, match="t.fbin: the file changed after it was opened"):
        fraglab.replay(t, "best_fit", backend="simulated", repeat=0)
