"""What the Python module's tests share: the command line to compare with, generated traces,
and the shared real traces (FRAGLAB_SHARED_TRACES, which `meson test` sets, when present)."""
import io
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import fraglab

# Where `meson test` says the shared traces lie (the shared_traces option); absent, they are skipped.
SHARED = Path(os.environ.get("FRAGLAB_SHARED_TRACES") or "/nonexistent/shared/traces")
FRAGLAB = os.environ.get("FRAGLAB", str(Path(__file__).resolve().parents[2] / "build" / "experiments" / "fraglab"))


def cli(*args, check=True, ok=(0,)):
    """Runs the command line; `check`: its exit status must be one of `ok`."""
    done = subprocess.run([FRAGLAB, *map(str, args)], capture_output=True, text=True)
    if check and done.returncode not in ok:
        raise AssertionError(f"fraglab {' '.join(map(str, args))}: exit {done.returncode}: {done.stderr}")
    return done


def cli_frame(*args, ok=(0,)):
    """The command line's CSV as a DataFrame, numbers read exactly as written."""
    return pd.read_csv(io.StringIO(cli(*args, "--format", "csv", ok=ok).stdout), float_precision="round_trip",
                       keep_default_na=False, na_values=[""], dtype={"trace": str, "policy": str})


def shared(pattern):
    """The shared traces matching `pattern` (empty where ../shared is absent)."""
    return sorted(SHARED.glob(pattern)) if SHARED.is_dir() else []


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    """Two generated traces, native text: phases and random."""
    d = tmp_path_factory.mktemp("traces")
    cli("gen", "phases", "--seed", "3", "--phases", "6", "--objects", "800", "-o", d / "phases.trace")
    cli("gen", "random", "--seed", "4", "--allocations", "20000", "-o", d / "random.trace")
    return [d / "phases.trace", d / "random.trace"]


def assert_same_frame(ours, theirs, ignore=("ns_per_op",)):
    """Every column of the command line's table, with its values, in ours (timing aside)."""
    assert list(ours.columns) == list(theirs.columns)
    assert len(ours) == len(theirs)
    for column in theirs.columns:
        if column in ignore:
            continue
        a = ours[column].tolist()
        b = theirs[column].tolist()
        if ours[column].dtype == bool:
            b = [v == "yes" for v in b]
        a = ["" if isinstance(v, float) and v != v else v for v in a]
        b = ["" if isinstance(v, float) and v != v else v for v in b]
        assert a == b, f"column {column}: {a} != {b}"


__all__ = ["cli", "cli_frame", "shared", "assert_same_frame", "fraglab", "SHARED"]
