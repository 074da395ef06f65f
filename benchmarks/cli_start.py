"""How soon ``python -m lisa_tf predict`` answers: its errors, and its first and later starts.

Each figure is the wall time of a whole new process (``python -m lisa_tf …``), the median of
``--runs`` runs:

* ``error_missing_input``: ``predict --input MISSING`` and ``error_missing_model``: ``predict --model
  NO_SUCH_NAME TEXT`` (target: under 1 s; the arguments are checked before TensorFlow is imported);
* ``import_tensorflow``: ``python -c "import tensorflow"``, the floor of any command that labels;
* ``predict_first``: ``predict --model MODEL TEXT`` on an empty export cache (a packaged model's export
  is built then), once per run, each on a new cache; ``predict_second``: the same command once that
  cache is there (target: at most ``import_tensorflow`` + 3 s).

Prints the figures, whether each target is met, and writes ``benchmarks/out/cli_start.json``.

Run: ``PYTHONPATH=. python benchmarks/cli_start.py [--model srl] [--runs 5] [--first-runs 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT = "The dog barked at the mailman. Shares soared 20% on Tuesday."
#: the targets: an argument error within this many seconds; a later predict within import tensorflow + this
ERROR_SECONDS = 1.0
SECOND_START_MARGIN = 3.0


def timed(argv: list[str], env: dict, expect: int) -> float:
    """Seconds the command ran as a new process (its exit status must be ``expect``)."""
    begun = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - begun
    if done.returncode != expect:
        raise SystemExit(f"{' '.join(argv)}: exit status {done.returncode}, expected {expect}:\n{done.stderr[-2000:]}")
    return seconds


def figure(samples: list[float]) -> dict:
    return {"median_s": round(statistics.median(samples), 3), "min_s": round(min(samples), 3),
            "max_s": round(max(samples), 3), "runs": len(samples)}


def measure(model: str, runs: int, first_runs: int, scratch: pathlib.Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    lisa = [sys.executable, "-m", "lisa_tf"]
    figures = {
        "error_missing_input": [timed(lisa + ["predict", "--input", str(scratch / "MISSING.txt")], env, 2)
                                for _ in range(runs)],
        "error_missing_model": [timed(lisa + ["predict", "--model", "NO_SUCH_NAME", TEXT], env, 2)
                                for _ in range(runs)],
        "import_tensorflow": [timed([sys.executable, "-c", "import tensorflow"], env, 0) for _ in range(runs)],
    }
    first = []
    for k in range(first_runs):
        env["LISA_TF_CACHE"] = str(scratch / f"cache-{k}")  # a new, empty cache: a first start
        first.append(timed(lisa + ["predict", "--model", model, TEXT], env, 0))
    figures["predict_first"] = first
    figures["predict_second"] = [timed(lisa + ["predict", "--model", model, TEXT], env, 0) for _ in range(runs)]
    report = {"model": model, "text": TEXT, **{name: figure(samples) for name, samples in figures.items()}}
    floor = report["import_tensorflow"]["median_s"]
    report["targets"] = {
        f"errors under {ERROR_SECONDS:g} s": max(report["error_missing_input"]["median_s"],
                                                 report["error_missing_model"]["median_s"]) < ERROR_SECONDS,
        f"second predict <= import tensorflow + {SECOND_START_MARGIN:g} s":
            report["predict_second"]["median_s"] <= floor + SECOND_START_MARGIN,
    }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="srl", help="the model predict labels with (default: the shipped srl)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each figure (median reported)")
    parser.add_argument("--first-runs", type=int, default=1, help="first starts, each on a new cache")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "cli_start.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        report = measure(args.model, args.runs, args.first_runs, pathlib.Path(scratch))
    for name in ("error_missing_input", "error_missing_model", "import_tensorflow", "predict_first",
                 "predict_second"):
        row = report[name]
        print(f"{name:22s} median {row['median_s']:7.2f} s  (min {row['min_s']:.2f}, max {row['max_s']:.2f}, "
              f"{row['runs']} runs)")
    for target, met in report["targets"].items():
        print(f"{'met' if met else 'NOT met':8s} {target}")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
