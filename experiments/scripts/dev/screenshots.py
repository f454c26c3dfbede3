#!/usr/bin/python3
"""The README's pictures of `fraglab view` and `fraglab report`, taken by headless Chromium:

    experiments/scripts/dev/screenshots.py [--fraglab PATH] [--out-dir docs/images]

Generates the bundled phases workload, makes a view of it under best_fit, tlsf and tf_bfc and a
report of it, opens each page with the network cut off, moves the view's slider to the middle
of the trace, and writes OUT/view.png and OUT/report.png (each replaced only when taken).
Needs chromium, chromium-driver and python3-selenium (`.ci/install-deps tests`).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

# The modules the results scripts share (experiments/scripts/reproduce/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reproduce"))
from results_io import DEFAULT_FRAGLAB, ROOT, write_atomically

POLICIES = "best_fit,tlsf,tf_bfc"


def browser(width, height):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--proxy-server=127.0.0.1:9",
                 "--hide-scrollbars", f"--window-size={width},{height}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=options)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--fraglab", default=DEFAULT_FRAGLAB)
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "images"))
    args = parser.parse_args(argv)
    if not shutil.which("chromedriver"):
        sys.exit("screenshots.py: chromium-driver is not installed (.ci/install-deps tests installs it)")
    os.makedirs(args.out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "phases.trace")
        run = lambda *a: subprocess.run([args.fraglab, *a], check=True, capture_output=True)  # noqa: E731
        run("gen", "phases", "--seed", "1", "-o", trace)
        run("view", trace, "-p", POLICIES, "--backend", "simulated", "-o", os.path.join(work, "view.html"))
        run("report", trace, "-p", POLICIES, "--backend", "simulated", "-o", os.path.join(work, "report.html"))
        for page, width, height in (("view", 1400, 1000), ("report", 1100, 1500)):
            driver = browser(width, height)
            try:
                driver.get("file://" + os.path.join(work, page + ".html"))
                if page == "view":
                    driver.execute_script("const s = document.getElementById('slider'); s.value = Math.floor(s.max / 2);"
                                          "s.dispatchEvent(new Event('input'));")
                write_atomically(os.path.join(args.out_dir, page + ".png"), driver.get_screenshot_as_png())
            finally:
                driver.quit()
    print(f"wrote {args.out_dir}/view.png and report.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
