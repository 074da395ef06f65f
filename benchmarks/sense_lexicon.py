"""How well the sense lexicon (:mod:`lisa_tf.decoding.sense_choice`) narrows each predicate's rolesets.

Builds the lexicon from a training ``.gold_conll`` file and the frame index, then on a test file's gold
predicates counts: how often the gold roleset is among the form's candidates (the head can only be right
then), how many predicates get a fallback or nothing, and the accuracy of the most frequent training
roleset among the candidates (a model-free floor for the head). With a CoNLL-U file (UD English-EWT, gold
lemmas), it also checks the lemmatiser: for content words (VERB, AUX, NOUN, ADJ) whose gold lemma is an
index word, the share whose form the inflection table maps to that lemma, the same over the irregular
verb tokens (VERB, AUX whose form no regular inflection of the gold lemma gives: ``lent``, ``went``), and
over all content tokens the share given a single-word index lemma that is neither the gold lemma nor the
form itself (``former`` read as ``form``). Each figure is given for the lexicon as built (regular
inflection corrected by the word-form table of :mod:`data_pipeline.word_forms`) and, as before that
table, by regular inflection alone. With the CoNLL-2005 test sets (``--conll05``: their words and target
verbs, no rolesets), it counts the verbs whose most frequent training roleset among their candidates (or
whose fallback) is no verb's: a roleset without a verb alias (``fine.04``, "alright, ok", for ``fined``).

    PYTHONPATH=. python benchmarks/sense_lexicon.py [--train FILE] [--test FILE] [--conllu FILE] [--conll05 DIR]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import pathlib

from benchmarks.lemma_resources import conllu_tokens, score
from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex
from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.word_forms import WordForms, shipped_word_forms
from lisa_tf.decoding.sense_choice import _index_forms, _index_words, build_lexicon, training_predicates

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "propbank-ewt"
CONLL05 = ROOT.parent / "shared" / "data" / "conll05st" / "conll05st-release"
OUT = ROOT / "benchmarks" / "out" / "sense_lexicon.json"


def lemma_check(conllu: pathlib.Path, index: FrameIndex, word_forms: WordForms) -> dict:
    """Share of content tokens whose gold lemma (an index word) the inflection table finds, of irregular
    verb tokens, and share of content tokens given a wrong index lemma (module docstring)."""
    lemmas_of = {form: {word.lower() for word in words} for form, words in _index_words(index, word_forms).items()}
    words = {word.lower() for word in index.lemmas()}
    return score(lambda form: lemmas_of.get(form, set()), list(conllu_tokens([conllu])), words)


def verb_roleset_check(conll05: pathlib.Path, lexicon: dict, row: dict, index: FrameIndex,
                       frequency: collections.Counter) -> collections.Counter:
    """On the CoNLL-2005 test sets' target verbs: how many there are, and how many get as their most frequent
    candidate (or fallback) a roleset with no verb alias, which a verb cannot have (module docstring)."""
    def verbal(roleset_id: str) -> bool:
        roleset = index.roleset(roleset_id)
        return roleset is None or any(tag == "v" for _, tag in roleset.aliases)

    counts = collections.Counter()
    for split in ("test.wsj", "test.brown"):
        with gzip.open(conll05 / split / "words" / f"{split}.words.gz", "rt") as words, \
                gzip.open(conll05 / split / "props" / f"{split}.props.gz", "rt") as props:
            for word, prop in zip(words, props):
                target = prop.split()[:1]
                if not target or target[0] == "-":
                    continue
                counts["conll05_verbs"] += 1
                r = row.get(word.strip().lower())
                if r is None:
                    continue
                options = [lexicon["rolesets"][i] for i in lexicon["candidates"][r]]
                if not options and lexicon["fallbacks"][r] >= 0:
                    options = [lexicon["rolesets"][lexicon["fallbacks"][r]]]
                counts["conll05_verbs_given_no_verb_roleset"] += bool(options) and not verbal(
                    max(options, key=lambda o: frequency[o]))
    return counts


def measure(train: pathlib.Path, test: pathlib.Path, index: FrameIndex, word_forms: WordForms,
            conll05: pathlib.Path | None = None) -> dict:
    training = read_conll12(train)
    frequency = collections.Counter(r for _, r in training_predicates(training) if r)
    senses = sorted(frequency)
    lexicon = build_lexicon(index, senses, training_predicates(training), _index_forms(index, word_forms))
    row = {form: i for i, form in enumerate(lexicon["forms"])}
    counts = collections.Counter()
    if conll05 is not None:
        counts.update(verb_roleset_check(conll05, lexicon, row, index, frequency))
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
    parser.add_argument("--conll05", default=str(CONLL05) if CONLL05.is_dir() else "",
                        help="the CoNLL-2005 release directory (test.wsj, test.brown with words) for the verb "
                             "roleset check; empty: no check")
    parser.add_argument("--index", type=pathlib.Path, default=DEFAULT_FRAME_INDEX)
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args(argv)
    index = FrameIndex.load(args.index)
    tables = {"": shipped_word_forms(), "_regular_only": WordForms({}, {})}
    conll05 = pathlib.Path(args.conll05) if args.conll05 else None
    result = {f"lexicon{key}": measure(args.train, args.test, index, forms, conll05) for key, forms in tables.items()}
    if args.conllu:
        result.update({f"lemmas{key}": lemma_check(pathlib.Path(args.conllu), index, forms) for key, forms in tables.items()})
    after, before = result["lexicon"], result["lexicon_regular_only"]

    def row(name, value):
        print(f"| {name} | {value(before)} | {value(after)} |")

    print("| measure | regular inflection only | with the word-form table |\n|---|---:|---:|")
    row("test predicates with a gold roleset", lambda lex: f"{lex['predicates']:,}")
    row("gold roleset among the candidates", lambda lex: f"{100 * lex['candidate_recall']:.2f} %")
    row("mean candidates per predicate", lambda lex: f"{lex['mean_candidates']:.2f}")
    row("fallback (index roleset the model lacks)", lambda lex: f"{lex.get('fallback', 0):,} ({lex.get('fallback_right', 0):,} right)")
    row("no roleset known", lambda lex: f"{lex.get('none', 0):,}")
    row("most frequent candidate (no model)", lambda lex: f"{100 * lex['most_frequent_candidate_accuracy']:.2f} %")
    row("forms in the lexicon", lambda lex: f"{lex['forms']:,}")
    if conll05 is not None:
        row("CoNLL-2005 test verbs given a roleset with no verb alias", lambda lex: f"{lex['conll05_verbs_given_no_verb_roleset']:,} "
            f"of {lex['conll05_verbs']:,}")
    if "lemmas" in result:
        after, before = result["lemmas"], result["lemmas_regular_only"]
        row("lemma of content words found (UD gold)", lambda lem: f"{100 * lem['share_found']:.2f} % of {lem['tokens']:,}")
        row("lemma of irregular verb tokens found", lambda lem: f"{100 * lem['share_irregular_verbs_found']:.2f} % "
            f"of {lem['irregular_verb_tokens']:,} ({lem['irregular_verb_types_found']} of {lem['irregular_verb_types']} types)")
        row("content tokens given a wrong index lemma", lambda lem: f"{100 * lem['share_wrong']:.2f} % of {lem['content_tokens']:,}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
