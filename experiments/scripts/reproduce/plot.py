#!/usr/bin/python3
"""Figures from fraglab's CSV output, with Debian's python3-matplotlib (no other packages).

  plot.py sweep CSV... -x KEY -y METRIC [--group COLUMN[,COLUMN...]] [--log-x] [--log-y] [--zoom] -o OUT
      a line per policy (or per --group columns) of METRIC against the varied KEY, one panel per
      trace: the output of `fraglab sweep --format csv` (or `fraglab merge`). Every other column
      the sweep varies joins the groups, so that no line joins cells that differ in it
  plot.py bars CSV... -y METRIC [--sort asc|desc] [--log] -o OUT
      METRIC per policy as bars, one panel per trace: `fraglab replay --format csv`
  plot.py timeseries CSV -o OUT [-y COLUMN,COLUMN...] [--policy P,...]
      the columns (default reserved_bytes,live_bytes) against events, a line per policy, one
      panel per trace: `fraglab replay --timeseries FILE`

Sizes are drawn in the binary unit that fits them; an axis starts at zero unless --zoom (or a
log scale) is asked for; legends sit beside the data; a caption under the figure says what the
metric measures (docs/metrics.md) and on which backend it ran. The figure's format follows OUT's
extension. Output is written to a temporary file and
renamed, and SVG output is byte-identical from run to run (fixed hash salt, no date).
A missing column or a file that is not fraglab's CSV is an error naming FILE:LINE.
"""

import argparse
import io
import os
import re
import sys
import textwrap
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


def panels(count, height=3.2):
    fig, axes = plt.subplots(count, 1, figsize=(10, height * count + 0.6), squeeze=False)
    return fig, [a[0] for a in axes]


METRICS_GUIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "metrics.md")


def definitions():
    """Column -> what it measures, from docs/metrics.md's tables (`| `a`, `b` | meaning | ... |`)."""
    found = {}
    try:
        lines = open(METRICS_GUIDE, encoding="utf-8").read().splitlines()
    except OSError:
        return found
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            for name in re.findall(r"`([a-z0-9_]+)`", cells[0]):
                found.setdefault(name, cells[1].replace("`", ""))
    return found


def caption(fig, rows, metrics):
    """What each metric measures and the backend the rows ran on, under the figure."""
    known = definitions()
    parts = [f"{m}: {known[m]}" for m in metrics if m in known]
    backends = sorted({r["backend"] for r in rows if r.get("backend")})
    if backends:
        parts.append(f"backend: {', '.join(backends)}")
    if parts:
        fig.text(0.01, 0.005, textwrap.fill(". ".join(parts), 150), fontsize="x-small", va="bottom", ha="left")


BINARY_UNITS = [("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1)]


def size_unit(column, values):
    """(label suffix, divisor): a byte column in the binary unit its largest value fits."""
    if not (column.endswith("_bytes") or column in ("granularity", "peak_reserved_unlimited")):
        return "", 1
    top = max((abs(v) for v in values if v == v and v != float("inf")), default=0)
    name, size = next(((n, s) for n, s in BINARY_UNITS if top >= s), ("B", 1))
    return f" ({name})", size


def plain_axis(ax, axis, log, zoom, values):
    """Plain tick labels (no offset, no 1e10), log or linear, from zero unless zoomed."""
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log" if log else "linear")
    if log:
        # Ticks at 1, 2 and 5 of each decade, written as plain numbers (0.2, not 2x10^-1).
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
        scale = ax.xaxis if axis == "x" else ax.yaxis
        scale.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        scale.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v):,}" if v >= 1 and v == int(v) else f"{v:g}"))
        scale.set_minor_formatter(NullFormatter())
        return
    ax.ticklabel_format(axis=axis, style="plain", useOffset=False)
    if not zoom and values and min(values) >= 0:
        if axis == "x":
            ax.set_xlim(left=0)
        else:
            ax.set_ylim(bottom=0)


def legend_beside(ax):
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def varied_columns(rows, x):
    """The sweep's other varied keys: columns between policy and events (fraglab sweep's layout)
    that take more than one value."""
    columns = list(rows[0].keys())
    if "policy" not in columns or "events" not in columns:
        return []
    between = columns[columns.index("policy") + 1:columns.index("events")]
    return [c for c in between if c != x and len({r[c] for r in rows}) > 1]


def plot_sweep(args):
    group = [g for g in args.group.split(",") if g]
    rows = read_rows(args.csv, ["trace", *group, args.x, args.y])
    # A line through cells that differ in another varied key would zigzag between them: each
    # such key joins the groups, one line per combination.
    others = [c for c in varied_columns(rows, args.x) if c not in group]
    if others:
        print(f"plot.py: {', '.join(others)} also var{'ies' if len(others) == 1 else 'y'}: a line per "
              f"{', '.join(group + others)}", file=sys.stderr)
    keys = group + others
    for r in rows:  # a key the row's policy does not read (an empty cell) is left out of its label
        r["__line"] = ", ".join(r[k] if k == "policy" or len(keys) == 1 else f"{k}={r[k]}" for k in keys if r[k])
    by_trace = grouped(rows, "trace")
    fig, axes = panels(len(by_trace))
    unit, divisor = size_unit(args.y, [number(r, args.y) for r in rows])
    for ax, (trace, trace_rows) in zip(axes, by_trace.items()):
        ys = []
        for i, (label, series) in enumerate(grouped(trace_rows, "__line").items()):
            # A policy that does not read the varied key has an empty cell there: its value
            # holds at every x, a flat dashed line.
            flat = [number(r, args.y) / divisor for r in series if not r[args.x].strip()]
            points = sorted((number(r, args.x), number(r, args.y) / divisor) for r in series if r[args.x].strip())
            unlimited = [p for p in points if p[0] == float("inf")]
            points = [p for p in points if p[0] != float("inf")]
            if unlimited:
                print(f"plot.py: {trace}, {label}: {args.x}=unlimited has no place on the axis; left out", file=sys.stderr)
            if points:
                # Ten colours, then the same ten dashed, then dotted: no two lines alike.
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label, color=f"C{i % 10}",
                        linestyle=["-", "--", ":"][i // 10 % 3])
            for y in flat:
                ax.axhline(y, linestyle="--", label=f"{label} (does not read {args.x})", color=f"C{i % 10}")
            ys += [p[1] for p in points] + flat
        ax.set_title(trace)
        ax.set_xlabel(args.x)
        ax.set_ylabel(args.y + unit)
        plain_axis(ax, "x", args.log_x, True, [])
        plain_axis(ax, "y", args.log_y, args.zoom, ys)
        ax.grid(True, alpha=0.3)
        legend_beside(ax)
    caption(fig, rows, [args.y, args.x])
    return fig


def plot_bars(args):
    rows = read_rows(args.csv, ["trace", "policy", args.y])
    by_trace = grouped(rows, "trace")
    most = max(len(v) for v in by_trace.values())
    fig, axes = panels(len(by_trace), height=max(2.5, 0.28 * most + 1.0))
    unit, divisor = size_unit(args.y, [number(r, args.y) for r in rows])
    for ax, (trace, trace_rows) in zip(axes, by_trace.items()):
        bars = [(r["policy"], number(r, args.y) / divisor) for r in trace_rows]
        if args.sort:
            bars.sort(key=lambda b: b[1], reverse=args.sort == "desc")
        ax.barh([b[0] for b in bars], [b[1] for b in bars])
        ax.invert_yaxis()  # first bar on top, as in the table
        ax.set_title(trace)
        ax.set_xlabel(args.y + unit)
        plain_axis(ax, "x", args.log, False, [b[1] for b in bars])
        ax.grid(True, axis="x", alpha=0.3)
    caption(fig, rows, [args.y])
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
    unit, divisor = size_unit(columns[0] if columns else "", [number(r, c) for r in rows for c in columns])
    styles = ["-", "--", ":", "-."]
    for ax, (trace, trace_rows) in zip(axes, by_trace.items()):
        policies = grouped(trace_rows, "policy")
        for j, column in enumerate(columns):
            series = {p: ([number(r, "event") for r in s], [number(r, column) / divisor for r in s]) for p, s in policies.items()}
            # What the trace decides (live bytes) is the same under every policy: one line.
            if len(series) > 1 and len({repr(v) for v in series.values()}) == 1:
                events, values = next(iter(series.values()))
                ax.plot(events, values, styles[j % len(styles)], color="black", label=f"{column} (every policy)")
                continue
            for i, (policy, (events, values)) in enumerate(series.items()):
                ax.plot(events, values, styles[j % len(styles)], color=f"C{i % 10}", label=f"{policy} {column}")
        ax.set_title(trace)
        ax.set_xlabel("events")
        ax.set_ylabel(("bytes" if unit else ", ".join(columns)) + unit)
        plain_axis(ax, "x", False, True, [])
        plain_axis(ax, "y", False, args.zoom, [number(r, c) for r in trace_rows for c in columns])
        ax.grid(True, alpha=0.3)
        legend_beside(ax)
    caption(fig, rows, columns)
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
    fig.tight_layout(rect=(0, 0.04, 1, 1))  # room for the caption
    image = io.BytesIO()
    # "tight" keeps the legends beside the panels in the picture.
    fig.savefig(image, format=ext, dpi=120, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
    write_atomically(out, image.getvalue())


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="kind", required=True)
    s = sub.add_parser("sweep", help="a metric against a varied parameter", allow_abbrev=False)
    s.add_argument("csv", nargs="+")
    s.add_argument("-x", required=True, help="the varied key (a column of the sweep)")
    s.add_argument("-y", required=True, help="the metric, e.g. frag4 or peak_reserved_bytes")
    s.add_argument("--group", default="policy", help="one line per value of these columns (comma-separated); the "
                                                     "sweep's other varied columns join them")
    s.add_argument("--log-x", action="store_true", help="a logarithmic x axis")
    s.add_argument("--log-y", action="store_true", help="a logarithmic y axis")
    s.add_argument("--zoom", action="store_true", help="the y axis to the data, not from zero")
    s.add_argument("-o", "--output", required=True, type=figure_file)
    b = sub.add_parser("bars", help="a metric per policy", allow_abbrev=False)
    b.add_argument("csv", nargs="+")
    b.add_argument("-y", required=True)
    b.add_argument("--sort", choices=["asc", "desc"], help="bars in order of their value")
    b.add_argument("--log", action="store_true", help="a logarithmic value axis (an outlier flattens the rest)")
    b.add_argument("-o", "--output", required=True, type=figure_file)
    t = sub.add_parser("timeseries", help="memory over time", allow_abbrev=False)
    t.add_argument("csv", nargs="+")
    t.add_argument("-y", default="reserved_bytes,live_bytes")
    t.add_argument("--policy", default="", help="only these policies (comma-separated)")
    t.add_argument("--zoom", action="store_true", help="the y axis to the data, not from zero")
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
