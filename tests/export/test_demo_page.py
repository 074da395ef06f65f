"""The demo page at ``/`` in a real headless browser: Debian's ``chromium`` driven by Selenium through
``chromedriver``, against the REST server serving a tiny trained LISA export.

What the browser shows is compared with what the REST API answers for the same input, fetched here
directly with urllib: the spans of each predicate's row (role and token range, read from the
``data-role``/``data-start``/``data-end`` attributes of the span elements) and the parse arcs
(``data-dep``/``data-head``/``data-label``), and the sense of each frame and the meaning of each of its
arguments as shown (the roleset and its name under the predicate, the role's description under its
label, the function tag and VerbNet role in its tooltip). Input goes in by keyboard. Every test checks the browser
made no request to another host and logged no console error. A full-page screenshot of each path is
written under the test's ``tmp_path`` (and copied to ``benchmarks/out/``); the page-load and
first-answer times are printed, not asserted.

The browser tests skip, with the reason, when ``/usr/bin/chromium`` or ``/usr/bin/chromedriver`` is
missing (``apt-get install chromium chromium-driver``; ``.ci/run`` installs them); nothing is installed
here. The browser helpers are ``benchmarks/demo_browser.py``'s, shared with ``benchmarks/demo_page.py``.
"""

from __future__ import annotations

import json
import pathlib
import re
import time
import urllib.request

import pytest

from data_pipeline.readers.conllu import conllu_blocks
from data_pipeline.spans import bio_to_spans
from tests.conftest import DATA, ROOT
from tests.export import rest_cases

MODEL = "srl"
# An EWT training sentence of the tiny run (tests/conftest.py::lisa_run), so that the run finds its
# predicate whatever the run-to-run variation of its short training.
SENTENCE = "Guerrillas killed an engineer, Asi Ali, from Tikrit."

pytest.importorskip("selenium.webdriver", reason="selenium is not installed (requirements.txt)")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

from benchmarks import demo_browser  # noqa: E402
from benchmarks.demo_browser import WAIT_SECONDS, press, wait_for_answer  # noqa: E402

# The page's state, read in the browser: per sentence its tokens, each predicate row's spans, its arcs.
SHOWN = """
return [...document.querySelectorAll("#results .sentence")].map((sentence) => ({
  tokens: [...sentence.querySelectorAll(".word .tok")].map((cell) => cell.firstChild.textContent),
  frames: Object.fromEntries([...sentence.querySelectorAll(".frame")].map((frame) => [frame.dataset.predicate,
    [...frame.querySelectorAll("[data-role]")].map((span) => [span.dataset.role, +span.dataset.start, +span.dataset.end])])),
  arcs: [...sentence.querySelectorAll("svg .arc")].map((arc) => [+arc.dataset.dep, +arc.dataset.head, arc.dataset.label]),
}));
"""

# What the page shows of each frame's sense (the text under the predicate) and of its arguments' meanings.
MEANINGS = """
return [...document.querySelectorAll("#results .frame")].map((frame) => [+frame.dataset.predicate,
  frame.querySelector(".head .sense")?.textContent ?? "", frame.querySelector(".head .sense-name")?.textContent ?? "",
  [...frame.querySelectorAll(".arg:not(.v)")].map((box) => [box.dataset.role,
    box.querySelector(".meaning")?.textContent ?? "", box.title])]);
"""


# --------------------------------------------------------------------------------------------------
# the server, the browser and the REST answers fetched directly
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(lisa_export):
    """The REST server on 127.0.0.1 (a free port), serving the tiny LISA export as ``srl``."""
    from export.rest_server import make_server

    _, export = lisa_export
    rest = make_server(MODEL, export.parent, port=0, poll_seconds=0, warn=lambda message: None)
    rest.start_in_thread()
    yield rest
    rest.stop()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium keeping its console and network logs (the tests using it skip without it)."""
    missing = demo_browser.missing()
    if missing:
        pytest.skip(f"needs Debian's Chromium and its driver; {', '.join(missing)} not found (install them with "
                    f"`{demo_browser.INSTALL}`; .ci/run does)")
    driver = demo_browser.start_browser(logs=True)
    yield driver
    driver.quit()


def predict(server, body: dict) -> tuple[int, dict]:
    """POST ``body`` to the model's ``:predict``; the status and the JSON answer."""
    return rest_cases.request(server.url, "POST", f"/v1/models/{MODEL}:predict", body, timeout=WAIT_SECONDS)


def frames_of(predictions, spans_of) -> dict:
    """``{predicate position: sorted (role, start, end)}``: each predicate's arguments from
    ``spans_of(p)``, and the predicate itself as ``V``."""
    return {str(position): sorted(spans_of(p) + [("V", position, position + 1)])
            for p, position in enumerate(predictions["predicate_positions"]) if position >= 0}


def text_frames(prediction) -> dict:
    """The frames of a ``text`` answer (argument spans as the signature gives them)."""
    def spans(p):
        roles = prediction["argument_roles"][p]
        return [(role, prediction["argument_token_starts"][p][k], prediction["argument_token_ends"][p][k])
                for k, role in enumerate(roles) if role]
    return frames_of(prediction, spans)


def tag_frames(prediction, length: int) -> dict:
    """The frames of a ``with_parse`` answer: its BIO tags read with the project's span reader."""
    def spans(p):
        return [(s.label, s.start, s.end + 1) for s in bio_to_spans(prediction["srl_tags"][p][:length])
                if s.label not in ("V", "C-V")]
    return frames_of(prediction, spans)


def text_meanings(prediction) -> list:
    """What the page should show of a ``text`` answer's senses and meanings (:data:`MEANINGS`): per frame
    its roleset (``?`` after a fallback) and name, per argument (in the answer's order, left to right)
    its role, description and tooltip (``ARG0: killer (PAG, VerbNet agent)``; none without a description)."""
    def argument(p, k):
        role, description = prediction["argument_roles"][p][k], prediction["argument_descriptions"][p][k]
        function, verbnet = prediction["argument_function_tags"][p][k], prediction["argument_vn_roles"][p][k]
        tags = ", ".join(tag for tag in (function, verbnet and f"VerbNet {verbnet}") if tag)
        tooltip = f"{role}: {description}" + (f" ({tags})" if tags else "") if description else ""
        return [role, description, tooltip]

    frames = []
    for p, position in enumerate(prediction["predicate_positions"]):
        if position >= 0:
            sense = prediction["senses"][p] + ("?" if prediction["sense_sources"][p] == "frame_index" else "")
            frames.append([position, sense if prediction["senses"][p] else "", prediction["sense_names"][p],
                           [argument(p, k) for k, role in enumerate(prediction["argument_roles"][p]) if role]])
    return frames


def shown(driver) -> list[dict]:
    return [{**s, "frames": {key: sorted(map(tuple, spans)) for key, spans in s["frames"].items()},
             "arcs": sorted(map(tuple, s["arcs"]))} for s in driver.execute_script(SHOWN)]


# --------------------------------------------------------------------------------------------------
# browser helpers: loading with empty logs, focus, logs, screenshots
# --------------------------------------------------------------------------------------------------


def open_page(driver, server) -> dict:
    """Load ``/`` and wait for the model's metadata; the navigation timing (ms)."""
    driver.get_log("browser"), driver.get_log("performance")  # start every test with empty logs
    return demo_browser.open_page(driver, server.url + "/")


def focused_id(driver) -> str:
    return driver.execute_script("return document.activeElement.id || document.activeElement.tagName.toLowerCase()")


def console_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def requested_urls(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def assert_only_own_requests(driver, server, *expected_paths: str) -> None:
    urls = requested_urls(driver)
    for path in expected_paths:
        assert server.url + path in urls, (path, urls)
    others = [url for url in urls if not url.startswith(server.url + "/") and not url.startswith("data:")]
    assert not others, others


def screenshot(driver, tmp_path: pathlib.Path, name: str, capsys) -> pathlib.Path:
    """A full-page PNG under ``tmp_path``, copied to ``benchmarks/out/`` (git-ignored); prints its path."""
    path = tmp_path / name
    path.write_bytes(demo_browser.full_page_png(driver))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_bytes(path.read_bytes())
    with capsys.disabled():
        print(f"\nscreenshot: {path} (copied to {out / name})")
    return path


def ewt_sentences(max_words: int, split: str = "dev"):
    """Real sentences of a shipped EWT split: (CoNLL-U text as pasted, words, heads, relations)."""
    for block, sentence in conllu_blocks(DATA / "propbank-ewt" / f"{split}.conllu.gz"):
        if len(sentence.words) <= max_words:
            text = "".join(line + "\n" for line in block.comments) + "".join("\t".join(row) + "\n" for row in block.rows)
            yield text, list(sentence.words), list(sentence.heads), list(sentence.dep_labels)


# --------------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------------


def test_page_is_one_html_file_naming_the_model(server):
    for path in ("/", "/index.html"):
        with urllib.request.urlopen(server.url + path, timeout=WAIT_SECONDS) as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == "text/html; charset=utf-8"
            assert "connect-src 'self'" in response.headers["Content-Security-Policy"]
            page = response.read().decode("utf-8")
        assert f'<meta name="model-name" content="{MODEL}">' in page
        assert re.findall(r'(?:src|href)="([^"]*)"', page) == ["data:,"]  # no asset loaded from anywhere
        assert not re.search(r"https?://", page.replace('"http://www.w3.org/2000/svg"', ""))
    status, answer = rest_cases.request(server.url, "POST", "/", {})  # only GET and HEAD answer the page
    assert status == 404 and "Malformed request" in answer["error"]


def test_text_signature_returns_the_models_own_parse(lisa_export):
    """``text`` answers the heads and labels ``serving_default`` gives for the same tokens."""
    import tensorflow as tf

    _, export = lisa_export
    loaded = tf.saved_model.load(str(export))
    by_text = {k: v.numpy() for k, v in loaded.signatures["text"](text=tf.constant([SENTENCE, "The cat sat."])).items()}
    by_tokens = {k: v.numpy() for k, v in loaded.signatures["serving_default"](tokens=tf.constant(by_text["tokens"])).items()}
    assert by_text["heads"].tolist() == by_tokens["heads"].tolist()
    assert by_text["dep_labels"].tolist() == by_tokens["dep_labels"].tolist()
    assert by_text["heads"][1, 4:].tolist() == [-1] * (by_text["heads"].shape[1] - 4)  # padding


def test_typed_sentence_is_drawn_as_the_text_signature_answers(server, browser, tmp_path, capsys):
    timing = open_page(browser, server)
    assert browser.find_element(By.ID, "model-name").text == MODEL
    # every control is reachable with Tab from the page's start, and the focused one is outlined
    order = []
    for _ in range(4):
        press(browser, Keys.TAB)
        order.append(focused_id(browser))
        outline = browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
        assert outline not in ("", "none"), (order[-1], outline)
    assert order == ["parse-model", "text", "label", "summary"], order
    press(browser, Keys.TAB, Keys.TAB, hold=Keys.SHIFT)  # back to the text box
    assert focused_id(browser) == "text"
    assert browser.find_element(By.ID, "results").get_attribute("aria-live") == "polite"

    press(browser, SENTENCE)
    started = time.perf_counter()
    press(browser, Keys.ENTER)
    assert wait_for_answer(browser) == "done", browser.find_element(By.ID, "error").text
    answered = time.perf_counter() - started

    status, expected = predict(server, {"signature_name": "text", "instances": [{"text": SENTENCE}]})
    assert status == 200, expected
    [prediction] = expected["predictions"]
    [sentence] = shown(browser)
    length = prediction["lengths"]
    assert sentence["tokens"] == prediction["tokens"][:length]
    assert sentence["frames"] == text_frames(prediction)
    assert sentence["frames"], "the tiny model should find a predicate here, or this test shows little"
    assert sentence["arcs"] == sorted((i + 1, head, label) for i, (head, label) in
                                      enumerate(zip(prediction["heads"][:length], prediction["dep_labels"][:length])))
    assert json.loads(browser.find_element(By.ID, "json").get_attribute("textContent")) == expected
    # the sense under each predicate and each argument's meaning under its role, as the answer gives them
    meanings = browser.execute_script(MEANINGS)
    assert meanings == text_meanings(prediction)
    killed = [frame for frame in meanings if frame[1] == "kill.01"]
    assert killed and killed[0][2] == "cause to die, murder", meanings
    assert ["ARG0", "killer", "ARG0: killer (PAG, VerbNet agent)"] in killed[0][3], meanings

    assert_only_own_requests(browser, server, "/", f"/v1/models/{MODEL}/metadata", f"/v1/models/{MODEL}:predict")
    assert console_errors(browser) == []
    screenshot(browser, tmp_path, "demo.png", capsys)
    with capsys.disabled():
        print(f"page load: {timing['loadEventEnd'] - timing['startTime']:.0f} ms (DOMContentLoaded "
              f"{timing['domContentLoadedEventEnd'] - timing['startTime']:.0f} ms); first answer: "
              f"{answered * 1000:.0f} ms from Enter to drawn frames (in-page fetch to drawn: "
              f"{browser.find_element(By.ID, 'results').get_attribute('data-ms')} ms)")


def test_pasted_paragraph_is_drawn_sentence_by_sentence(server, browser, tmp_path, capsys):
    """A paragraph of three EWT training sentences goes to ``text`` as one instance; the page draws
    three sentences, each with the tokens, frames and arcs the ``text`` signature gives that sentence
    alone (so no argument crosses a sentence boundary)."""
    paragraph = ("Guerrillas killed an engineer, Asi Ali, from Tikrit. His mother was also killed in the attack.\n\n"
                 "They also killed Shaikh Hamid 'Akkab, a clan elder of a branch of the Dulaim tribe in Tikrit.")
    sentences = ["Guerrillas killed an engineer, Asi Ali, from Tikrit.", "His mother was also killed in the attack.",
                 "They also killed Shaikh Hamid 'Akkab, a clan elder of a branch of the Dulaim tribe in Tikrit."]
    open_page(browser, server)
    box = browser.find_element(By.ID, "text")
    browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));",
                           box, paragraph)
    box.click()
    press(browser, Keys.ENTER, hold=Keys.CONTROL)
    assert wait_for_answer(browser) == "done", browser.find_element(By.ID, "error").text
    drawn = shown(browser)
    titles = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#results .sentence h2")]
    assert len(drawn) == 3 and [t.split(". ", 1)[1].rsplit(" (", 1)[0] for t in titles] == sentences
    status, answer = predict(server, {"signature_name": "text", "instances": [{"text": s} for s in sentences]})
    assert status == 200, answer
    for sentence, alone in zip(drawn, answer["predictions"]):
        length = alone["lengths"]
        assert sentence["tokens"] == alone["tokens"][:length]
        assert sentence["frames"] == text_frames(alone)
        assert sentence["arcs"] == sorted((i + 1, head, label) for i, (head, label) in
                                          enumerate(zip(alone["heads"][:length], alone["dep_labels"][:length])))
    assert sum(len(s["frames"]) for s in drawn) >= 3, "the tiny model should find the three 'killed'"
    assert console_errors(browser) == []
    screenshot(browser, tmp_path, "demo_paragraph.png", capsys)


def paste_conllu(driver, text: str) -> None:
    """Switch to the pasted parse with the keyboard and put ``text`` in its box as a paste would."""
    driver.find_element(By.ID, "parse-model").send_keys(Keys.ARROW_RIGHT)
    assert driver.find_element(By.ID, "parse-conllu").is_selected()
    box = driver.find_element(By.ID, "conllu")
    assert box.is_displayed() and not driver.find_element(By.ID, "text").is_displayed()
    press(driver, Keys.TAB)
    assert focused_id(driver) == "conllu"
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", box, text)


def test_pasted_conllu_is_drawn_as_with_parse_answers(server, browser, tmp_path, capsys):
    open_page(browser, server)
    # one of the tiny run's training sentences, so that it finds a predicate whatever its run-to-run variation
    text, words, heads, relations = next(s for s in ewt_sentences(18, "train") if 12 <= len(s[1]))
    paste_conllu(browser, text)
    press(browser, Keys.ENTER, hold=Keys.CONTROL)
    assert wait_for_answer(browser) == "done", browser.find_element(By.ID, "error").text

    status, expected = predict(server, {"signature_name": "with_parse",
                                        "instances": [{"tokens": words, "parse_heads": heads}]})
    assert status == 200, expected
    [prediction] = expected["predictions"]
    [sentence] = shown(browser)
    assert sentence["tokens"] == words
    assert sentence["frames"] == tag_frames(prediction, len(words))
    assert sentence["frames"], "the tiny model should find a predicate here, or this test shows little"
    assert sentence["arcs"] == sorted((i + 1, head, label) for i, (head, label) in enumerate(zip(heads, relations)))
    assert json.loads(browser.find_element(By.ID, "json").get_attribute("textContent")) == expected

    assert_only_own_requests(browser, server, f"/v1/models/{MODEL}:predict")
    assert console_errors(browser) == []
    screenshot(browser, tmp_path, "demo_conllu.png", capsys)


@pytest.mark.parametrize("breakage, message", [
    (lambda row: row[:6] + ["x"] + row[7:], "HEAD (column 7) of word 3 is \"x\""),
    (lambda row: row[:5], "expected 10 tab-separated columns, found 5"),
])
def test_malformed_conllu_names_the_line(server, browser, breakage, message):
    open_page(browser, server)
    text, *_ = next(ewt_sentences(30))
    lines = text.splitlines()
    word_lines = [i for i, line in enumerate(lines) if line.split("\t")[0] == "3"]
    lines[word_lines[0]] = "\t".join(breakage(lines[word_lines[0]].split("\t")))
    paste_conllu(browser, "\n".join(lines) + "\n")
    press(browser, Keys.ENTER, hold=Keys.CONTROL)
    assert wait_for_answer(browser) == "error"
    shown_error = browser.find_element(By.ID, "error").text
    assert f"CoNLL-U line {word_lines[0] + 1}: " in shown_error and message in shown_error, shown_error
    assert not any(":predict" in url for url in requested_urls(browser))  # refused before any request
    assert console_errors(browser) == []


def test_server_error_is_shown_as_text(server, browser, lisa_export):
    """A sentence over the export's token limit: the server's 400 ``{"error": ...}`` message is shown."""
    _, export = lisa_export
    longest = json.loads((export / "assets" / "vocab_info.json").read_text())["longest_sentence"]
    open_page(browser, server)
    text, words, heads, _ = next(s for s in ewt_sentences(1000) if len(s[1]) > longest)
    status, expected = predict(server, {"signature_name": "with_parse",
                                        "instances": [{"tokens": words, "parse_heads": heads}]})
    assert status == 400 and "max_tokens_per_sentence" in expected["error"]
    paste_conllu(browser, text)
    press(browser, Keys.ENTER, hold=Keys.CONTROL)
    assert wait_for_answer(browser) == "error"
    assert browser.find_element(By.ID, "error").text == f"The server answered 400: {expected['error']}"
    assert browser.find_element(By.ID, "results").text == ""
    # the only console error is Chromium's note of the refused request itself
    errors = console_errors(browser)
    assert len(errors) == 1 and "status of 400" in errors[0]["message"], errors
