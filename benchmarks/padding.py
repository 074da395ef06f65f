"""Padding and throughput of the token-budget ``tf.data`` pipeline on PropBank-EWT train.

For both example layouts (one example per sentence with all its predicates; one per predicate) this
builds :func:`data_pipeline.dataset.make_dataset` at a token budget (default 4096) over
``data/propbank-ewt/train.gold_conll.gz`` with the gold UD trees of ``train.conllu.gz`` attached, runs
whole epochs and reports:

- ``padding_fraction``: padded token slots / all token slots (``Σ batch × longest``) — target ≤ 5 %;
- ``predicate_row_padding_fraction`` (sentence layout): padded ``[P, T]`` SRL rows' slots / all slots;
- ``mean_budget_fill``: token slots of a batch / budget, averaged over batches;
- ``batches_per_second`` and ``tokens_per_second`` of a second epoch (the first includes tracing);
- the largest padded batch and how many examples exceed the budget (each batched alone).

Prints a table and writes ``benchmarks/out/padding.json``.
Run: ``PYTHONPATH=. python benchmarks/padding.py [--budget 4096] [--epochs 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _epoch(dataset) -> dict:
    """One pass: slot and batch counts, and its duration."""
    batches = real = slots = predicate_real = predicate_slots = largest = 0
    fills = []
    start = time.perf_counter()
    for batch in dataset:
        lengths = batch["length"].numpy()
        size = lengths.shape[0] * batch["word_ids"].shape[1]
        batches += 1
        real += int(lengths.sum())
        slots += size
        largest = max(largest, size)
        fills.append(size)
        if "predicate_mask" in batch:
            n_pred = batch["num_predicates"].numpy()
            predicate_real += int((n_pred * lengths).sum())
            predicate_slots += int(batch["srl_tag_ids"].shape[0] * batch["srl_tag_ids"].shape[1] * batch["srl_tag_ids"].shape[2])
    seconds = time.perf_counter() - start
    return dict(
        batches=batches, real=real, slots=slots, largest=largest, fills=fills, seconds=seconds,
        predicate_real=predicate_real, predicate_slots=predicate_slots,
    )


def main(argv=None) -> int:
    """Run the benchmark; returns a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT / "data" / "propbank-ewt" / "train.gold_conll.gz"))
    parser.add_argument("--parse", default=str(ROOT / "data" / "propbank-ewt" / "train.conllu.gz"),
                        help="CoNLL-U trees to attach ('' for none)")
    parser.add_argument("--budget", type=int, default=4096)
    parser.add_argument("--epochs", type=int, default=2, help="passes; throughput is from the last")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "padding.json"))
    args = parser.parse_args(argv)

    if not pathlib.Path(args.data).exists():
        print(f"padding benchmark: {args.data} not found; build the open corpus first "
              "(python -m data_pipeline.open_corpus ...)", file=sys.stderr)
        return 1

    import tensorflow as tf

    from data_pipeline.dataset import LAYOUTS, make_dataset
    from data_pipeline.readers.conll12 import read_conll12
    from data_pipeline.vocab import Vocabularies

    sentences = read_conll12(args.data)
    if args.parse:
        from data_pipeline.readers.conllu import attach_parse, read_conllu

        sentences = attach_parse(sentences, read_conllu(args.parse), args.parse)
    vocabs = Vocabularies.build(sentences)

    results = {
        "data": os.path.relpath(args.data, ROOT),
        "parse": os.path.relpath(args.parse, ROOT) if args.parse else None,
        "token_budget": args.budget,
        "sentences": len(sentences),
        "tensorflow": tf.__version__,
        "cpu_count": os.cpu_count(),
        "layouts": {},
    }
    for layout in LAYOUTS:
        start = time.perf_counter()
        dataset, report = make_dataset(sentences, vocabs, layout=layout, token_budget=args.budget, seed=args.seed)
        build_seconds = time.perf_counter() - start
        epochs = [_epoch(dataset) for _ in range(max(1, args.epochs))]
        last = epochs[-1]
        entry = {
            "examples": report.examples,
            "tokens": report.tokens,
            "batches_per_epoch": last["batches"],
            "padding_fraction": 1.0 - last["real"] / last["slots"],
            "mean_budget_fill": sum(last["fills"]) / len(last["fills"]) / args.budget,
            "largest_batch_slots": last["largest"],
            "over_budget_examples": report.over_budget_examples,
            "build_seconds": build_seconds,
            "first_epoch_seconds": epochs[0]["seconds"],
            "batches_per_second": last["batches"] / last["seconds"],
            "tokens_per_second": last["real"] / last["seconds"],
            "bucket_count": len(report.bucket_batch_sizes),
            "features": report.features,
            "nested_spans_dropped": report.bio["nested_spans"],
        }
        if last["predicate_slots"]:
            entry["predicate_row_padding_fraction"] = 1.0 - last["predicate_real"] / last["predicate_slots"]
        results["layouts"][layout] = entry

    print(f"PropBank-EWT train: {len(sentences)} sentences, budget {args.budget} tokens a batch")
    print(f"{'layout':10} {'examples':>8} {'batches':>7} {'padding':>8} {'fill':>6} {'batches/s':>10} {'tokens/s':>10}")
    for layout, entry in results["layouts"].items():
        print(
            f"{layout:10} {entry['examples']:8d} {entry['batches_per_epoch']:7d} {100 * entry['padding_fraction']:7.2f}% "
            f"{100 * entry['mean_budget_fill']:5.1f}% {entry['batches_per_second']:10.1f} {entry['tokens_per_second']:10.0f}"
        )
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
