"""The documentation site (``mkdocs.yml``, ``docs/``) and the README: the site builds with ``mkdocs build
--strict`` (a broken link, a missing page or snippet, an API name that no longer exists fail), and every
code block of every page is run or checked against the code:

- each ``python -m lisa_tf …`` line of a ``bash`` block is parsed by the command line itself
  (:func:`lisa_tf_cli.main.parse_arguments`; ``label-corpus``'s Beam flags by Beam), each
  ``./run_experiments.sh`` line likewise, each ``python benchmarks/X.py``/``tools/X.py`` line against
  that script's ``--help``: a command or flag renamed in the code fails here;
- the ``curl`` lines are sent to a running server of the shipped model; ``python`` blocks are run;
  a ``text`` block after a one-line ``predict`` block is that command's output.

Commands that need what a test machine lacks (docker, apt, a Dataflow or Flink cluster, hours of
training) are parsed, not run; :data:`NOT_RUN` lists the programs seen only that way.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, shipped_export

PAGES = sorted((ROOT / "docs").glob("**/*.md")) + [ROOT / "README.md"]
#: programs whose lines are neither parsed nor run, and why
NOT_RUN = {"docker": "TensorFlow Serving's image (no docker here)", "sudo": "system packages",
           "source": "the shell's own set-up", "bash": "the set-up script (run by run_tests.sh itself)",
           "mkdocs": "the site build (test_the_site_builds_strictly)", "xdg-open": "a browser"}
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)


def blocks(page):
    """``(language, text)`` of each fenced block of ``page``, in order."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(page.read_text(encoding="utf-8"))]


def command_lines(text: str) -> list[list[str]]:
    """The commands of a bash block as word lists: continuations joined, comments and ``&&`` chains split,
    environment assignments in front dropped, a redirection cut off."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        parts, part = [], []
        for word in words + ["&&"]:
            if word == "&&":
                parts.append(part)
                part = []
            else:
                part.append(word)
        for part in parts:
            while part and re.match(r"^[A-Z_]+=", part[0]):
                part = part[1:]
            if "<" in part:
                part = part[: part.index("<")]
            if part:
                commands.append(part)
    return commands


def all_commands():
    return [(page.relative_to(ROOT).as_posix(), words) for page in PAGES for language, text in blocks(page)
            if language == "bash" for words in command_lines(text)]


def _help(*program: str) -> str:
    """``--help`` of a script (``benchmarks/X.py``) or module command (``-m data_pipeline.X build``)."""
    done = subprocess.run([sys.executable, *program, "--help"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _check_flags(program: list[str], words: list[str]) -> str:
    shown = _help(*program)
    for flag in (w.split("=")[0] for w in words if w.startswith("--")):
        assert re.search(rf"(^|[\s,\[]){re.escape(flag)}([\s,=\]]|$)", shown, flags=re.M), (program, flag)
    return "flags checked"


def _check_pip_install(words: list[str]) -> str:
    """A documented ``pip install``: each ``-r FILE`` is a file of the repository, each ``lisa_tf[EXTRA]``
    an optional dependency of ``pyproject.toml``, each flag one of the pip flags the pages use."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = project["tool"]["setuptools"]["dynamic"]["optional-dependencies"]
    for before, word in zip([""] + words, words):
        if before in ("-r", "--requirement"):
            assert (ROOT / word).is_file(), word
        elif word.startswith("-"):
            assert word in ("-r", "--requirement", "--no-deps", "--require-hashes", "--quiet", "--editable", "-e"), word
        elif match := re.fullmatch(r"lisa_tf\[([\w,-]+)\]", word):
            assert set(match.group(1).split(",")) <= set(extras), (word, sorted(extras))
    return "files and extras checked"


def check_command(words: list[str]) -> str:
    """Parse one documented command as its program would; returns how it was checked."""
    from lisa_tf_cli.main import parse_arguments

    program = words[0]
    if program in ("python", "python3") and words[1:3] == ["-m", "lisa_tf"]:
        args = parse_arguments(words[3:])
        if getattr(args, "_passthrough", None):
            from lisa_tf_cli.commands.label_corpus import _pipeline_options

            _pipeline_options(args.runner, getattr(args, args._passthrough, None) or [])
        return "parsed"
    if program == "./run_experiments.sh":
        parse_arguments(["experiments", *words[1:]])
        return "parsed"
    if program == "./run_tests.sh":
        assert all((ROOT / w).exists() for w in words[1:] if not w.startswith("-")), words
        return "paths checked"
    if program in ("python", "python3") and words[1].endswith(".py"):
        return _check_flags(words[1:2], words[2:])
    if program in ("python", "python3") and words[1] == "-m" and words[2].startswith("data_pipeline."):
        return _check_flags(words[1:4], words[4:])  # python -m data_pipeline.X COMMAND …
    if program == "curl":
        return "run"
    if program == "pip" and words[1:2] == ["install"]:
        return _check_pip_install(words[2:])
    assert program in NOT_RUN, f"a documented command nothing checks: {' '.join(words)}"
    return "not run"


@pytest.mark.parametrize("page, words", all_commands(), ids=lambda v: v if isinstance(v, str) else " ".join(v)[:60])
def test_every_documented_command_parses(page, words):
    check_command(words)


def test_a_renamed_flag_fails_the_docs_check():
    """What makes a renamed flag fail: the command line refuses what the docs would then show."""
    with pytest.raises(SystemExit):
        check_command(["python", "-m", "lisa_tf", "predict", "--model", "srl-fast", "--fromat", "jsonl", "Hi."])
    with pytest.raises(SystemExit):
        check_command(["./run_experiments.sh", "open", "--model", "lisa"])
    with pytest.raises(AssertionError):
        check_command(["python", "benchmarks/label_corpus.py", "--worker", "2"])
    with pytest.raises(AssertionError):
        check_command(["pip", "install", "lisa_tf[spacey]"])
    with pytest.raises(AssertionError):
        check_command(["python", "-m", "data_pipeline.frame_index", "build", "frames", "--output", "f.json.gz"])


def test_the_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr
    # the offline plugin writes NAME.html pages (they open from disk)
    pages = {p.relative_to(site).as_posix() for p in site.glob("**/*.html")}
    for name in ("getting-started", "labelling", "spacy", "serving", "training", "adapting", "scaling-out",
                 "benchmarks", "reference/api", "reference/cli", "models/srl", "models/srl-fast", "licences"):
        assert f"{name}.html" in pages, name
    api = (site / "reference" / "api.html").read_text(encoding="utf-8")
    assert 'id="lisa_tf.labelling.predictor.load"' in api and "token_budget" in api
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    assert "python -m lisa_tf label-corpus" in cli and "--shard-bytes" in cli  # rendered from the parsers


#: Runs each block of a JSON list ``[[page, text], …]`` as a script of its own (its own ``__main__``
#: globals) in one process, which imports TensorFlow once instead of once per block; a failing block
#: names its page. Prints ``ran PAGE`` and then what the block printed, as a JSON list of lines.
RUN_BLOCKS = r'''
import contextlib, io, json, sys, traceback
for page, text in json.load(sys.stdin):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(text, page, "exec"), {"__name__": "__main__"})
    except BaseException:
        sys.exit(f"{page}: its python block failed:\n{text}\n{traceback.format_exc()}")
    print("ran", page, json.dumps(out.getvalue().splitlines()), flush=True)
'''
#: ``print(...)  # what it prints`` in a python block: the comment is the line the call prints.
PRINTED = re.compile(r"^\s*print\(.*\)  # (.*)$", re.M)


@pytest.mark.slow(minutes=1.2)
def test_python_blocks_run(tmp_path):
    """Each ``python`` block runs as a script, where the files the page's commands before it write exist
    (``exports/srl``: the shipped fast model's export, as ``export`` writes it), and each ``print(...)  #
    comment`` line of a block prints its comment (docs/spacy.md's frames with their role meanings)."""
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "srl").symlink_to(shipped_export("srl-fast"))
    scripts = [(str(page.relative_to(ROOT)), text) for page in PAGES for language, text in blocks(page)
               if language == "python"]
    done = subprocess.run([sys.executable, "-c", RUN_BLOCKS], input=json.dumps(scripts), cwd=tmp_path,
                          capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    ran = [line.split(" ", 2)[1:] for line in done.stdout.splitlines() if line.startswith("ran ")]
    assert [page for page, _ in ran] == [p for p, _ in scripts]
    assert len(scripts) >= 2
    for (page, text), (_, printed) in zip(scripts, ran):
        if PRINTED.search(text):
            assert json.loads(printed) == PRINTED.findall(text), page
    assert sum(len(PRINTED.findall(text)) for _, text in scripts) >= 4


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_lines_get_answers_from_the_server():
    from export.rest_server import make_server

    server = make_server("srl", shipped_export("srl-fast"), port=0, warn=lambda m: None)
    server.start_in_thread()
    sent = 0
    try:
        for page, words in all_commands():
            if words[0] != "curl":
                continue
            words = [w.replace("127.0.0.1:8501", f"127.0.0.1:{server.port}") for w in words]
            done = subprocess.run([*words, "--silent", "--show-error"], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (page, words, done.stderr)
            answer = json.loads(done.stdout)
            assert "error" not in answer and ("predictions" in answer or "model_version_status" in answer), answer
            sent += 1
    finally:
        server.stop()
    assert sent >= 4


@pytest.mark.slow(minutes=1.1)
def test_an_output_block_is_what_its_command_prints():
    shown = 0
    for page in PAGES:
        found = blocks(page)
        for (language, text), (next_language, output) in zip(found, found[1:]):
            commands = command_lines(text) if language == "bash" else []
            if next_language != "text" or len(commands) != 1 or commands[0][3:4] != ["predict"]:
                continue
            done = subprocess.run([sys.executable, *commands[0][1:]], cwd=ROOT, capture_output=True, text=True,
                                  timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert done.returncode == 0, done.stderr[-2000:]
            assert done.stdout.strip() == output.strip(), (page.name, done.stdout)
            shown += 1
    assert shown >= 1



@pytest.mark.slow(minutes=1.0)
def test_pages_render_in_a_browser(tmp_path):
    """The built site opened from disk (the offline plugin's pages) in headless Chromium: the serving
    page and the API reference of ``lisa_tf.load`` render with their headings and navigation, and the
    spaCy page's displaCy picture (drawn at build time) shows the frame's roles; screenshots go to
    ``benchmarks/out/docs_serving.png``, ``docs_api_load.png`` and ``docs_spacy_displacy.png``."""
    from benchmarks import demo_browser

    missing = demo_browser.missing()
    if missing:
        pytest.skip(f"needs Debian's Chromium and its driver; {', '.join(missing)} not found")
    from selenium.webdriver.common.by import By

    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    driver = demo_browser.start_browser()
    try:
        driver.set_window_size(1280, 1000)
        driver.get((site / "serving.html").as_uri())
        assert driver.find_element(By.CSS_SELECTOR, "article h1").text == "Serving"
        assert "Demo page" in [e.text for e in driver.find_elements(By.CSS_SELECTOR, "article h2")]
        driver.save_screenshot(str(out / "docs_serving.png"))
        driver.get((site / "reference" / "api.html").as_uri() + "#lisa_tf.labelling.predictor.load")
        heading = driver.find_element(By.ID, "lisa_tf.labelling.predictor.load")
        assert "load" in heading.text and heading.is_displayed()
        driver.save_screenshot(str(out / "docs_api_load.png"))
        driver.get((site / "spacy.html").as_uri() + "#a-frame-in-displacy")
        picture = driver.find_element(By.CSS_SELECTOR, "article div.spans")
        assert picture.is_displayed() and picture.size["height"] > 40
        shown = picture.text.split()
        assert {"barked", "mailman", "V", "ARG0"} <= set(shown), shown
        driver.save_screenshot(str(out / "docs_spacy_displacy.png"))
    finally:
        driver.quit()


def test_the_readme_headline_table_is_the_model_cards():
    """The README's table of shipped models gives each card's test F1 and unseen-predicate F1 of the shipped
    file as ``evaluate --model NAME`` decodes it."""
    from lisa_tf.packages.finding import SHIPPED, read_card

    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("| `srl")]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        card = read_card(SHIPPED / cells[0].split("`")[1])
        assert cells[2] == f"{card['slices']['all']['f1']:.2f}"
        assert cells[3] == f"{card['slices']['unseen_predicates']['f1']:.2f}"
