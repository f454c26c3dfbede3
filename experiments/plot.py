#!/usr/bin/python3
"""Figures from fraglab's CSV output, with Debian's python3-matplotlib (no other packages).

  plot.py sweep CSV... -x KEY -y METRIC [--group COLUMN] [--log-x] -o OUT.png|OUT.svg
      a line per policy (or --group) of METRIC against the varied KEY, one panel per trace:
      the output of `fraglab sweep --format csv` (or `fraglab merge`)
  plot.py bars CSV... -y METRIC -o OUT
      METRIC per policy as bars, one panel per trace: `fraglab replay --format csv`
  plot.py timeseries CSV -o OUT [-y COLUMN,COLUMN...] [--policy P,...]
      the columns (default reserved_bytes,live_bytes) against events, a line per policy, one
      panel per trace: `fraglab replay --timeseries FILE`

The figure's format follows OUT's extension. Output is written to a temporary file and
renamed, and SVG output is byte-identical from run to run (fixed hash salt, no date).
A missing column or a file that is not fraglab's CSV is an error naming FILE:LINE.
"""

import argparse
import io
import os
import sys
from collections import OrderedDict

import matplotlib

from results_io import InputError, output_file, read_table, write_atomically

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "fraglab"
import matplotlib.pyplot as plt  # noqa: E402 (the backend must be chosen first)


# The results scripts' tables name the trace `workload` or `program`.
TRACE_ALIASES = ("workload", "program")


def read_rows(paths, required):
    """Rows of every CSV as dicts; every file must have the `required` columns, `trace` read
    from a column of another name the results scripts give it."""
    rows = []
    for path in paths:
        recorded, header_rows = read_table(path, [c for c in required if c != "trace"])
        for row in header_rows:
            if "trace" not in row:
                alias = next((a for a in TRACE_ALIASES if a in row), None)
                if alias is None and "trace" in required:
                    raise InputError(f"{row['__where'].rsplit(':', 1)[0]}:1: expected the column trace "
                                     f"(or {' or '.join(TRACE_ALIASES)})")
                row["trace"] = row.get(alias, "")
        rows += header_rows
    if not rows:
        raise InputError(f"{', '.join(paths)}: no rows to plot")
    return rows


UNITS = {"": 1, "B": 1, "K": 2**10, "KiB": 2**10, "M": 2**20, "MiB": 2**20, "G": 2**30, "GiB": 2**30, "T": 2**40,
         "TiB": 2**40, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def number(row, column):
    """A cell as a number, as the command line reads values: sizes with units (512MiB, 1.5GB)
    and `unlimited` (infinity)."""
    text = row[column].strip()
    if text == "unlimited":
        return float("inf")
    digits = len(text) - len(text.lstrip("0123456789.+-e"))
    while digits > 0 and text[digits - 1] in "e+-":  # "1e" of "1eB" is not a number's end
        digits -= 1
    unit = text[digits:].strip()
    try:
        if unit in UNITS:
            return float(text[:digits]) * UNITS[unit]
        return float(text)
    except ValueError as e:
        raise InputError(f"{row['__where']}: expected a number in column {column}, got '{row[column]}'") from e


def grouped(rows, key):
    """OrderedDict of key value -> rows, in order of first appearance (the CSV's order)."""
    groups = OrderedDict()
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups


def panels(count):
    fig, axes = plt.subplots(count, 1, figsize=(8, 3.2 * count), squeeze=False)
    return fig, [a[0] for a in axes]


def plot_sweep(args):
    rows = read_rows(args.csv, ["trace", args.group, args.x, args.y])
    by_trace = grouped(rows, "trace")
    fig, axes = panels(len(by_trace))
    for ax, (trace, trace_rows) in zip(axes, by_trace.items()):
        for i, (label, series) in enumerate(grouped(trace_rows, args.group).items()):
            # A policy that does not read the varied key has an empty cell there: its value
            # holds at every x, a flat dashed line.
            flat = [number(r, args.y) for r in series if not r[args.x].strip()]
            points = sorted((number(r, args.x), number(r, args.y)) for r in series if r[args.x].strip())
            unlimited = [p for p in points if p[0] == float("inf")]
            points = [p for p in points if p[0] != float("inf")]
            if unlimited:
                print(f"plot.py: {trace}, {label}: {args.x}=unlimited has no place on the axis; left out", file=sys.stderr)
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label, color=f"C{i % 10}")
            for y in flat:
                ax.axhline(y, linestyle="--", label=f"{label} (does not read {args.x})", color=f"C{i % 10}")
        ax.set_title(trace)
        ax.set_xlabel(args.x)
        ax.set_ylabel(args.y)
        if args.log_x:
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    return fig


def plot_bars(args):
    rows = read_rows(args.csv, ["trace", "policy", args.y])
    by_trace = grouped(rows, "trace")
    fig, axes = panels(len(by_trace))
    for ax, (trace, trace_rows) in zip(axes, by_trace.items()):
        names = [r["policy"] for r in trace_rows]
        ax.barh(names, [number(r, args.y) for r in trace_rows])
        ax.invert_yaxis()  # first policy on top, as in the table
        ax.set_title(trace)
        ax.set_xlabel(args.y)
        ax.grid(True, axis="x", alpha=0.3)
    return fig


def plot_timeseries(args):
    columns = [c for c in args.y.split(",") if c]
    rows = read_rows(args.csv, ["trace", "policy", "event"] + columns)
    wanted = set(args.policy.split(",")) if args.policy else None
    if wanted:
        rows = [r for r in rows if r["policy"] in wanted]
        if not rows:
            raise InputError(f"no rows for the policies {args.policy}")
    by_trace = grouped(rows, "trace")
    fig, axes = panels(len(by_trace))
    styles = ["-", "--", ":", "-."]
    for ax, (trace, trace_rows) in zip(axes, by_trace.items()):
        for i, (policy, series) in enumerate(grouped(trace_rows, "policy").items()):
            events = [number(r, "event") for r in series]
            for j, column in enumerate(columns):
                ax.plot(events, [number(r, column) / 2**20 for r in series], styles[j % len(styles)],
                        color=f"C{i % 10}", label=f"{policy} {column}")
        ax.set_title(trace)
        ax.set_xlabel("events")
        ax.set_ylabel("MiB")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    return fig


FIGURE_FORMATS = ("png", "svg", "pdf")


def figure_format(path):
    return os.path.splitext(path)[1].lower().lstrip(".")


def figure_file(path):
    """argparse type of -o: a file whose name says its format, in a directory that exists,
    checked before any CSV is read or anything drawn."""
    output_file(path)
    if figure_format(path) not in FIGURE_FORMATS:
        raise argparse.ArgumentTypeError(f"{path}: expected a .png, .svg or .pdf file name")
    return path


def save_atomically(fig, out):
    ext = figure_format(out)
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format=ext, dpi=120, metadata={"Date": None} if ext == "svg" else None)
    write_atomically(out, image.getvalue())


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="kind", required=True)
    s = sub.add_parser("sweep", help="a metric against a varied parameter", allow_abbrev=False)
    s.add_argument("csv", nargs="+")
    s.add_argument("-x", required=True, help="the varied key (a column of the sweep)")
    s.add_argument("-y", required=True, help="the metric, e.g. frag4 or peak_reserved_bytes")
    s.add_argument("--group", default="policy", help="one line per value of this column")
    s.add_argument("--log-x", action="store_true", help="a logarithmic x axis")
    s.add_argument("-o", "--output", required=True, type=figure_file)
    b = sub.add_parser("bars", help="a metric per policy", allow_abbrev=False)
    b.add_argument("csv", nargs="+")
    b.add_argument("-y", required=True)
    b.add_argument("-o", "--output", required=True, type=figure_file)
    t = sub.add_parser("timeseries", help="memory over time", allow_abbrev=False)
    t.add_argument("csv", nargs="+")
    t.add_argument("-y", default="reserved_bytes,live_bytes")
    t.add_argument("--policy", default="", help="only these policies (comma-separated)")
    t.add_argument("-o", "--output", required=True, type=figure_file)
    args = parser.parse_args(argv)
    try:
        fig = {"sweep": plot_sweep, "bars": plot_bars, "timeseries": plot_timeseries}[args.kind](args)
        save_atomically(fig, args.output)
    except InputError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
