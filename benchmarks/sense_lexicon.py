"""How well the sense lexicon (:mod:`lisa_tf.decoding.sense_choice`) narrows each predicate's rolesets.

Builds the lexicon from a training ``.gold_conll`` file and the frame index, then on a test file's gold
predicates counts: how often the gold roleset is among the form's candidates (the head can only be right
then), how many predicates get a fallback or nothing, and the accuracy of the most frequent training
roleset among the candidates (a model-free floor for the head). With a CoNLL-U file (UD English-EWT, gold
lemmas), it also checks the lemmatiser: for content words (VERB, AUX, NOUN, ADJ) whose gold lemma is an
index word, the share whose form the inflection table maps to that lemma.

    PYTHONPATH=. python benchmarks/sense_lexicon.py [--train FILE] [--test FILE] [--conllu FILE]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import pathlib

from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex
from data_pipeline.readers.conll12 import read_conll12
from lisa_tf.decoding.sense_choice import _index_words, build_lexicon, training_predicates

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "propbank-ewt"
OUT = ROOT / "benchmarks" / "out" / "sense_lexicon.json"


def lemma_check(conllu: pathlib.Path, index: FrameIndex) -> dict:
    """Share of content tokens whose gold lemma (an index word) the inflection table finds."""
    lemmas_of = _index_words(index)
    words = set(index.lemmas())
    counts = collections.Counter()
    opener = gzip.open if conllu.suffix == ".gz" else open
    with opener(conllu, "rt", encoding="utf-8") as lines:
        for line in lines:
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 10 or not cols[0].isdigit() or cols[3] not in ("VERB", "AUX", "NOUN", "ADJ"):
                continue
            lemma = cols[2].lower()
            if lemma not in words:
                continue
            counts["tokens"] += 1
            counts["found"] += lemma in lemmas_of.get(cols[1].lower(), ())
    return {**counts, "share": counts["found"] / max(1, counts["tokens"])}


def measure(train: pathlib.Path, test: pathlib.Path, index: FrameIndex) -> dict:
    training = read_conll12(train)
    frequency = collections.Counter(r for _, r in training_predicates(training) if r)
    senses = sorted(frequency)
    lexicon = build_lexicon(index, senses, training_predicates(training))
    row = {form: i for i, form in enumerate(lexicon["forms"])}
    counts = collections.Counter()
    for sentence in read_conll12(test):
        for predicate in sentence.predicates:
            gold = predicate.roleset
            if not gold:
                continue
            counts["predicates"] += 1
            form = sentence.words[predicate.position].lower()
            r = row.get(form)
            candidates = [senses[i] for i in lexicon["candidates"][r]] if r is not None else []
            if candidates:
                counts["with_candidates"] += 1
                counts["gold_among_candidates"] += gold in candidates
                counts["most_frequent_candidate_right"] += max(candidates, key=lambda c: frequency[c]) == gold
                counts["candidates_total"] += len(candidates)
            elif r is not None and lexicon["fallbacks"][r] >= 0:
                counts["fallback"] += 1
                counts["fallback_right"] += lexicon["rolesets"][lexicon["fallbacks"][r]] == gold
            else:
                counts["none"] += 1
    n = max(1, counts["predicates"])
    return {
        **counts,
        "forms": len(lexicon["forms"]),
        "candidate_recall": counts["gold_among_candidates"] / n,
        "most_frequent_candidate_accuracy": (counts["most_frequent_candidate_right"] + counts["fallback_right"]) / n,
        "mean_candidates": counts["candidates_total"] / max(1, counts["with_candidates"]),
        "lexicon_json_bytes": len(json.dumps(lexicon)),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=pathlib.Path, default=DATA / "train.gold_conll.gz")
    parser.add_argument("--test", type=pathlib.Path, default=DATA / "test.gold_conll.gz")
    parser.add_argument("--conllu", default=str(DATA / "test.conllu.gz"),
                        help="CoNLL-U file with gold lemmas for the lemmatiser check; empty: no check")
    parser.add_argument("--index", type=pathlib.Path, default=DEFAULT_FRAME_INDEX)
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args(argv)
    index = FrameIndex.load(args.index)
    result = {"lexicon": measure(args.train, args.test, index)}
    if args.conllu:
        result["lemmas"] = lemma_check(pathlib.Path(args.conllu), index)
    lex = result["lexicon"]
    print("| measure | value |\n|---|---:|")
    print(f"| test predicates with a gold roleset | {lex['predicates']:,} |")
    print(f"| gold roleset among the candidates | {100 * lex['candidate_recall']:.2f} % |")
    print(f"| mean candidates per predicate | {lex['mean_candidates']:.2f} |")
    print(f"| fallback (index roleset the model lacks) | {lex.get('fallback', 0):,} ({lex.get('fallback_right', 0):,} right) |")
    print(f"| no roleset known | {lex.get('none', 0):,} |")
    print(f"| most frequent candidate (no model) | {100 * lex['most_frequent_candidate_accuracy']:.2f} % |")
    if "lemmas" in result:
        print(f"| lemma of content words found by inflection (UD gold) | {100 * result['lemmas']['share']:.2f} % "
              f"of {result['lemmas']['tokens']:,} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
