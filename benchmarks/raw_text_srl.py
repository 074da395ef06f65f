"""End-to-end SRL from raw text: PropBank-EWT rebuilt as raw sentences (the CoNLL-U ``# text`` lines),
labelled by ``lisa_tf.load(RUN).predict``, scored with srl-eval against gold after aligning tokens;
next to the same model's F1 on the gold tokens, and both paths' speed.

Alignment: gold tokens get character offsets by walking their forms through the ``# text`` string.
A predicted argument counts only if its character span starts at a gold token's start and ends at a
gold token's end (then it becomes that gold-token span); a predicted predicate maps to the gold token
whose span contains its first character (a second predicate inside the same gold token is dropped).
Anything that does not align is dropped and counted, so
tokenisation errors cost recall (and the tokens they touch), as in a real pipeline.

Run: ``PYTHONPATH=. python benchmarks/raw_text_srl.py RUN [--split test] [--out benchmarks/out/raw_text_srl.json]``
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_pipeline.sentence import Predicate, Span  # noqa: E402
from data_pipeline.splits import read_split  # noqa: E402
from lisa_tf.evaluation.srl_eval import score  # noqa: E402
from lisa_tf.labelling.predictor import load  # noqa: E402


def texts_of(conllu: pathlib.Path) -> list[str]:
    """The ``# text`` line of every sentence of a CoNLL-U file, in order."""
    texts = []
    with gzip.open(conllu, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("# text = "):
                texts.append(line[len("# text = "):].rstrip("\n"))
    return texts


def gold_offsets(words, text):
    """Character spans of the gold tokens in ``text`` (None where a form cannot be found)."""
    spans, at = [], 0
    for word in words:
        found = text.find(word, at)
        if found < 0:
            spans.append(None)
            continue
        spans.append((found, found + len(word)))
        at = found + len(word)
    return spans


def align(result, gold_sentence, text, counts):
    """The predicted frames of one sentence as a Sentence over the gold tokens."""
    offsets = gold_offsets(gold_sentence.words, text)
    by_start = {span[0]: i for i, span in enumerate(offsets) if span}
    by_end = {span[1]: i for i, span in enumerate(offsets) if span}
    lemmas = {p.position: p.lemma for p in gold_sentence.predicates}
    predicates = []
    taken = set()
    for frame in result["predicates"]:
        position = next((i for i, span in enumerate(offsets) if span and span[0] <= frame["start"] < span[1]), None)
        if position is None or position in taken:  # no gold token, or a second predicate inside one
            counts["predicates_unaligned"] += 1
            continue
        taken.add(position)
        spans = [Span(position, position, "V")]
        for argument in frame["arguments"]:
            start, end = by_start.get(argument["start"]), by_end.get(argument["end"])
            if start is None or end is None or end < start:
                counts["arguments_unaligned"] += 1
                continue
            spans.append(Span(start, end, argument["role"]))
        # The lemma column: the gold one where a gold predicate stands (as `evaluate` does), so the
        # scorer compares predicate positions, not a lemmatiser the project does not have.
        lemma = lemmas.get(position, gold_sentence.words[position].lower())
        predicates.append(Predicate(position, lemma, None, tuple(sorted(spans))))
    return dataclasses.replace(gold_sentence, predicates=predicates)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a trained run directory")
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "raw_text_srl.json"))
    args = parser.parse_args(argv)
    data = ROOT / "data" / "propbank-ewt"
    conllu = data / f"{args.split}.conllu.gz"
    gold = read_split(str(data / f"{args.split}.gold_conll.gz"), "conll12", str(conllu), args.limit)
    texts = texts_of(conllu)[: len(gold)]
    assert len(texts) == len(gold), "every sentence needs its # text line"
    predictor = load(args.run)

    started = time.perf_counter()
    results = predictor.predict(texts)  # a list: one sentence each, tokenised, not split
    raw_seconds = time.perf_counter() - started
    counts = {"predicates_unaligned": 0, "arguments_unaligned": 0}
    aligned = [align(r, g, t, counts) for r, g, t in zip(results, gold, texts)]
    raw = score(gold, aligned)
    tokens_right = sum(
        [(x["start"], x["end"]) for x in r["tokens"]] == gold_offsets(g.words, t) for r, g, t in zip(results, gold, texts)
    )

    started = time.perf_counter()
    on_gold = predictor.predict(tokens=[g.words for g in gold])
    gold_seconds = time.perf_counter() - started
    gold_tokens = score(gold, [align(r, g, " ".join(g.words), {"predicates_unaligned": 0, "arguments_unaligned": 0})
                               for r, g in zip(on_gold, gold)])
    n_tokens = sum(len(g) for g in gold)
    report = {
        "run": args.run, "split": args.split, "sentences": len(gold), "tokens": n_tokens,
        "raw_text": raw, "gold_tokens": gold_tokens,
        "sentences_tokenised_exactly": tokens_right / len(gold), **counts,
        "raw_text_sentences_per_second": len(gold) / raw_seconds, "raw_text_tokens_per_second": n_tokens / raw_seconds,
        "gold_tokens_sentences_per_second": len(gold) / gold_seconds,
        "gold_tokens_tokens_per_second": n_tokens / gold_seconds,
    }
    print("| input | P | R | F1 | sentences/s | tokens/s |\n|---|---:|---:|---:|---:|---:|")
    for name, key, seconds in (("raw text (# text lines)", "raw_text", raw_seconds), ("gold tokens", "gold_tokens", gold_seconds)):
        r = report[key]
        print(f"| {name} | {r['precision']:.2f} | {r['recall']:.2f} | {r['f1']:.2f} | {len(gold) / seconds:.1f} | {n_tokens / seconds:.0f} |")
    print(f"sentences tokenised exactly: {100 * report['sentences_tokenised_exactly']:.2f} %; "
          f"unaligned predicates {counts['predicates_unaligned']}, arguments {counts['arguments_unaligned']}")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
