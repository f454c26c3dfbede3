"""fraglab view in a real browser: headless Chromium, the network cut off, opens the page with
no console error, a panel a policy, and at any event the slider points at the state that
`fraglab dump --at N` reports (its chunk count and largest free chunk); a screenshot is not
blank. Skipped, saying why, where Chromium or Selenium is missing (.ci/install-deps tests
installs chromium, chromium-driver and python3-selenium)."""
import csv
import io
import json
import re
import shutil

import pytest

from conftest import cli

webdriver = pytest.importorskip("selenium.webdriver", reason="python3-selenium is not installed")
if not shutil.which("chromedriver") or not (shutil.which("chromium") or shutil.which("chromium-browser")):
    pytest.skip("chromium and chromium-driver are not installed", allow_module_level=True)

POLICIES = ["best_fit", "tlsf", "tf_bfc"]
AT = "1,1001,1003"  # events asked for with --at, besides the spread ones


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--proxy-server=127.0.0.1:9", "--window-size=1400,1800"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.webdriver.chrome.service import Service
    driver = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=options)
    driver.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def page(generated, tmp_path_factory):
    out = tmp_path_factory.mktemp("view") / "view.html"
    cli("view", generated[0], "-p", ",".join(POLICIES), "--backend", "simulated", "--at", AT, "-o", out)
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', out.read_text(), re.S).group(1))
    return out, data


def dump_at(trace, policy, event):
    rows = list(csv.DictReader(io.StringIO(cli("dump", trace, "-p", policy, "--backend", "simulated", "--at", event,
                                               "--format", "csv").stdout)))
    return len(rows), max([int(r["size"]) for r in rows if r["in_use"] == "0"] or [0])


def test_the_page_opens_offline_with_no_error_and_a_panel_a_policy(browser, page):
    path, _ = page
    browser.get(path.as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    panels = browser.find_elements("css selector", ".panel")
    assert [p.get_attribute("data-policy") for p in panels] == POLICIES
    assert "fetch" not in path.read_text() and "<script src" not in path.read_text()


def test_scrubbing_shows_the_state_dump_reports(browser, page, generated):
    path, data = page
    browser.get(path.as_uri())
    peak = data["points"].index(data["policies"][0]["peak_event"])
    asked = [data["points"].index(int(n)) for n in AT.split(",")]
    for index in [0, len(data["points"]) // 3, peak, len(data["points"]) - 1] + asked:
        browser.execute_script("const s = document.getElementById('slider'); s.value = arguments[0];"
                               "s.dispatchEvent(new Event('input'));", index)
        for panel, policy in zip(browser.find_elements("css selector", ".panel"), POLICIES):
            state = panel.find_element("css selector", ".state")
            event = int(state.get_attribute("data-event"))
            assert event == data["points"][index]
            shown = (int(state.get_attribute("data-chunks")), int(state.get_attribute("data-largest-free")))
            assert shown == dump_at(generated[0], policy, event), (policy, event)
            assert f"event {event} of {data['events']}" in state.text
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def drawn_pixels(browser, selector):
    return browser.execute_script("return [...document.querySelectorAll(arguments[0])].map(c => {"
                                  "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                                  "let n = 0; for (let i = 3; i < d.length; i += 4) n += d[i] > 0; return n; });", selector)


def test_the_overlay_draws_every_policy_and_switches_its_metric(browser, page):
    from selenium.webdriver.support.ui import Select
    path, data = page
    browser.get(path.as_uri())
    legend = browser.find_elements("css selector", "#overlay-legend b")
    assert [b.get_attribute("data-policy") for b in legend] == POLICIES
    chart = browser.find_element("css selector", "#overlay-chart")
    for metric, column in (("reserved", 3), ("live", 1), ("allocated", 2)):
        Select(browser.find_element("css selector", "#metric")).select_by_value(metric)
        assert chart.get_attribute("data-metric") == metric
        # Its axis reaches the highest of every policy's series of that metric.
        assert int(chart.get_attribute("data-top")) == max(s[column] for p in data["policies"] for s in p["series"])
        assert drawn_pixels(browser, "#overlay-chart")[0] > 1000
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_dragging_across_a_chart_zooms_every_chart_and_the_button_undoes_it(browser, page):
    from selenium.webdriver.common.action_chains import ActionChains
    path, data = page
    browser.get(path.as_uri())
    charts = browser.find_elements("css selector", "canvas.series")
    whole = [int(c.get_attribute("data-top")) for c in charts]
    columns = [int(m.get_attribute("data-states")) for m in browser.find_elements("css selector", "canvas.map")]
    first = charts[0]
    width = first.size["width"]
    # From 10% to 40% of the chart, measured from its centre.
    ActionChains(browser).move_to_element_with_offset(first, int(-0.4 * width), 0).click_and_hold() \
        .move_by_offset(int(0.3 * width), 0).release().perform()
    body = browser.find_element("css selector", "body")
    zoom_from, zoom_to = int(body.get_attribute("data-zoom-from")), int(body.get_attribute("data-zoom-to"))
    events = data["events"]
    assert abs(zoom_from - 0.1 * events) < 0.03 * events and abs(zoom_to - 0.4 * events) < 0.03 * events
    # Every chart shows those events only: no higher than before, the maps fewer states.
    for chart, top in zip(charts, whole):
        assert int(chart.get_attribute("data-top")) <= top
    zoomed = [int(m.get_attribute("data-states")) for m in browser.find_elements("css selector", "canvas.map")]
    inside = sum(zoom_from <= e <= zoom_to for e in data["points"])
    assert zoomed == [inside] * len(POLICIES) and inside < columns[0]
    browser.find_element("css selector", "#unzoom").click()
    assert (int(body.get_attribute("data-zoom-from")), int(body.get_attribute("data-zoom-to"))) == (0, events)
    assert [int(c.get_attribute("data-top")) for c in charts] == whole
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_a_screenshot_is_not_blank(browser, page):
    from matplotlib import image
    path, _ = page
    browser.get(path.as_uri())
    pixels = image.imread(io.BytesIO(browser.get_screenshot_as_png()), format="png")
    assert pixels.std() > 0.05
    # The maps are drawn: a canvas that stayed empty reads back as one colour.
    drawn = browser.execute_script("return [...document.querySelectorAll('canvas.map')].map(c => {"
                                   "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                                   "let n = 0; for (let i = 3; i < d.length; i += 4) n += d[i] > 0; return n; });")
    assert len(drawn) == len(POLICIES) and all(n > 1000 for n in drawn)


MIB = 1 << 20


def frames(function, file, line):
    """A recorded stack, innermost first: the stack capture, PyTorch's Python, the program."""
    return [{"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
            {"name": "_call_impl", "filename": "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", "line": 1790},
            {"name": function, "filename": file, "line": line}]


def snapshot_with_frames(path):
    """A 20 MiB segment: A (8 MiB), B (6 MiB) and C (5 MiB, its segment's last 6 MiB unsplit);
    B is freed and E (2 MiB) takes its place, from another call site at the same address; then
    D (10 MiB) needs a segment of its own: the peak, where the 4 MiB left of B's place is held
    by E before it and C after it."""
    base, second = 0x7F0000000000, 0x7F0004000000
    sites = {"A": ("make_a", "/home/me/model.py", 10), "B": ("make_b", "/home/me/train.py", 20),
             "C": ("<lambda>", "/home/me/train.py", 30), "D": ("make_d", "/home/me/train.py", 40),
             "E": ("make_e", "/home/me/train.py", 50)}
    at = {"A": (base, 8 * MIB), "B": (base + 8 * MIB, 6 * MIB), "C": (base + 14 * MIB, 5 * MIB),
          "D": (second, 10 * MIB), "E": (base + 8 * MIB, 2 * MIB)}

    def event(action, name):
        return {"action": action, "addr": at[name][0], "size": at[name][1], "stream": 0, "frames": frames(*sites[name])}

    def block(name, size=None):
        return {"address": at[name][0], "size": size or at[name][1], "requested_size": at[name][1],
                "state": "active_allocated", "frames": frames(*sites[name])}

    segments = [{"address": base, "total_size": 20 * MIB, "stream": 0, "segment_type": "large", "device": 0,
                 "blocks": [block("A"), block("E"),
                            {"address": base + 10 * MIB, "size": 4 * MIB, "requested_size": 0, "state": "inactive"},
                            block("C", size=6 * MIB)]},
                {"address": second, "total_size": 10 * MIB, "stream": 0, "segment_type": "large", "device": 0,
                 "blocks": [block("D")]}]
    trace = [{"action": "segment_alloc", "addr": base, "size": 20 * MIB, "stream": 0},
             event("alloc", "A"), event("alloc", "B"), event("alloc", "C"), event("free_completed", "B"),
             event("alloc", "E"), {"action": "segment_alloc", "addr": second, "size": 10 * MIB, "stream": 0},
             event("alloc", "D")]
    import pickle
    path.write_bytes(pickle.dumps({"segments": segments, "device_traces": [trace]}, protocol=4))


def test_the_peak_names_the_call_sites_of_the_blocks_holding_each_hole(browser, tmp_path):
    snapshot_with_frames(tmp_path / "frames.pickle")
    assert "addresses matched: 5/5" in cli("verify", tmp_path / "frames.pickle", "-p", "pytorch_caching").stdout
    cli("view", tmp_path / "frames.pickle", "-p", "pytorch_caching", "-o", tmp_path / "frames.html")
    browser.get((tmp_path / "frames.html").as_uri())
    rows = browser.find_elements("css selector", ".panel table.peak tr")
    cells = [[td.text for td in row.find_elements("css selector", "td")] for row in rows[1:]]
    # The hole left of B's place, between E (at B's address, so B's slot: its own site, not
    # B's) and C. The program's frames, not PyTorch's; a function named <lambda> as text.
    assert cells == [[format(0x7F0000000000 + 10 * MIB, "x"), "4.000 MiB",
                      "live 2.000 MiB (asked 2.000 MiB) from train.py:50 make_e",
                      "live 6.000 MiB (asked 5.000 MiB) from train.py:30 <lambda>"]]
    assert "call sites" in browser.find_element("css selector", ".panel table.peak caption").text
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_a_trace_without_frames_shows_no_call_site(browser, page):
    path, data = page
    assert data["sites"] == [""]
    browser.get(path.as_uri())
    assert " from " not in browser.find_element("css selector", ".panel table.peak").text


def test_a_large_trace_stays_small(tmp_path):
    cli("gen", "random", "--seed", "5", "--allocations", "200000", "-o", tmp_path / "big.fbin")
    cli("view", tmp_path / "big.fbin", "-p", ",".join(POLICIES), "--backend", "simulated", "-o", tmp_path / "big.html")
    assert (tmp_path / "big.html").stat().st_size < 20 << 20


def test_the_readmes_screenshots_are_taken_by_the_browser(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    from conftest import FRAGLAB
    from matplotlib import image
    script = Path(__file__).resolve().parents[2] / "experiments" / "scripts" / "dev" / "screenshots.py"
    done = subprocess.run([sys.executable, str(script), "--fraglab", FRAGLAB, "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("view.png", "report.png"):
        assert image.imread(str(tmp_path / name)).std() > 0.05, name


def test_events_asked_for_outside_the_trace_are_refused_with_nothing_written(generated, tmp_path):
    for at in ("0", "99999999", "5,x"):
        done = cli("view", generated[0], "-p", "best_fit", "--backend", "simulated", "--at", at,
                   "-o", tmp_path / "never.html", check=False)
        assert done.returncode == 2, (at, done.stderr)
        assert "--at" in done.stderr or "at:" in done.stderr, done.stderr
        assert not (tmp_path / "never.html").exists()
