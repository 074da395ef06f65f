"""How much of a corpus's gold PropBank annotation the frame index covers.

For each ``.gold_conll`` file (the roleset id in the frameset column, e.g. ``kill.01``, read as
:attr:`Predicate.sense`): the share of predicates whose roleset is in the index; for those, the share of
their gold core-argument spans (``ARG0`` … ``ARG5``, ``ARGA``, also as ``C-`` and ``R-`` pieces) whose
label is a role of the roleset; and the share whose roleset is among ``rolesets_of(lemma)`` of the
predicate's lemma (the frame-file lemma column). Prints a table and writes
``benchmarks/out/frame_index_coverage.json`` with the rolesets the index lacks and the arguments outside
their roleset, most frequent first.

    PYTHONPATH=. python benchmarks/frame_index_coverage.py [--index data/propbank-frames/frames.json.gz]
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib

from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex
from data_pipeline.readers.conll12 import read_conll12

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "propbank-ewt"
OUT = ROOT / "benchmarks" / "out" / "frame_index_coverage.json"
CORE = frozenset(f"ARG{n}" for n in "012345A")
COUNTS = ("predicates", "predicates_in_index", "lemma_finds_roleset", "core_arguments", "core_arguments_in_roleset")


def shares(counts: dict) -> dict:
    """The counts with the three coverage shares."""
    return {
        **{key: counts[key] for key in COUNTS},
        "roleset_coverage": counts["predicates_in_index"] / max(1, counts["predicates"]),
        "core_argument_coverage": counts["core_arguments_in_roleset"] / max(1, counts["core_arguments"]),
        "lemma_coverage": counts["lemma_finds_roleset"] / max(1, counts["predicates"]),
    }


def coverage(index: FrameIndex, path: str | pathlib.Path) -> dict:
    """Coverage counts and shares of one ``.gold_conll`` file."""
    counts = collections.Counter()
    missing, outside = collections.Counter(), collections.Counter()
    for sentence in read_conll12(path):
        for predicate in sentence.predicates:
            counts["predicates"] += 1
            roleset = index.roleset(predicate.sense)
            counts["lemma_finds_roleset"] += predicate.sense in index.rolesets_of(predicate.lemma)
            if roleset is None:
                missing[predicate.sense] += 1
                continue
            counts["predicates_in_index"] += 1
            labels = {role.label for role in roleset.roles}
            for span in predicate.arguments:
                label = span.label.removeprefix("C-").removeprefix("R-")
                if label not in CORE:
                    continue
                counts["core_arguments"] += 1
                if label in labels:
                    counts["core_arguments_in_roleset"] += 1
                else:
                    outside[f"{predicate.sense} {span.label}"] += 1
    return {**shares(counts), "rolesets_missing": dict(missing.most_common()),
            "arguments_outside_roleset": dict(outside.most_common())}


def main() -> None:
    """Measure every file given (default: the PropBank-EWT train, dev and test splits) and their total."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=str(DEFAULT_FRAME_INDEX), help="frame index (default: the shipped one)")
    parser.add_argument("--data", nargs="+",
                        default=[str(DATA / f"{split}.gold_conll.gz") for split in ("train", "dev", "test")],
                        help=".gold_conll files with roleset ids in the frameset column")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()

    index = FrameIndex.load(args.index)
    files = {pathlib.Path(path).name: coverage(index, path) for path in args.data}
    summary = shares({key: sum(result[key] for result in files.values()) for key in COUNTS})
    record = {"index": args.index, "source": index.source, "rolesets": len(index), "files": files, "all": summary}
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print("| file | predicates | roleset in index | core args in roleset | roleset among lemma's |")
    print("|---|---|---|---|---|")
    for name, r in [*files.items(), ("all", summary)]:
        print(f"| {name} | {r['predicates']:,} | {100 * r['roleset_coverage']:.2f}% | "
              f"{100 * r['core_argument_coverage']:.3f}% of {r['core_arguments']:,} | "
              f"{100 * r['lemma_coverage']:.2f}% |")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
