"""Seconds to score CoNLL-2005 test WSJ (DeepAtt single model) with ``lisa_tf.evaluation.srl_eval``.

Uses the fixtures shipped in ``tests/fixtures``; prints the timings and writes them to
``benchmarks/out/srl_eval_speed.json``. For comparison the official Perl script takes about a second.

    PYTHONPATH=. python benchmarks/srl_eval_speed.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import statistics
import time

from lisa_tf.evaluation import srl_eval

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "fixtures" / "conll05" / "test.wsj.props.gz"
PREDICTED = ROOT / "tests" / "fixtures" / "deepatt" / "single" / "conll05.wsj.result.gz"
OUT = ROOT / "benchmarks" / "out" / "srl_eval_speed.json"


def main() -> None:
    """Time ``repeats`` full runs, reading and decompressing both gzip files included."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    file_seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        result = srl_eval.evaluate(GOLD, PREDICTED, warn=None)
        file_seconds.append(time.perf_counter() - start)

    record = {
        "task": "srl-eval test.wsj (DeepAtt single), files read and scored",
        "gold": str(GOLD.relative_to(ROOT)),
        "predicted": str(PREDICTED.relative_to(ROOT)),
        "sentences": result.sentences,
        "propositions": result.propositions,
        "f1": round(result.f1, 2),
        "repeats": args.repeats,
        "seconds_min": min(file_seconds),
        "seconds_median": statistics.median(file_seconds),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record, indent=2) + "\n")
    print(f"srl-eval test.wsj: {result.sentences} sentences, {result.propositions} props, F1 {result.f1:.2f}; "
          f"{record['seconds_min']:.3f} s (min of {args.repeats}), {record['seconds_median']:.3f} s median")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
