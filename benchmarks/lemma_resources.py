"""Which English lemma resource best gives the sense lexicon the lemma of a word form.

The sense lexicon (:mod:`lisa_tf.decoding.sense_choice`) needs, for a predicate's word form, the frame index
words it can be an inflection of. This compares, on UD English-EWT's gold lemmas, regular inflection run
backwards (what the lexicon did alone) with three resources on PyPI, each as a table from word form to
lemmas, used with no part of speech (the lexicon has none), alone and added to the regular forms:

- ``lemminflect`` (its dictionary, from the SPECIALIST Lexicon: every lemma of a form, all parts of speech);
- ``simplemma`` (its English dictionary: one lemma per form);
- ``spacy-lookups-data`` (``en_lemma_lookup``, one lemma per form, and the irregular ``en_lemma_exc``).

Counted over the content tokens (VERB, AUX, NOUN, ADJ) whose gold lemma is a word of the frame index, as
``benchmarks/sense_lexicon.py`` counts them: *found*, the gold lemma is among the form's lemmas;
*irregular verbs*, the same over the VERB and AUX tokens whose form no regular inflection of the gold lemma
gives (``lent``, ``went``, ``was``); and over all content tokens, *wrong*, the form's lemmas hold an index
word that is neither the gold lemma nor the form itself (``former`` read as ``form``; phrasal lemmas such as
``better_off``, found through their first word on purpose, not counted). Also: the
installed size, the time to import and load the table, and the licence of the code and of the data.

The resources are not dependencies of the project; install them anywhere and name the directory:

    pip install --no-deps --target /tmp/lemma-resources lemminflect simplemma spacy-lookups-data
    PYTHONPATH=.:/tmp/lemma-resources python benchmarks/lemma_resources.py
"""

from __future__ import annotations

import argparse
import collections
import gzip
import importlib
import json
import pathlib
import sys
import time
from typing import Callable

from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex
from lisa_tf.decoding.sense_choice import regular_inflections

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "propbank-ewt"
OUT = ROOT / "benchmarks" / "out" / "lemma_resources.json"
CONTENT = ("VERB", "AUX", "NOUN", "ADJ")
LICENCES = {
    "lemminflect": "MIT (code); data from the NLM SPECIALIST Lexicon (open, NLM terms and conditions)",
    "simplemma": "MIT (code); English data from lemmatization-lists (ODbL), Wiktionary, spaCy lookups …",
    "spacy_lookups_data": "MIT (package); English lemma tables under the WordNet 3.0 licence (en_license.txt)",
}


def conllu_tokens(paths: list[pathlib.Path]):
    """``(form, upos, gold lemma)`` of the content tokens of CoNLL-U files, lower-cased."""
    for path in paths:
        with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                cols = line.rstrip("\n").split("\t")
                if len(cols) == 10 and cols[0].isdigit() and cols[3] in CONTENT:
                    yield cols[1].lower(), cols[3], cols[2].lower()


def _lemminflect() -> Callable[[str], set]:
    import lemminflect

    lemminflect.getAllLemmas("loaded")  # its tables load on first use
    return lambda form: {lemma.lower() for lemmas in lemminflect.getAllLemmas(form).values() for lemma in lemmas}


def _simplemma() -> Callable[[str], set]:
    from simplemma.strategies.dictionaries import DefaultDictionaryFactory

    table = DefaultDictionaryFactory().get_dictionary("en")
    return lambda form: {table[form].lower()} if form in table else set()


def _spacy_lookups() -> Callable[[str], set]:
    import spacy_lookups_data

    data = pathlib.Path(spacy_lookups_data.__file__).parent / "data"
    with gzip.open(data / "en_lemma_lookup.json.gz", "rt", encoding="utf-8") as file:
        lookup = json.load(file)
    with gzip.open(data / "en_lemma_exc.json.gz", "rt", encoding="utf-8") as file:
        exceptions = json.load(file)
    table: dict[str, set] = collections.defaultdict(set)
    for form, lemma in lookup.items():
        table[form.lower()].add(lemma.lower())
    for forms in exceptions.values():
        for form, lemmas in forms.items():
            table[form.lower()].update(lemma.lower() for lemma in lemmas)
    return lambda form: table.get(form, set())


RESOURCES = {"lemminflect": _lemminflect, "simplemma": _simplemma, "spacy_lookups_data": _spacy_lookups}


def _installed_bytes(module: str) -> int:
    directory = pathlib.Path(importlib.import_module(module).__file__).parent
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


def score(lemmas_of: Callable[[str], set], tokens: list, words: set) -> dict:
    """*found*, *irregular verbs* and *wrong* (module docstring) of one form → lemmas function."""
    counts = collections.Counter()
    irregular_types, irregular_found = set(), set()
    for form, upos, gold in tokens:
        lemmas = lemmas_of(form)
        counts["wrong"] += any("_" not in lemma and " " not in lemma for lemma in (lemmas & words) - {gold, form})
        if gold not in words:
            continue
        found = gold in lemmas or gold == form
        counts["tokens"] += 1
        counts["found"] += found
        if upos in ("VERB", "AUX") and form not in regular_inflections(gold):
            counts["irregular_verb_tokens"] += 1
            counts["irregular_verbs_found"] += found
            irregular_types.add((form, gold))
            if found:
                irregular_found.add((form, gold))
    return {**counts, "content_tokens": len(tokens),
            "share_found": counts["found"] / max(1, counts["tokens"]),
            "share_irregular_verbs_found": counts["irregular_verbs_found"] / max(1, counts["irregular_verb_tokens"]),
            "irregular_verb_types": len(irregular_types), "irregular_verb_types_found": len(irregular_found),
            "share_wrong": counts["wrong"] / max(1, len(tokens))}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conllu", type=pathlib.Path, nargs="+", default=[DATA / "test.conllu.gz"],
                        help="CoNLL-U files with gold lemmas (default: PropBank-EWT test)")
    parser.add_argument("--index", type=pathlib.Path, default=DEFAULT_FRAME_INDEX)
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args(argv)
    words = {word.lower() for word in FrameIndex.load(args.index).lemmas()}
    regular: dict[str, set] = collections.defaultdict(set)
    for word in words:
        for form in regular_inflections(word):
            regular[form].add(word)
    tokens = list(conllu_tokens(args.conllu))
    result = {"regular inflection": {**score(lambda form: regular.get(form, set()), tokens, words),
                                     "bytes": 0, "load_seconds": 0.0, "licence": "(the project's own rules)"}}
    for name, load in RESOURCES.items():
        try:
            start = time.perf_counter()
            lemmas_of = load()
            seconds = time.perf_counter() - start
        except ImportError as error:
            print(f"{name}: not installed ({error}); skipped", file=sys.stderr)
            continue
        result[name] = {**score(lemmas_of, tokens, words), "bytes": _installed_bytes(name),
                        "load_seconds": seconds, "licence": LICENCES[name]}
        result[f"regular + {name}"] = score(lambda form, f=lemmas_of: regular.get(form, set()) | f(form), tokens, words)
    print("| lemmas from | gold lemma found | irregular verb tokens found | irregular verb types found "
          "| wrong index lemma | installed | import + load |\n|---|---:|---:|---:|---:|---:|---:|")
    for name, row in result.items():
        size = f"{row['bytes'] / 1e6:.1f} MB" if "bytes" in row else ""
        load = f"{row['load_seconds']:.2f} s" if "load_seconds" in row else ""
        print(f"| {name} | {100 * row['share_found']:.2f} % of {row['tokens']:,} "
              f"| {100 * row['share_irregular_verbs_found']:.2f} % of {row['irregular_verb_tokens']:,} "
              f"| {row['irregular_verb_types_found']} of {row['irregular_verb_types']} "
              f"| {100 * row['share_wrong']:.2f} % of {row['content_tokens']:,} | {size} | {load} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
