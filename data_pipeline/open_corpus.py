"""Build the open PropBank-EWT corpus: PropBank skeletons + UD English-EWT words and dependency trees.

The propbank-release skeletons (``data/google/ewt/<genre>/00/<doc>.xml.gold_skel[.gz]``) carry gold POS,
gold constituency parse bits and unified-PropBank roles but mask every word as ``[WORD]``. UD English-EWT
(``not-to-release/sources/<genre>/<doc>.xml.conllu[.gz]``) has the same documents with words and gold UD
dependencies. This module pairs them document by document, keeps the official split
(propbank-release ``docs/evaluation/ewt.{train,dev,test}.txt``, which is the UD split) and writes, per split,

- ``<split>.gold_conll.gz``: CoNLL-2012 ``.gold_conll`` layout, word column = UD FORM, POS = the skeleton's
  gold PTB tag, parse bits and predicate columns from the skeleton (frameset column = roleset id);
- ``<split>.conllu.gz``: the UD sentences of exactly the same sentences, verbatim (plus one comment naming
  the skeleton sentence), so syntactic word *i* of a CoNLL-U sentence is token *i* of its gold_conll sentence;
- ``README.md``: the counts, and every sentence skipped with the reason.

Sentence alignment: within a document, sentences are paired in order when both files have the same
number of sentences; otherwise by a minimum-cost alignment over sentence lengths (pair, or leave one
side unpaired). A skeleton sentence is kept only when it is paired with a UD sentence of the same number
of syntactic words; every other skeleton sentence is skipped and listed. Output is byte-deterministic
(gzip header with mtime 0 and a fixed file name).

Usage::

    python -m data_pipeline.open_corpus --propbank ../shared/data/propbank-release \\
        --ud ../shared/data/ud-english-ewt --out data/propbank-ewt
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import os
import sys
from typing import Optional, Sequence

from data_pipeline.column_file import Block, read_lines
from data_pipeline.errors import DataFormatError
from data_pipeline.readers.conll12 import gold_conll_lines, read_conll12
from data_pipeline.readers.conllu import ConlluCounts, conllu_blocks
from data_pipeline.sentence import Sentence

SPLITS = ("train", "dev", "test")
SKELETON_DIR = ("data", "google", "ewt")
UD_SOURCES = ("not-to-release", "sources")


@dataclasses.dataclass
class SkippedSentence:
    """A skeleton sentence left out of the corpus, and why."""

    doc_id: str
    index: int
    skeleton_tokens: int
    ud_tokens: Optional[int]  # None: no UD sentence was paired with it


@dataclasses.dataclass
class SplitSummary:
    """Counts of one split as written (``sentences`` etc. count kept sentences only)."""

    split: str
    listed_docs: int = 0
    docs_without_propbank: int = 0
    docs: int = 0
    sentences: int = 0
    tokens: int = 0
    predicates: int = 0
    arguments: int = 0
    pos_agree: int = 0
    ud_unpaired: int = 0
    skipped: list[SkippedSentence] = dataclasses.field(default_factory=list)


def split_documents(propbank: str, split: str) -> list[str]:
    """Documents of an official EWT split as ``<genre>/<doc>.xml``, in list order.

    ``docs/evaluation/ewt.<split>.txt`` lists one document a line as ``<genre>/00/<doc>.xml`` (the dev
    list adds a ``.conllu`` suffix); both spellings are accepted.
    """
    path = os.path.join(propbank, "docs", "evaluation", f"ewt.{split}.txt")
    documents = []
    for number, line in enumerate(read_lines(path), start=1):
        name = line.strip()
        if not name:
            continue
        if name.endswith(".conllu"):
            name = name[: -len(".conllu")]
        parts = name.split("/")
        if len(parts) != 3 or parts[1] != "00" or not parts[2].endswith(".xml"):
            raise DataFormatError(path, number, f"expected '<genre>/00/<doc>.xml[.conllu]', found {line!r}")
        documents.append(f"{parts[0]}/{parts[2]}")
    if not documents:
        raise DataFormatError(path, None, "expected a list of documents, found an empty file")
    return documents


def _existing(base: str) -> Optional[str]:
    for candidate in (base + ".gz", base):
        if os.path.isfile(candidate):
            return candidate
    return None


def align_sentences(left: Sequence[int], right: Sequence[int]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of sentences of one document, from their token counts.

    Same number of sentences: paired in order. Otherwise a minimum-cost monotone alignment where pairing
    two sentences costs 0 if their lengths agree and 1 if not, and leaving a sentence unpaired costs 1
    (ties prefer pairing). Pairs may still differ in length; the caller checks.
    """
    if len(left) == len(right):
        return list(zip(range(len(left)), range(len(right))))
    n, m = len(left), len(right)
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                cost[i][j] = i + j
                continue
            cost[i][j] = min(
                cost[i - 1][j - 1] + (left[i - 1] != right[j - 1]),
                cost[i - 1][j] + 1,
                cost[i][j - 1] + 1,
            )
    pairs = []
    i, j = n, m
    while i > 0 and j > 0:
        if cost[i][j] == cost[i - 1][j - 1] + (left[i - 1] != right[j - 1]):
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif cost[i][j] == cost[i - 1][j] + 1:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def _conllu_block_lines(block: Block, reference: str) -> list[str]:
    return list(block.comments) + [f"# propbank_sentence = {reference}"] + ["\t".join(row) for row in block.rows] + [""]


def build_split(propbank: str, ud: str, split: str) -> tuple[list[str], list[str], SplitSummary]:
    """The gold_conll lines, CoNLL-U lines and summary of one split.

    Raises:
        DataFormatError: a listed document has a skeleton but no UD file, or any file is malformed.
    """
    summary = SplitSummary(split)
    conll_lines: list[str] = []
    conllu_lines: list[str] = []
    for document in split_documents(propbank, split):
        summary.listed_docs += 1
        genre, name = document.split("/")
        skeleton_path = _existing(os.path.join(propbank, *SKELETON_DIR, genre, "00", name + ".gold_skel"))
        if skeleton_path is None:
            summary.docs_without_propbank += 1
            continue
        ud_path = _existing(os.path.join(ud, *UD_SOURCES, genre, name + ".conllu"))
        if ud_path is None:
            raise DataFormatError(
                os.path.join(ud, *UD_SOURCES, genre, name + ".conllu.gz"),
                None,
                f"expected the UD file with the words of {skeleton_path}, found none",
            )
        skeleton = read_conll12(skeleton_path)
        parsed = list(conllu_blocks(ud_path, ConlluCounts()))
        pairs = dict(align_sentences([len(s) for s in skeleton], [len(s) for _, s in parsed]))
        summary.ud_unpaired += len(parsed) - len(pairs)
        kept: list[Sentence] = []
        doc_id = skeleton[0].doc_id
        for i, sentence in enumerate(skeleton):
            j = pairs.get(i)
            if j is None or len(parsed[j][1]) != len(sentence):
                ud_tokens = None if j is None else len(parsed[j][1])
                summary.skipped.append(SkippedSentence(doc_id, i, len(sentence), ud_tokens))
                continue
            block, tree = parsed[j]
            kept.append(dataclasses.replace(sentence, words=tree.words, heads=tree.heads, dep_labels=tree.dep_labels))
            conllu_lines.extend(_conllu_block_lines(block, f"{doc_id} {i}"))
            summary.tokens += len(sentence)
            summary.predicates += len(sentence.predicates)
            summary.arguments += sentence.num_arguments()
            summary.pos_agree += sum(a == b for a, b in zip(sentence.pos, tree.pos or []))
        if kept:
            summary.docs += 1
            summary.sentences += len(kept)
            conll_lines.extend(gold_conll_lines(doc_id, kept))
    return conll_lines, conllu_lines, summary


def write_gzip(path: str, lines: Sequence[str]) -> None:
    """Write lines (``\\n``-terminated, UTF-8) gzip-compressed with a reproducible header (mtime 0, fixed name)."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    name = os.path.basename(path)
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename=name, mode="wb", fileobj=raw, mtime=0, compresslevel=9) as handle:
            handle.write(data)


def _readme(summaries: Sequence[SplitSummary]) -> str:
    def total(field: str) -> int:
        return sum(getattr(s, field) for s in summaries)

    rows = [
        f"| {s.split} | {s.docs:,} | {s.sentences:,} | {s.tokens:,} | {s.predicates:,} | {s.arguments:,} | "
        f"{len(s.skipped):,} | {s.docs_without_propbank:,} |"
        for s in summaries
    ]
    skipped = sum(len(s.skipped) for s in summaries)
    rows.append(
        f"| **all** | {total('docs'):,} | {total('sentences'):,} | {total('tokens'):,} | {total('predicates'):,} | "
        f"{total('arguments'):,} | {skipped:,} | {total('docs_without_propbank'):,} |"
    )
    pos_rate = 100.0 * total("pos_agree") / max(1, total("tokens"))
    skipped_rows = [
        f"| {s.split} | `{k.doc_id}` | {k.index} | {k.skeleton_tokens} | "
        f"{'no UD sentence' if k.ud_tokens is None else k.ud_tokens} |"
        for s in summaries
        for k in s.skipped
    ]
    lines = [
        "# PropBank-EWT (open SRL corpus with gold UD dependencies)",
        "",
        "Unified PropBank annotation of the English Web Treebank (propbank-release skeletons) with the words",
        "and gold dependency trees of UD English-EWT, in the official UD train/dev/test split. Licence:",
        "CC BY-SA 4.0 (see `LICENSE`); sources and versions in `ATTRIBUTION`. This file is written by the builder:",
        "",
        "```",
        "python -m data_pipeline.open_corpus --propbank ../shared/data/propbank-release \\",
        "    --ud ../shared/data/ud-english-ewt --out data/propbank-ewt",
        "```",
        "",
        "## Files",
        "",
        "- `{train,dev,test}.gold_conll.gz`: CoNLL-2012 `.gold_conll` layout (read with `read_conll12` or",
        "  `python -m lisa_tf stats --format conll12`). Columns: doc id, part (0), token number, word (UD FORM),",
        "  POS (the skeleton's gold PTB tag), parse bit (gold constituency tree), predicate lemma (PropBank frame",
        "  file), frameset (the full roleset id, e.g. `love.01`), word sense `-`, speaker `-`, named entities `*`,",
        "  one bracket column per predicate, coreference `-`.",
        "- `{train,dev,test}.conllu.gz`: the UD English-EWT sentences of exactly the same sentences in the same",
        "  order, copied verbatim with one added comment `# propbank_sentence = <doc id> <sentence index>`.",
        "  Their syntactic words (multiword-token ranges `n-m` and empty nodes `n.k` excluded) are the tokens of",
        "  the gold_conll sentences, one for one; HEAD/DEPREL are gold UD v2 basic dependencies.",
        "",
        "## Counts",
        "",
        "Sentences, tokens, predicates and arguments (srl-eval counting: `V` excluded, `C-X` joined to its `X`)",
        "count the sentences written. *Skipped*: skeleton sentences with no UD sentence of the same length (listed",
        "below). *No PropBank*: documents of the UD split list that have no skeleton.",
        "",
        "| split | docs | sentences | tokens | predicates | arguments | skipped | no PropBank |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"The skeleton POS equals the UD XPOS on {pos_rate:.2f}% of the tokens written (UD corrected some tags;",
        "the gold_conll POS column keeps the skeleton's). UD sentences left without a skeleton sentence by the",
        f"sentence alignment: {total('ud_unpaired')}.",
        "",
        "## Alignment",
        "",
        "Documents are paired by name (`data/google/ewt/<genre>/00/<doc>.xml.gold_skel` with",
        "`not-to-release/sources/<genre>/<doc>.xml.conllu`). Within a document, sentences are paired in order",
        "when both sides have the same number of sentences, otherwise by a minimum-cost alignment over",
        "sentence lengths. A skeleton sentence is written only when its UD sentence has the same number of",
        "syntactic words; word *i* of the UD sentence then fills token *i*.",
        "",
        "## Skipped sentences",
        "",
        "| split | document | sentence | skeleton tokens | UD tokens |",
        "|---|---|---|---|---|",
        *skipped_rows,
        "",
    ]
    return "\n".join(lines)


def build(propbank: str, ud: str, out: str) -> list[SplitSummary]:
    """Write the corpus files and README into ``out`` and return the per-split summaries."""
    os.makedirs(out, exist_ok=True)
    summaries = []
    for split in SPLITS:
        conll_lines, conllu_lines, summary = build_split(propbank, ud, split)
        write_gzip(os.path.join(out, f"{split}.gold_conll.gz"), conll_lines)
        write_gzip(os.path.join(out, f"{split}.conllu.gz"), conllu_lines)
        summaries.append(summary)
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8", newline="\n") as handle:
        handle.write(_readme(summaries))
    return summaries


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry point: build, then print one summary line per split."""
    parser = argparse.ArgumentParser(prog="python -m data_pipeline.open_corpus", description=__doc__.split("\n")[0])
    parser.add_argument("--propbank", required=True, help="propbank-release checkout (data/google/ewt, docs/evaluation)")
    parser.add_argument("--ud", required=True, help="UD_English-EWT checkout (not-to-release/sources)")
    parser.add_argument("--out", required=True, help="output directory, e.g. data/propbank-ewt")
    args = parser.parse_args(argv)
    try:
        summaries = build(args.propbank, args.ud, args.out)
    except DataFormatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for s in summaries:
        print(
            f"{s.split}: docs {s.docs} sentences {s.sentences} tokens {s.tokens} predicates {s.predicates} "
            f"arguments {s.arguments} skipped {len(s.skipped)} (documents without PropBank: {s.docs_without_propbank})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
