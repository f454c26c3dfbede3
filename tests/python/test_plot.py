"""experiments/scripts/reproduce/plot.py's figures: a line never joins cells that differ in another varied key,
sizes in the unit that fits with plain ticks, axes from zero unless zoomed, legends beside the
data, captions saying what the metric is and on which backend, sorted and log bars, and the
live bytes every policy shares drawn once."""
import argparse
import sys
from pathlib import Path

import pytest

from conftest import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "scripts" / "reproduce"))
import plot  # noqa: E402


@pytest.fixture(scope="module")
def tables(generated, tmp_path_factory):
    d = tmp_path_factory.mktemp("plot")
    trace = generated[0]
    cli("sweep", trace, "-p", "tf_bfc,pytorch_caching", "--vary", "split_ratio=1,2,4", "--vary", "max_split_size_mb=64,256",
        "-o", d / "sweep.csv")
    cli("replay", trace, "-p", "best_fit,tlsf,rmm_pool,tf_bfc", "--backend", "simulated", "--repeat", "0",
        "--timeseries", d / "ts.csv", "-o", d / "replay.csv")
    return d


def sweep_args(tables, **kw):
    a = dict(csv=[str(tables / "sweep.csv")], x="split_ratio", y="peak_reserved_bytes", group="policy", log_x=False,
             log_y=False, zoom=False)
    a.update(kw)
    return argparse.Namespace(**a)


def test_a_line_per_combination_of_the_varied_keys(tables, capsys):
    fig = plot.plot_sweep(sweep_args(tables, y="frag4"))
    ax = fig.axes[0]
    labels = [l.get_label() for l in ax.get_lines()]
    assert "tf_bfc" in labels  # it reads split_ratio, not max_split_size_mb
    assert {"pytorch_caching, max_split_size_mb=64 (does not read split_ratio)",
            "pytorch_caching, max_split_size_mb=256 (does not read split_ratio)"} <= set(labels)
    for line in ax.get_lines():  # no line goes back on itself (a sawtooth)
        xs = list(line.get_xdata())
        assert xs == sorted(xs), line.get_label()
    assert "max_split_size_mb also varies: a line per policy, max_split_size_mb" in capsys.readouterr().err


def test_sizes_in_the_unit_that_fits_from_zero_unless_zoomed(tables):
    fig = plot.plot_sweep(sweep_args(tables))
    ax = fig.axes[0]
    fig.canvas.draw()
    assert ax.get_ylabel() == "peak_reserved_bytes (MiB)"
    assert ax.yaxis.get_offset_text().get_text() == ""  # no 1e7 above the axis
    assert ax.get_ylim()[0] == 0
    zoomed = plot.plot_sweep(sweep_args(tables, zoom=True)).axes[0]
    assert zoomed.get_ylim()[0] > 0
    assert plot.plot_sweep(sweep_args(tables, log_y=True)).axes[0].get_yscale() == "log"


def test_legend_beside_the_data_and_a_caption(tables):
    fig = plot.plot_sweep(sweep_args(tables, y="frag4"))
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert ax.get_legend().get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1
    text = " ".join(t.get_text() for t in fig.texts)
    assert "frag4: peak reserved / peak live - 1" in text and "backend: simulated" in text


def test_bars_sorted_and_on_a_log_scale(tables):
    args = argparse.Namespace(csv=[str(tables / "replay.csv")], y="frag4", sort="desc", log=True)
    ax = plot.plot_bars(args).axes[0]
    names = [t.get_text() for t in ax.get_yticklabels()]
    values = {p.get_y(): p.get_width() for p in ax.patches}
    widths = [values[y] for y in sorted(values)]
    assert widths == sorted(widths, reverse=True) and names[0] == "rmm_pool"
    assert ax.get_xscale() == "log"


def test_live_bytes_every_policy_shares_drawn_once(tables):
    args = argparse.Namespace(csv=[str(tables / "ts.csv")], y="reserved_bytes,live_bytes", policy="", zoom=False)
    ax = plot.plot_timeseries(args).axes[0]
    labels = [l.get_label() for l in ax.get_lines()]
    assert labels.count("live_bytes (every policy)") == 1 and not any(l.endswith(" live_bytes") for l in labels)
    assert sum(l.endswith(" reserved_bytes") for l in labels) == 4
    assert ax.get_ylabel().startswith("bytes (")
