"""Page-load and first-answer times of the demo page (``/`` of the REST server) with the shipped model.

Starts the REST server in this process on 127.0.0.1 (a free port) over ``models/srl``, the shipped
LISA export (``lisa_tf.packages.finding.default_model("srl")``), once for all rounds, and in each of
``--rounds`` fresh headless Chromium sessions (Debian's ``chromium`` and ``chromedriver`` through
Selenium, with the helpers of ``benchmarks/demo_browser.py`` that the demo page's test uses too):

1. loads the page and reads its navigation timing, in ms from the start of navigation:
   ``responseStart`` (first byte of the page), the end of ``DOMContentLoaded`` and of the ``load``
   event; and, on the wall clock, from the navigation request to the model's metadata being shown;
2. types three sentences in turn into the text box, each replacing the last, and presses Enter after
   each. Every answer is timed three ways: from pressing Enter to the results region saying ``done``
   on the wall clock (WebDriver, polled every 10 ms); in the page from the Enter ``keydown`` to the
   first frame painted after the answer is drawn (listeners this script adds); and the page's own
   figure, ``data-ms`` of ``#results`` (from its request to the frames drawn). The first answer of the
   first round includes the model's warm-up.

Prints min / median / max of every figure over the rounds, writes ``benchmarks/out/demo_page.json``
and a full-page screenshot of the last answer, ``benchmarks/out/demo_shipped.png``. Exits 2 with a
one-line message naming what is missing when selenium, Chromium, its driver or the shipped model is
absent. Run: ``PYTHONPATH=. python benchmarks/demo_page.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import platform
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODEL = "srl"
SENTENCES = (
    "Yesterday the company announced that it will open a new office in Boston next year.",
    "The committee rejected the proposal because its members feared that it would raise taxes and cut services.",
    "After the storm had passed, the residents returned to their homes and began to repair the damaged roofs.",
)
POLL_SECONDS = 0.01
# In the page: the Enter keydown on the text box, and the first frame painted after the results say done.
LISTEN = """
const box = document.getElementById("text"), results = document.getElementById("results");
window.benchTimes = {};
box.addEventListener("keydown", (event) => {
  if (event.key === "Enter") window.benchTimes = {enter: performance.now()};
}, true);
new MutationObserver(() => {
  const times = window.benchTimes;
  if (results.dataset.state !== "done" || times.enter === undefined || times.done !== undefined) return;
  times.done = performance.now();
  requestAnimationFrame(() => requestAnimationFrame(() => { times.painted = performance.now(); }));
}).observe(results, {attributes: true, attributeFilter: ["data-state"]});
"""


def missing_parts() -> list[str]:
    """What the benchmark needs and does not find, each with how to get it."""
    if importlib.util.find_spec("selenium") is None:
        return ["selenium (pip install -r requirements.txt)"]
    from benchmarks import demo_browser

    absent = [f"{path} ({demo_browser.INSTALL})" for path in demo_browser.missing()]
    from lisa_tf.packages.finding import PackagingError, default_model

    try:
        default_model(MODEL)
    except PackagingError as error:
        absent.append(str(error))
    return absent


def one_round(server, sentences, screenshot: pathlib.Path | None) -> dict:
    """A fresh browser session: the page's load timing and each sentence's answer times."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    from benchmarks.demo_browser import WAIT_SECONDS, full_page_png, open_page, press, start_browser, wait_for_answer

    driver = start_browser()
    try:
        started = time.perf_counter()
        timing = open_page(driver, server.url + "/")
        shown = time.perf_counter() - started
        load = {"response_start_ms": timing["responseStart"] - timing["startTime"],
                "dom_content_loaded_ms": timing["domContentLoadedEventEnd"] - timing["startTime"],
                "load_event_ms": timing["loadEventEnd"] - timing["startTime"],
                "metadata_shown_ms": shown * 1000}
        driver.execute_script(LISTEN)
        driver.find_element(By.ID, "text").click()
        answers = []
        for sentence in sentences:
            press(driver, "a", hold=Keys.CONTROL)  # select the last sentence: typing replaces it
            press(driver, sentence)
            driver.execute_script("document.getElementById('results').removeAttribute('data-state')")
            started = time.perf_counter()
            press(driver, Keys.ENTER)
            state = wait_for_answer(driver, POLL_SECONDS)
            drawn = time.perf_counter() - started
            answer = {"sentence": sentence, "state": state, "enter_to_done_ms": drawn * 1000}
            if state == "done":
                times = WebDriverWait(driver, WAIT_SECONDS, poll_frequency=POLL_SECONDS).until(
                    lambda d: d.execute_script("return window.benchTimes.painted && window.benchTimes"))
                results = driver.find_element(By.ID, "results")
                answer.update(enter_to_paint_ms=times["painted"] - times["enter"],
                              page_ms=float(results.get_attribute("data-ms")),
                              tokens=len(results.find_elements(By.CSS_SELECTOR, ".word .tok")),
                              predicates=len(results.find_elements(By.CSS_SELECTOR, ".frame")))
            else:
                answer["error"] = driver.find_element(By.ID, "error").text
            answers.append(answer)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(full_page_png(driver))
        return {"load": load, "answers": answers}
    finally:
        driver.quit()


def spread(values: list[float]) -> dict:
    return {"min": round(min(values), 1), "median": round(statistics.median(values), 1), "max": round(max(values), 1)}


def summary(rounds: list[dict]) -> dict:
    """``{figure: {min, median, max}}`` over the rounds (answers that failed left out)."""
    figures = {f"page {key}": spread([r["load"][key] for r in rounds]) for key in rounds[0]["load"]}
    for k in range(len(rounds[0]["answers"])):
        done = [r["answers"][k] for r in rounds if r["answers"][k]["state"] == "done"]
        for key in ("enter_to_done_ms", "enter_to_paint_ms", "page_ms"):
            if done:
                figures[f"answer {k + 1} {key}"] = spread([a[key] for a in done])
    return figures


def main(argv=None) -> int:
    """Parse arguments, measure, print and write JSON and the screenshot; returns a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh browser sessions (default 3)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "demo_page.json"))
    parser.add_argument("--screenshot", default=str(ROOT / "benchmarks" / "out" / "demo_shipped.png"))
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    absent = missing_parts()
    if absent:
        print(f"demo_page: missing {'; '.join(absent)}", file=sys.stderr)
        return 2

    from export.rest_server import make_server
    from lisa_tf.packages.finding import default_model

    base = default_model(MODEL)
    started = time.perf_counter()
    server = make_server(MODEL, base, port=0, poll_seconds=0, warn=lambda message: None)
    server.start_in_thread()
    loaded = time.perf_counter() - started
    try:
        rounds = [one_round(server, SENTENCES, pathlib.Path(args.screenshot) if r == args.rounds - 1 else None)
                  for r in range(args.rounds)]
    finally:
        server.stop()

    figures = summary(rounds)
    failed = [a for r in rounds for a in r["answers"] if a["state"] != "done"]
    print(f"model {base} served as {MODEL} (loaded in {loaded:.1f} s); {args.rounds} rounds, "
          f"{len(SENTENCES)} answers each; ms")
    print(f"{'':32}{'min':>10}{'median':>10}{'max':>10}")
    for name, values in figures.items():
        print(f"{name:32}" + "".join(f"{values[key]:>10.1f}" for key in ("min", "median", "max")))
    first = rounds[0]["answers"][0]
    if first["state"] == "done":
        print(f"round 1 answer 1 (with the model's warm-up): {first['enter_to_done_ms']:.0f} ms Enter to done")
    print("predicates drawn per answer: " + ", ".join(str(a.get("predicates")) for a in rounds[-1]["answers"]))
    for answer in failed:
        print(f"failed: {answer['sentence']!r}: {answer['error']}")
    result = {
        "model_base_path": str(base), "model_name": MODEL, "server_load_seconds": round(loaded, 2),
        "rounds": args.rounds, "sentences": list(SENTENCES), "figures_ms": figures, "per_round": rounds,
        "screenshot": args.screenshot, "host": "127.0.0.1", "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out} and {args.screenshot}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
