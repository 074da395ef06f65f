"""Where a new process's seconds go before its first frame, for every way into lisa_tf.

Each entry point is run in new processes (``--repeats`` runs each; the operating system's caches are
warm, Python's are not), after an untimed ``predict`` of its model (which builds the package's export
cache when the model or the code changed) and one untimed run of it:

* ``cli-srl`` / ``cli-srl-fast``: ``python -m lisa_tf predict --model M TEXT``;
* ``python-srl`` / ``python-srl-fast``: ``import lisa_tf; p = lisa_tf.load(M); p.predict(TEXT); p.predict(TEXT2)``;
* ``spacy-srl`` / ``spacy-srl-fast``: ``spacy.blank("en")`` with a ``sentencizer``, ``nlp.add_pipe("lisa_srl",
  config={"model": M})``, the first Doc and a second one;
* ``serve-srl``: ``python -m lisa_tf serve`` until its REST port answers ``GET /v1/models/srl``;
* ``label-corpus-srl``: ``python -m lisa_tf label-corpus`` on a one-line file, until the process ends
  (its first and only record written).

Each run is a small driver script in the child: it imports TensorFlow first (``import tensorflow``, the
floor of any process that labels), then does what the entry point does, and writes
``time.perf_counter()`` marks to a file (the clock is the system's monotonic one, shared by parent and
child): around its own steps (the package's imports, the first and second call) and around the
library's functions that read or build things (loading the predictor, reading a ``.keras`` file,
restoring a SavedModel, the frame index, the sense lexicon, the server's model versions and their
warm-up requests, Beam's worker set-up), which it wraps as their modules are imported (wrapping moves
no import). A phase nested in another (the frame index, read during the first call; the warm-up,
inside the restore) is shown in its own column and also counted in its parent's. ``wall``: process
start to its end (``serve``: to its first answer); ``to first frame``: to the end of the first call;
``after: exit``: from the last mark to the process's end. A command ends as ``python -m lisa_tf`` ends
(:func:`lisa_tf_cli.main.finish`: output flushed, exit handlers run, no teardown of TensorFlow's modules); a
script or a spaCy pipeline with the interpreter's own exit, whose teardown of TensorFlow takes about a
second (their targets are on the first frame).

Beside them, in the same run: the floor, a process that only imports TensorFlow (the same driver, so
``python -c "import tensorflow"``), and one run of each entry point under ``python -X importtime``
whose modules' own import times are summed by top-level package (tensorflow, keras, keras_hub,
apache_beam, grpc, spacy, tensorflow_text, ...).

Prints a Markdown table (medians), each entry point's target (the command line and a script's first
frame within ``import tensorflow`` + 3 s, spaCy's first Doc + 4 s, ``serve`` ready + 5 s) and the load
average over its runs, and writes ``benchmarks/out/cold_start_profile.json`` (``--append`` merges the
entry points measured into that file instead, so they can be measured one at a time).

Run: ``PYTHONPATH=. python benchmarks/cold_start_profile.py [--entry cli-srl ...] [--repeats 5] [--append]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT = "The dog barked at the mailman. Shares soared 20% on Tuesday."
TEXT2 = "The company said it would buy the remaining shares by the end of next year."
OUT = ROOT / "benchmarks" / "out" / "cold_start_profile.json"
#: the issue's targets: seconds over ``import tensorflow`` to the first frame (serve: to ready)
MARGINS = {"cli": 3.0, "python": 3.0, "spacy": 4.0, "serve": 5.0, "label-corpus": None}
#: what each kind's target is measured on: the whole command, the first frame of a script, ready to serve
TARGET_PHASE = {"cli": "wall", "python": "to first frame", "spacy": "to first frame", "serve": "wall",
                "label-corpus": "wall"}
SERVE_TIMEOUT = 300.0

#: (module, attribute path, phase): the library functions the driver times as their modules are imported
WRAPPED = [
    ("lisa_tf.labelling.predictor", "load", "load"),
    ("lisa_tf.models.runs", "load_model_file", "read .keras"),
    ("lisa_tf.labelling.predictor", "ExportPredictor.__init__", "restore export"),
    ("lisa_tf.decoding.frame_meanings", "frame_index", "frame index"),
    ("lisa_tf.decoding.roleset_lookup", "RolesetLookup.__init__", "frame index"),
    ("lisa_tf.decoding.sense_choice", "build_lexicon", "sense lexicon"),
    ("lisa_tf.decoding.sense_choice", "_load_index", "sense lexicon"),
    ("lisa_tf.packages.export_cache", "cached_export", "find export"),
    ("export.cache_build", "build_export", "find export"),
    ("export.model_versions", "load_version", "restore export"),
    ("export.warmup", "replay_warmup_requests", "warm-up"),
    ("export.rest_server", "make_server", "load"),
    ("lisa_tf.labelling.corpus", "LabelBlock.setup", "load"),
    ("lisa_tf.labelling.predictor", "Predictor.label", "call"),
]

#: the driver: ``sys.argv[1]`` the marks file, ``sys.argv[2]`` the entry point's kind, then its arguments
DRIVER = r'''
import importlib.abc, importlib.util, json, os, sys, time
MARKS = open(sys.argv[1], "a", buffering=1)
def mark(phase, start, end):
    MARKS.write(json.dumps({"phase": phase, "start": start, "end": end}) + "\n")
mark("driver", START, time.perf_counter())
WRAPPED = %(wrapped)r
TARGETS = {}
for module, attribute, phase in WRAPPED:
    TARGETS.setdefault(module, []).append((attribute, phase))
ACTIVE = set()
def timed(function, phase):
    def wrapper(*args, **kwargs):
        if phase in ACTIVE:  # nested in a call of the same phase: counted once
            return function(*args, **kwargs)
        ACTIVE.add(phase)
        begun = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            ACTIVE.discard(phase)
            mark(phase, begun, time.perf_counter())
    wrapper.__wrapped__ = function
    for name in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(wrapper, name, getattr(function, name, None))
    return wrapper
def patch(module):
    for attribute, phase in TARGETS.get(module.__name__, []):
        *owner_path, name = attribute.split(".")
        owner = module
        for part in owner_path:
            owner = getattr(owner, part)
        setattr(owner, name, timed(getattr(owner, name), phase))
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in TARGETS:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module
        def exec_module(module):
            execute(module)
            patch(module)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Hook())
def step(phase, function):
    return timed(function, phase)()
kind, args = sys.argv[2], sys.argv[3:]
if kind != "floor":
    sys.argv = ["-m"] if kind in ("cli", "serve", "label-corpus") else [sys.argv[0]]
step("import tensorflow", lambda: __import__("tensorflow"))
if kind == "python":
    lisa_tf = step("imports", lambda: __import__("lisa_tf"))
    predictor = step("load", lambda: lisa_tf.load(args[0]))
    step("first call", lambda: predictor.predict(args[1]))
    step("second call", lambda: predictor.predict(args[2]))
elif kind == "spacy":
    def imports():
        import spacy, lisa_tf_spacy
        return spacy
    spacy = step("imports", imports)
    nlp = step("load", lambda: spacy.blank("en"))
    step("load", lambda: nlp.add_pipe("sentencizer"))  # lisa_srl labels the Doc's sentences
    step("load", lambda: nlp.add_pipe("lisa_srl", config={"model": args[0]}))
    doc = step("first call", lambda: nlp(args[1]))
    step("second call", lambda: nlp(args[2]))
    assert doc._.frames, "no frame in the first Doc"
elif kind in ("cli", "serve", "label-corpus"):
    main = step("imports", lambda: importlib.import_module("lisa_tf_cli.main"))
    sys.exit(main.finish(main.main(args)))  # as ``python -m lisa_tf`` ends (lisa_tf.__main__)
'''


def _driver(scratch: pathlib.Path) -> pathlib.Path:
    path = scratch / "driver.py"
    # START is the first statement: the interpreter's own start-up is what precedes it
    path.write_text("import time; START = time.perf_counter()\n" + DRIVER % {"wrapped": WRAPPED})
    return path


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as reply:
            return reply.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def entry_points(scratch: pathlib.Path) -> dict[str, tuple[str, str, list[str]]]:
    """name → (driver kind, model, arguments)."""
    corpus = scratch / "corpus.txt"
    corpus.write_text(TEXT + "\n", encoding="utf-8")
    points = {}
    for model in ("srl", "srl-fast"):
        points[f"cli-{model}"] = ("cli", model, ["predict", "--model", model, TEXT])
        points[f"python-{model}"] = ("python", model, [model, TEXT, TEXT2])
        points[f"spacy-{model}"] = ("spacy", model, [model, TEXT, TEXT2])
    points["serve-srl"] = ("serve", "srl", ["serve", "--model_name", "srl", "--rest_api_port", "PORT"])
    points["label-corpus-srl"] = ("label-corpus", "srl", ["label-corpus", "--input", str(corpus),
                                                   "--output", str(scratch / "labelled"), "--model", "srl"])
    return points


def run_once(driver: pathlib.Path, kind: str, arguments: list[str], scratch: pathlib.Path,
             importtime: bool = False) -> dict:
    """One new process: its wall time to the first frame (serve: to ready), its phases, and with
    ``importtime`` the import log."""
    marks_file = scratch / "marks.jsonl"
    marks_file.unlink(missing_ok=True)
    arguments = list(arguments)
    port = None
    if kind == "serve":
        port = _free_port()
        arguments[arguments.index("PORT")] = str(port)
    argv = [sys.executable, *(["-X", "importtime"] if importtime else []), str(driver), str(marks_file), kind,
            *arguments]
    with open(scratch / "stdout.txt", "w") as out, open(scratch / "stderr.txt", "w") as err:
        begun = time.perf_counter()
        child = subprocess.Popen(argv, cwd=ROOT, env=_env(), stdout=out, stderr=err)
        if kind == "serve":
            url = f"http://127.0.0.1:{port}/v1/models/srl"
            while not _answers(url):
                if child.poll() is not None or time.perf_counter() - begun > SERVE_TIMEOUT:
                    child.kill()
                    raise SystemExit(f"serve did not answer {url}:\n{(scratch / 'stderr.txt').read_text()[-3000:]}")
                time.sleep(0.02)
            ready = time.perf_counter()
            child.terminate()
            child.wait(timeout=60)
        else:
            code = child.wait()
            ready = time.perf_counter()
            if code != 0:
                raise SystemExit(f"{kind} {' '.join(arguments)}: exit status {code}:\n"
                                 f"{(scratch / 'stderr.txt').read_text()[-3000:]}")
    if kind == "cli" and not (scratch / "stdout.txt").read_text().strip():
        raise SystemExit("predict wrote no frame")
    marks = [json.loads(line) for line in marks_file.read_text().splitlines()] if marks_file.exists() else []
    phases: dict[str, float] = {"wall": ready - begun}
    calls = 0
    for item in marks:
        phase = item["phase"]
        seconds = item["end"] - item["start"]
        if phase == "driver":
            phases["interpreter start"] = item["end"] - begun
            continue
        if phase == "call":  # Predictor.label: the first and second calls of label_units (predict, label-corpus)
            calls += 1
            if calls > 2 or kind in ("python", "spacy"):
                continue
            phase = "first call" if calls == 1 else "second call"
        phases[phase] = phases.get(phase, 0.0) + seconds
        if phase == "first call" and "to first frame" not in phases:
            phases["to first frame"] = item["end"] - begun
    last = max((m["end"] for m in marks), default=begun)
    # serve: its own start after the last timed phase; the others: the interpreter's exit (and, for the
    # command line, what it does after its first call)
    phases["until ready" if kind == "serve" else "after: exit"] = ready - last
    result = {"phases": phases}
    if importtime:
        result["imports"] = import_sums((scratch / "stderr.txt").read_text())
    return result


IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_sums(log: str) -> dict[str, float]:
    """Seconds of each top-level package's modules' own import times (``-X importtime``'s self column)."""
    sums: dict[str, float] = {}
    for line in log.splitlines():
        found = IMPORT_LINE.match(line)
        if found:
            package = found.group(4).split(".")[0]
            sums[package] = sums.get(package, 0.0) + int(found.group(1)) / 1e6
    return dict(sorted(((k, round(v, 3)) for k, v in sums.items()), key=lambda kv: -kv[1]))


def median_phases(runs: list[dict]) -> dict[str, float]:
    names = sorted({name for run in runs for name in run["phases"]})
    return {name: round(statistics.median(run["phases"].get(name, 0.0) for run in runs), 3) for name in names}


def measure(names: list[str], repeats: int, scratch: pathlib.Path) -> dict:
    driver = _driver(scratch)
    points = entry_points(scratch)
    report = {}
    for name in names:
        kind, model, arguments = points[name]
        # untimed: predict builds the package's export cache if the model or the code changed (label-corpus,
        # lisa_tf.load and spaCy only read it), then one run of the entry point warms the OS's caches
        built = subprocess.run([sys.executable, "-m", "lisa_tf", "predict", "--model", model, TEXT], cwd=ROOT,
                               env=_env(), capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit(f"predict failed:\n{built.stderr[-3000:]}")
        run_once(driver, kind, arguments, scratch)
        load_before = os.getloadavg()[0]
        floor = [run_once(driver, "floor", [], scratch)["phases"]["wall"] for _ in range(repeats)]
        runs = [run_once(driver, kind, arguments, scratch) for _ in range(repeats)]
        traced = run_once(driver, kind, arguments, scratch, importtime=True)
        load_after = os.getloadavg()[0]
        phases = median_phases(runs)
        floor_s = round(statistics.median(floor), 3)
        margin = MARGINS[kind]
        report[name] = {
            "command": [kind, *arguments],
            "repeats": repeats,
            "import_tensorflow_s": floor_s,
            "phases_median_s": phases,
            "walls_s": [round(run["phases"]["wall"], 3) for run in runs],
            "imports_s": traced["imports"],
            "load_average": [round(load_before, 2), round(load_after, 2)],
            "target_on": TARGET_PHASE[kind],
            "target_s": None if margin is None else round(floor_s + margin, 3),
            "target_met": None if margin is None else phases[TARGET_PHASE[kind]] <= floor_s + margin,
            "measured": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        print(f"measured {name}: {phases['wall']:.2f} s (import tensorflow {floor_s:.2f} s)", file=sys.stderr,
              flush=True)
    return report


COLUMNS = ["wall", "to first frame", "interpreter start", "import tensorflow", "imports", "load", "find export",
           "read .keras", "restore export", "warm-up", "sense lexicon", "frame index", "first call", "second call",
           "until ready", "after: exit"]
PACKAGES = ["lisa_tf", "data_pipeline", "export", "keras", "keras_hub", "apache_beam", "grpc", "spacy",
            "tensorflow_text", "uvicorn"]


def table(report: dict) -> str:
    head = ["entry point", "floor: import tensorflow", *COLUMNS, "target", "load avg"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, row in report.items():
        phases = row["phases_median_s"]
        cells = [name, f"{row['import_tensorflow_s']:.2f}"]
        cells += [f"{phases[c]:.2f}" if c in phases else "" for c in COLUMNS]
        met = "met" if row["target_met"] else "NOT met"
        on = row.get("target_on", "wall")
        cells.append("" if row["target_s"] is None else f"{on} ≤ {row['target_s']:.2f}: {met}")
        cells.append("–".join(f"{v:.1f}" for v in row["load_average"]))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Own import time by top-level package (s, one `-X importtime` run; tensorflow includes its "
                  "own imports only):", "",
              "| entry point | tensorflow | " + " | ".join(PACKAGES) + " | other |",
              "|" + "---|" * (len(PACKAGES) + 3)]
    for name, row in report.items():
        sums = row["imports_s"]
        other = sum(v for k, v in sums.items() if k not in PACKAGES and k != "tensorflow")
        lines.append(f"| {name} | {sums.get('tensorflow', 0):.2f} | "
                     + " | ".join(f"{sums.get(p, 0):.2f}" for p in PACKAGES) + f" | {other:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    with tempfile.TemporaryDirectory() as scratch:
        names = list(entry_points(pathlib.Path(scratch)))
    parser.add_argument("--entry", action="append", choices=names, help="an entry point to measure (default: all)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each entry point (median reported)")
    parser.add_argument("--append", action="store_true", help="merge into the JSON file instead of replacing it")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        report = measure(args.entry or names, args.repeats, pathlib.Path(scratch))
    out = pathlib.Path(args.out)
    if args.append and out.exists():
        report = {**json.loads(out.read_text())["entry_points"], **report}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"text": TEXT, "second_text": TEXT2, "python": sys.version.split()[0],
                               "cpus": os.cpu_count(), "entry_points": report}, indent=2) + "\n")
    print(table(report))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
