"""fraglab.replay, sweep, capacity, info, verify and plan: the command line's tables, cell for
cell, on generated traces and on every shared real trace; and the command line's refusals."""
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import assert_same_frame, cli, cli_frame, fraglab, shared

HOST_POLICIES = "first_fit,best_fit,tlsf,dlmalloc,tf_bfc"
GPU_POLICIES = "tf_bfc,pytorch_caching,best_fit"


def every_trace(generated):
    return [(p, HOST_POLICIES, "heap") for p in generated + shared("host/*.csv")] + \
           [(p, GPU_POLICIES, "simulated") for p in shared("pytorch/*.pickle") + shared("pytorch-cases/*.pickle")]


def test_replay_equals_the_command_line_on_every_trace(generated):
    for path, policies, backend in every_trace(generated):
        ours = fraglab.replay(path, policies, backend=backend, repeat=0)
        theirs = cli_frame("replay", path, "-p", policies, "--backend", backend, "--repeat", "0")
        assert_same_frame(ours, theirs)
        assert ours["frag4"].dtype == np.float64 and ours["peak_reserved_bytes"].dtype == np.int64


def test_replay_options_reach_the_run(generated):
    args = dict(backend="simulated", capacity="1MiB", params={"split_ratio": 2, "coalesce": "deferred"})
    ours = fraglab.replay(generated, ["tf_bfc", "tlsf@mine"], repeat=0, stop_on_failure=True, **args)
    theirs = cli_frame("replay", *generated, "-p", "tf_bfc,tlsf@mine", "--repeat", "0", "--stop-on-failure",
                       "--backend", "simulated", "--capacity", "1MiB", "--set", "split_ratio=2", "--set", "coalesce=deferred")
    assert_same_frame(ours, theirs)
    assert (ours["failed_allocs"] > 0).all()  # 1 MiB is too little for either trace
    assert ours["policy"].tolist() == ["tf_bfc", "mine"] * 2


def test_timeseries_are_arrays_of_the_samples(generated, tmp_path):
    ours, series = fraglab.replay(generated[0], "best_fit,tlsf", repeat=0, timeseries=True)
    cli("replay", generated[0], "-p", "best_fit,tlsf", "--repeat", "0", "--timeseries", tmp_path / "ts.csv", "-o", tmp_path / "r.csv")
    import pandas as pd
    theirs = pd.read_csv(tmp_path / "ts.csv", dtype={"trace": str, "policy": str})
    assert_same_frame(series, theirs)
    assert all(series[c].dtype == np.int64 for c in series.columns[2:])
    last = series.groupby("policy")["max_reserved_bytes"].max()
    assert last.to_dict() == dict(zip(ours["policy"], ours["peak_reserved_bytes"]))


def test_offline_gap(generated):
    ours = fraglab.replay(generated[0], "best_fit", repeat=0, offline=2)
    theirs = cli_frame("replay", generated[0], "-p", "best_fit", "--repeat", "0", "--offline", "--offline-time-limit", "2")
    # The planner's search is bounded by wall-clock time: what it finds in 2 s depends on the machine's load.
    timed = ("offline_best_bytes", "offline_lower_bytes", "offline_optimal", "gap_to_offline")
    assert_same_frame(ours, theirs, ignore=("ns_per_op",) + timed)
    assert ours["offline_lower_bytes"][0] <= ours["offline_best_bytes"][0] <= ours["peak_reserved_bytes"][0] * 2
    assert ours["offline_optimal"].dtype == bool
    assert ours["gap_to_offline"][0] == pytest.approx(ours["peak_reserved_bytes"][0] / ours["offline_best_bytes"][0] - 1, abs=1e-4)


def test_sweep_equals_the_command_line(generated):
    ours = fraglab.sweep(generated, "tlsf,best_fit", {"sli": [3, 4, 5], "coalesce": "immediate,deferred"})
    theirs = cli_frame("sweep", *generated, "-p", "tlsf,best_fit", "--vary", "sli=3,4,5", "--vary", "coalesce=immediate,deferred")
    assert_same_frame(ours, theirs)
    assert len(ours) == 2 * (3 * 2 + 2)  # best_fit does not read sli: one cell an axis value it reads


def test_capacity_equals_the_command_line(generated):
    ours = fraglab.capacity(generated[0], "best_fit,tlsf", backend="simulated")
    theirs = cli_frame("capacity", generated[0], "-p", "best_fit,tlsf", "--backend", "simulated")
    assert_same_frame(ours, theirs)
    again = fraglab.replay(generated[0], "best_fit,tlsf", backend="simulated", capacity=int(ours["min_capacity_bytes"][0]), repeat=0)
    assert again["failed_allocs"][0] == 0


def test_info_equals_the_command_line(generated):
    paths = generated + shared("host/*.csv") + shared("pytorch/*.pickle")
    assert_same_frame(fraglab.info(paths), cli_frame("info", *paths))


@pytest.mark.skipif(not shared("pytorch/*.pickle"), reason="needs ../shared/traces")
def test_verify_equals_the_command_line():
    for path in shared("pytorch/*.pickle") + shared("pytorch-cases/*.pickle"):
        ours = fraglab.verify(path)
        theirs = cli_frame("verify", path, ok=(0, 3))  # 3: a device recorded nothing to compare
        assert_same_frame(ours, theirs)
    assert (fraglab.verify(shared("pytorch/*.pickle"))["verdict"] == "matched").all()


def test_plan_equals_the_command_line(generated):
    inputs = [generated[0]] + shared("offline/*/B.*.csv")
    ours, placements = fraglab.plan(inputs, 2, placements=True)
    theirs = cli_frame("plan", *inputs, "--time-limit", "2")
    assert_same_frame(ours, theirs, ignore=("seconds", "seconds_to_best", "seconds_to_fit", "search_nodes", "found_by",
                                            "heuristic", "heuristic_bytes", "height_bytes", "lower_bound_bytes", "optimal", "gap_to_lower"))
    for row, p in zip(ours.itertuples(), placements):
        assert len(p) == row.buffers
        assert (p["offset"] + p["size"]).max() == row.height_bytes
        # No two buffers live at once overlap: checked pair by pair over time.
        order = np.argsort(p["lower"].to_numpy())
        lo, up, off, size = (p[c].to_numpy()[order] for c in ("lower", "upper", "offset", "size"))
        for i in range(len(lo)):
            j = np.arange(i + 1, len(lo))
            j = j[lo[j] < up[i]]
            assert not np.any((off[j] < off[i] + size[i]) & (off[i] < off[j] + size[j]))


def test_plan_reads_lifetimes_as_their_writers_mean_them(tmp_path):
    # b [0, 1] and c [1, 2] share step 1 read inclusively (IREE's, SOMAS's), not half-open;
    # times from -1 (SOMAS) come back as written.
    (tmp_path / "t.csv").write_text("id,lower,upper,size\nb,-1,1,4\nc,1,2,4\n")
    half, _ = fraglab.plan(tmp_path / "t.csv", 1, placements=True)
    inclusive, (p,) = fraglab.plan(tmp_path / "t.csv", 1, placements=True, lifetimes="inclusive")
    assert half["height_bytes"][0] == 4 and inclusive["height_bytes"][0] == 8
    assert list(p["lower"]) == [-1, 1] and list(p["upper"]) == [2, 3]  # [lower, upper) in the input's times
    assert_same_frame(inclusive, cli_frame("plan", tmp_path / "t.csv", "--time-limit", "1", "--lifetimes", "inclusive"),
                      ignore=("seconds", "seconds_to_best", "seconds_to_fit", "search_nodes"))
    with pytest.raises(ValueError, match="lifetimes: expected half-open or inclusive, got 'closed'"):
        fraglab.plan(tmp_path / "t.csv", 1, lifetimes="closed")


def test_plan_under_a_node_budget_is_the_command_lines_placement(tmp_path):
    # A perfect packing of 200 buffers (offline_scale.py's), which the heuristics miss: under
    # a budget, with time to spare, the search stops at the same placement as the command
    # line's.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "scripts" / "reproduce"))
    from offline_scale import perfect_packing
    rows = [f"{i},{a},{b},{s}" for i, (a, b, s) in enumerate(perfect_packing(200, seed=3))]
    (tmp_path / "t.csv").write_text("id,lower,upper,size\n" + "\n".join(rows) + "\n")
    ours, (p,) = fraglab.plan(tmp_path / "t.csv", 600, placements=True, node_budget=1000)
    cli("plan", tmp_path / "t.csv", "--time-limit", "600", "--node-budget", "1000", "--placement", tmp_path / "out.csv")
    theirs = pd.read_csv(tmp_path / "out.csv")
    assert list(p["offset"]) == list(theirs["offset"])
    assert 0 < ours["search_nodes"][0] <= 1000 and ours["height_bytes"][0] < ours["heuristic_bytes"][0]
    for bad in (-1, 1.5, "10"):
        with pytest.raises((ValueError, TypeError), match="node_budget"):
            fraglab.plan(tmp_path / "t.csv", 1, node_budget=bad)


def test_plan_warns_when_nothing_fits(generated):
    with pytest.warns(RuntimeWarning, match="no placement within 4096 bytes: none exists"):
        frame = fraglab.plan(generated[0], 1, capacity=4096)
    assert frame["capacity_bytes"][0] == 4096


def test_tune_equals_the_command_line(tmp_path):
    cli("gen", "transformer", "--layers", "2", "--seq-dist", "uniform", "--seq-len", "64", "--seq-len-max", "512", "-o", tmp_path / "tr.fbin")
    table, recommendation = fraglab.tune(tmp_path / "tr.fbin", jobs=2)
    assert_same_frame(table, cli_frame("tune", tmp_path / "tr.fbin"))
    best = table[table["recommended"]]
    assert len(best) == 1 and best["setting"].iloc[0] == (recommendation["conf"] or "(defaults)")
    assert best["peak_reserved_bytes"].iloc[0] == table["peak_reserved_bytes"][1:].min()
    assert recommendation["fits"] and "recommended: PYTORCH_CUDA_ALLOC_CONF=" in recommendation["reasoning"]
    _, none = fraglab.tune(tmp_path / "tr.fbin", capacity="64MiB")
    assert not none["fits"] and "no setting of the 112 tried serves" in none["reasoning"]


@pytest.mark.parametrize("call, message", [
    (lambda t: fraglab.replay(t, "no_such_policy"), "no_such_policy"),
    (lambda t: fraglab.replay(t, "best_fit,best_fit"), "policy best_fit is given twice"),
    (lambda t: fraglab.replay(t, []), r"no policy given"),
    (lambda t: fraglab.replay(t, "best_fit", params={"split_rato": 2}), "params: unknown parameter 'split_rato': did you mean split_ratio"),
    (lambda t: fraglab.replay(t, "best_fit,tf_bfc"), "run on different backends by default"),
    (lambda t: fraglab.replay(t, "best_fit", capacity=0), "capacity: expected at least one byte"),
    (lambda t: fraglab.replay(t, "best_fit", capacity="lots"), "capacity: expected a size such as 4096"),
    (lambda t: fraglab.replay(t, "best_fit", capacity=2**64), "capacity: expected at most 18446744073709551615, got 18446744073709551616"),
    (lambda t: fraglab.replay(t, "best_fit", capacity=-5), "capacity: expected a size, got -5"),
    (lambda t: fraglab.replay(t, "best_fit", jobs=0), "jobs: expected at least 1, got 0"),
    (lambda t: fraglab.sweep(t, "tf_bfc", {"split_ratio": [1, 2]}, jobs=-1), "jobs: expected a whole number, got '-1'"),
    (lambda t: fraglab.capacity(t, "best_fit", jobs=2**40), "jobs: expected at most 4294967295"),
    (lambda t: fraglab.replay(t, "best_fit", jobs="2"), "jobs: expected a whole number, got str"),
    (lambda t: fraglab.replay(t, "best_fit", params={"backoff": float("nan")}), "parameter backoff: expected a finite number, got 'nan'"),
    (lambda t: fraglab.replay(t, "best_fit", free_by="name"), "--free-by: expected reference or address"),
    (lambda t: fraglab.replay(t, "best_fit", backend="tape"), "tape"),
    (lambda t: fraglab.replay(t, "best_fit", offline=-1), "offline: expected True or a positive number of seconds"),
    (lambda t: fraglab.sweep(t, "tlsf", {"sli": [3, 3]}), "--vary: sli=3 is given twice"),
    (lambda t: fraglab.sweep(t, "tlsf", {}), "no --vary given"),
    (lambda t: fraglab.sweep(t, "tlsf", {"sli": [3]}, params={"sli": 4}), "--set sli and --vary sli"),
    (lambda t: fraglab.capacity(t, "best_fit", params={"sli": 4}), "--set sli: no policy of this run reads it"),
    (lambda t: fraglab.plan(t, 0), "time_limit: expected a positive number of seconds"),
])
def test_refusals_are_the_command_lines(generated, call, message):
    with pytest.raises(ValueError, match=message):
        call(generated[0])


def test_verify_refuses_what_is_not_a_snapshot(generated):
    with pytest.raises(fraglab.InputError, match="not a PyTorch memory snapshot"):
        fraglab.verify(generated[0])
    with pytest.raises(ValueError, match=r"only pytorch_caching and pytorch_expandable \(against PyTorch snapshots\) and tf_bfc"):
        fraglab.verify(generated[0], policy="tlsf")


def tf_line(thread, message):
    return f"I0000 00:00:1796613341.070621    {thread} bfc_allocator.cc:328] {message}\n"


def test_a_tensorflow_log_is_read_by_allocator_and_verified(tmp_path):
    # Two allocators; in the CPU one, a 1000 B request takes the region's first 1024 B and a
    # second request the next: TF's decisions, which tf_bfc makes too.
    log = tmp_path / "run.log"
    cpu, gpu = "bfc_cpu_allocator_for_gpu", "GPU_0_bfc"
    text = tf_line(1, f"Extending allocation by 2.00MiB bytes for {cpu}.") + tf_line(1, "Allocated memory at 0x1000040 to 0x1200040")
    text += tf_line(2, f"Extending allocation by 1000.00MiB bytes for {gpu}.") + tf_line(2, "Allocated memory at 0x7e0000000000 to 0x7e003e800000")
    for thread, name, size, ptr in [(1, cpu, 1000, 0x1000040), (2, gpu, 512, 0x7e0000000000), (1, cpu, 300, 0x1000440)]:
        text += tf_line(thread, f"Returning: {ptr:#x}") + tf_line(thread, f"[mem-debug] AllocateRaw,{name},{size},{ptr:#x},")
    log.write_text(text)
    traces = fraglab.read_traces(log)
    assert [t.allocator for t in traces] == [cpu, gpu]
    assert [t.name for t in traces] == [f"run.log@{cpu}", f"run.log@{gpu}"]
    assert fraglab.read_trace(log, device=gpu).allocs == 1
    with pytest.raises(ValueError, match="a TF log.s allocators.: give device=N or device=.NAME."):
        fraglab.read_trace(log)
    table = fraglab.verify(log, device=cpu)
    assert list(table["verdict"]) == ["matched"]
    assert list(table["addresses_matched"]) == [2]
    with pytest.raises(fraglab.InputError, match="no allocator GPU_1_bfc in it"):
        fraglab.verify(log, device="GPU_1_bfc")


def test_policies_and_their_parameters():
    listed = fraglab.policies()
    assert {"tf_bfc", "pytorch_caching", "best_fit", "tlsf"} <= set(listed["name"])
    assert set(listed["kind"]) == {"preset", "composition"}
    tlsf = fraglab.policy("tlsf:sli=3")
    params = tlsf["parameters"].set_index("key")
    assert params.loc["sli", "value"] == "3" and params.loc["sli", "default"] != "3"
    assert tlsf["backend"] == "heap"
    keys = fraglab.parameters()
    assert {"split_ratio", "sli", "capacity"} - set(keys["key"]) <= {"capacity"}
    assert ("tree", "best") in fraglab.composable_pairs()
    with pytest.raises(ValueError):
        fraglab.policy("no_such_policy")


def test_run_returns_any_commands_table(generated):
    import csv
    import io
    for args in (["replay", generated[0], "-p", "best_fit,tlsf", "--repeat", "0"],
                 ["sweep", generated[0], "-p", "tlsf", "--vary", "sli=3,4"],
                 ["capacity", generated[0], "-p", "best_fit"],
                 ["info", *generated],
                 ["replay", generated[0], "-p", "tlsf", "--repeat", "0", "--columns", "policy,frag4", "--sort", "frag4"]):
        args = [str(a) for a in args]
        text = fraglab.run(args, text=True)
        assert text == list(csv.DictReader(io.StringIO(cli(*args, "--format", "csv").stdout))), args
        assert_same_frame(fraglab.run(args), cli_frame(*args))
    with pytest.raises(ValueError, match="leave out -o/--output"):
        fraglab.run(["replay", str(generated[0]), "-p", "tlsf", "-o", "x.csv"])
    with pytest.raises(ValueError, match="fraglab replay: unrecognised option '--no-such-option'"):
        fraglab.run(["replay", str(generated[0]), "-p", "tlsf", "--no-such-option"])
    with pytest.raises(RuntimeError, match="fraglab nosuch exited 2"):
        fraglab.run(["nosuch"])
    with pytest.raises(fraglab.InputError, match="missing.trace"):
        fraglab.run(["replay", "missing.trace", "-p", "tlsf"])


def test_the_results_scripts_run_fraglab_through_the_module(generated):
    import sys
    from conftest import FRAGLAB
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "scripts" / "reproduce"))
    import results_io
    assert results_io._module_beside(FRAGLAB) is not None, "the build's module beside its fraglab"
    args = ["replay", str(generated[0]), "-p", "tf_bfc,best_fit", "--backend", "simulated", "--repeat", "0"]
    import csv
    import io
    assert results_io.fraglab_rows(FRAGLAB, args) == list(csv.DictReader(io.StringIO(cli(*args, "--format", "csv").stdout)))
