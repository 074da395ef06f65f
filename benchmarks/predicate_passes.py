"""The speed cost of predicate-aware encoding (Shi & Lin 2019): one encoder pass per predicate.

A predicate-aware model tells its encoder which predicate it labels, so the encoder reads each sentence once
per predicate instead of once. ``srl`` reads each sentence once and scores every predicate from that one pass.
This script measures what the extra passes cost, on the first ``--sentences`` PropBank-EWT test sentences
(gold tokens and predicates), with the packaged model's own network standing in for a predicate-aware one of
the same size. The per-predicate model's extra work (an indicator embedding added to the encoder's input,
one bilinear row instead of all of them) is small beside the encoder, so the figure is a close lower bound on
the cost:

* **one pass per sentence**: the compiled network on the sentences, as ``srl`` labels them (the reference
  of :func:`benchmarks.labelling_speed.network_rate`);
* **one pass per predicate**: the same network on each sentence repeated once per gold predicate, and once
  for a sentence without any (a model that finds its predicates needs that pass too).

Both rates count the sentences' tokens once, so their ratio is the speed a predicate-aware model keeps.
Prints the table and writes ``benchmarks/out/predicate_passes.json``.

Run: ``PYTHONPATH=. python benchmarks/predicate_passes.py [--model models/srl] [--sentences 400]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import platform
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.labelling_speed import DATA, network_rate  # noqa: E402
from data_pipeline.splits import read_split  # noqa: E402

OUT = ROOT / "benchmarks" / "out" / "predicate_passes.json"


def one_per_predicate(sentences) -> list:
    """Each sentence once per predicate (without its other predicates), once if it has none."""
    return [dataclasses.replace(s, predicates=[p]) for s in sentences for p in s.predicates] + [
        s for s in sentences if not s.predicates]


def measure(model_path: str, count: int, repeats: int) -> dict:
    import lisa_tf

    gold = read_split(str(DATA / "test.gold_conll.gz"), "conll12", str(DATA / "test.conllu.gz"), count)
    tokens = sum(len(s.words) for s in gold)
    model = lisa_tf.load(model_path, prefer_export=False).model
    passes = one_per_predicate(gold)
    record = {"model": model_path, "sentences": len(gold), "tokens": tokens, "predicates": sum(len(s.predicates) for s in gold),
              "passes_per_predicate": len(passes)}
    record["one_pass_per_sentence"] = round(network_rate(model, gold, tokens, repeats))
    record["one_pass_per_predicate"] = round(network_rate(model, passes, tokens, repeats))
    record["speed_kept"] = round(record["one_pass_per_predicate"] / record["one_pass_per_sentence"], 2)
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "srl"))
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    record = measure(args.model, args.sentences, args.repeats)
    print(f"{record['model']}: {record['sentences']} sentences, {record['tokens']} tokens, {record['predicates']} "
          f"gold predicates ({record['passes_per_predicate']} encoder passes with one per predicate)")
    print("| encoding | passes | tokens/s | speed kept |\n|---|---:|---:|---:|")
    print(f"| one pass per sentence (srl) | {record['sentences']} | {record['one_pass_per_sentence']:,} | 1.00 |")
    print(f"| one pass per predicate (predicate-aware) | {record['passes_per_predicate']} | "
          f"{record['one_pass_per_predicate']:,} | {record['speed_kept']:.2f} |")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                           "load_average": os.getloadavg()}, **record}, indent=2) + "\n",
                   encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
