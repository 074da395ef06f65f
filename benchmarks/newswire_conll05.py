"""Shipped models out of domain: the CoNLL-2005 test sets (WSJ newswire, Brown fiction) with gold predicates.

The models are trained on PropBank-EWT (web text, unified PropBank labels); CoNLL-2005 annotates the
verbs of WSJ section 23 and three Brown sections with PropBank I labels. Its labels are mapped to the
unified ones (``A0`` → ``ARG0``, ``AA`` → ``ARGA``, ``AM-PNC`` → ``ARGM-PRP``, ``AM-X`` → ``ARGM-X``,
``C-``/``R-`` kept), and each model labels the gold verbs (``evaluate --gold-predicates``, own parse,
frame constraints on). The two PropBank releases differ in places (some verbs' numbered arguments, and
labels such as ``AM-DIR`` against unified ``ARGM-DIR``/``ARG2`` choices), so the figures are a lower bound
of the models' newswire quality, comparable between models and releases of this project, not with
systems trained on CoNLL-2005. Also counted: arguments whose span covers their own predicate's token,
which the decoder rules out (:mod:`lisa_tf.decoding.frame_viterbi`).

    PYTHONPATH=. python benchmarks/newswire_conll05.py [--models srl srl-fast | PATH ...] [--conll05 DIR]

Prints one table (F1 overall and on the core and adjunct roles the model cards follow, per split) and
writes ``benchmarks/out/newswire_conll05.json``. Needs the CoNLL-2005 test sets with words
(``../shared/data/conll05st``; a clone without them is told so).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONLL05 = ROOT.parent / "shared" / "data" / "conll05st" / "conll05st-release"
OUT = ROOT / "benchmarks" / "out" / "newswire_conll05.json"
SPLITS = ("test.wsj", "test.brown")
ROLES = ("ARG0", "ARG1", "ARG2", "ARG3", "ARG4", "ARGM-TMP", "ARGM-ADV", "ARGM-LOC", "ARGM-MNR", "ARGM-CAU")
#: PropBank I adjunct names that the unified release renamed.
_RENAMED = {"PNC": "PRP"}


def unified_label(label: str) -> str:
    """A CoNLL-2005 label as unified PropBank writes it: ``R-A0`` → ``R-ARG0``, ``AM-PNC`` → ``ARGM-PRP``."""
    prefix, base = re.match(r"^((?:C-|R-)?)(.*)$", label).groups()
    if base == "AA":
        base = "ARGA"
    elif re.fullmatch(r"A\d", base):
        base = "ARG" + base[1:]
    elif base.startswith("AM-"):
        base = "ARGM-" + _RENAMED.get(base[3:], base[3:])
    return prefix + base


def unified(sentences: list) -> list:
    """``sentences`` with every argument label mapped by :func:`unified_label`."""
    return [dataclasses.replace(s, predicates=[dataclasses.replace(p, arguments=[
        dataclasses.replace(a, label=unified_label(a.label)) for a in p.arguments]) for p in s.predicates])
        for s in sentences]


def covering_own_predicate(sentences: list) -> int:
    """Arguments (not ``V``) whose span covers their predicate's token."""
    return sum(a.label != "V" and a.start <= p.position <= a.end
               for s in sentences for p in s.predicates for a in p.arguments)


def measure(model_name: str, conll05: pathlib.Path) -> dict:
    from data_pipeline.readers.conll05 import read_conll05
    from lisa_tf.evaluation.runs import evaluate_models
    from lisa_tf.models.runs import load_model_file
    from lisa_tf.packages.finding import model_path

    path = model_path(model_name, "srl", "--models")
    model = load_model_file(path / "model.keras" if path.is_dir() else path)
    result = {}
    for split in SPLITS:
        gold = unified(read_conll05(conll05 / split))
        metrics, gold, predicted = evaluate_models([model], gold, names=[model_name], data=str(conll05 / split),
                                                   gold_predicates=True, return_sentences=True)
        srl = metrics["srl"]
        result[split] = {"sentences": len(gold), "predicates": sum(len(s.predicates) for s in gold),
                         "f1": srl["f1"], "precision": srl["precision"], "recall": srl["recall"],
                         "per_role": {role: srl["per_role"].get(role, {}).get("f1") for role in ROLES},
                         "covering_own_predicate": covering_own_predicate(predicted)}
    return result


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["srl", "srl-fast"],
                        help="shipped model names or paths (packages, .keras files, runs)")
    parser.add_argument("--conll05", type=pathlib.Path, default=CONLL05,
                        help="the CoNLL-2005 release directory with test.wsj and test.brown (words included)")
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args(argv)
    if not all((args.conll05 / split / "words").is_dir() for split in SPLITS):
        sys.exit(f"--conll05 {args.conll05}: expected the CoNLL-2005 release with test.wsj/words and "
                 "test.brown/words (the public test sets)")
    results = {name: measure(name, args.conll05) for name in args.models}
    print("| model | split | predicates | F1 | " + " | ".join(ROLES) + " | arguments covering their predicate |")
    print("|---|---|---:|---:|" + "---:|" * len(ROLES) + "---:|")
    for name, splits in results.items():
        for split, row in splits.items():
            roles = " | ".join("—" if row["per_role"][r] is None else f"{row['per_role'][r]:.2f}" for r in ROLES)
            print(f"| {name} | {split} | {row['predicates']:,} | {row['f1']:.2f} | {roles} | {row['covering_own_predicate']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"conll05": str(args.conll05), "models": results}, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
