"""Reader and writer for the combined column format of LISA's preprocessing (Strubell et al. 2018).

Tab-separated, one token per line, blank line between sentences; 0-based columns::

    0 domain   1 sentence id   2 token id   3 word   4 gold POS   5 auto POS
    6 dependency head (1-based, 0 = root)   7 dependency label   8 '_'   9 verb sense
    10 predicate lemma ('-' on non-predicates)   11, 12 placeholders   13 named entity (BIO)
    14 ... one BIO SRL column per predicate (B-A0, I-A0, B-V, O, ...)

The predicate of SRL column k is the k-th token whose lemma column is not ``-``; the number of such
tokens must equal the number of SRL columns. BIO tags become spans with
:func:`data_pipeline.spans.bio_to_spans`.

What a :class:`Sentence` keeps: words, gold POS (column 4), heads and labels (``None`` when every head
cell is ``_``), the domain as :attr:`Sentence.doc_id`, predicates with lemma, sense (``None`` for ``-``)
and spans. Columns without a :class:`Sentence` field (auto POS, placeholders, named entities) are not
kept; the writer fills them with the gold POS, ``-`` and ``O``.
"""

from __future__ import annotations

import gzip
import os
from typing import Iterable, Optional

from data_pipeline.column_file import Block, dependency_labels, natural_number, read_blocks, sentence_width
from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Predicate, Sentence
from data_pipeline.spans import bio_to_spans, spans_to_bio

N_FIXED = 14
_DOMAIN, _SENT, _TOKEN, _WORD, _GOLD_POS, _AUTO_POS, _HEAD, _DEPREL, _SENSE, _LEMMA = 0, 1, 2, 3, 4, 5, 6, 7, 9, 10
NO_PREDICATE = "-"
_MISSING = "_"


def read_lisa(path: str | os.PathLike) -> list[Sentence]:
    """Read a LISA combined-format file (plain or gzip).

    Raises:
        DataFormatError: fewer than 14 columns or a ragged sentence, token ids that do not count up from 0 or 1,
            a head outside the sentence, heads on some tokens only, a number of predicates different from the
            number of SRL columns, a tag that is not ``O``/``B-X``/``I-X``, non-UTF-8 bytes.
    """
    return [_sentence(block) for block in read_blocks(path, separator="\t")]


def _sentence(block: Block) -> Sentence:
    rows, path = block.rows, block.path
    width = sentence_width(rows, path, block.first_line, "tab-separated columns")
    if width < N_FIXED:
        raise DataFormatError(path, block.first_line, f"expected at least {N_FIXED} tab-separated columns, found {width}")
    start: Optional[int] = None
    for r, row in enumerate(rows):
        line = block.line_of(r)
        token = natural_number(row[_TOKEN])
        if token is None or (start is not None and token != start + r) or (start is None and row[_TOKEN] not in ("0", "1")):
            expected = "0 or 1" if start is None else str(start + r)
            raise DataFormatError(path, line, f"expected token id {expected} in column 3, found {row[_TOKEN]!r}")
        if start is None:
            start = token
    n = len(rows)
    head_cells = [row[_HEAD] for row in rows]
    heads: Optional[list[int]] = None
    if any(cell != _MISSING for cell in head_cells):
        heads = []
        for r, cell in enumerate(head_cells):
            head = natural_number(cell)
            if head is None or head > n:
                raise DataFormatError(path, block.line_of(r), f"expected a head between 0 and {n} in column 7, found {cell!r}")
            heads.append(head)
    n_srl = width - N_FIXED
    targets = [r for r, row in enumerate(rows) if row[_LEMMA] != NO_PREDICATE]
    if len(targets) != n_srl:
        raise DataFormatError(
            path,
            block.first_line,
            f"expected one SRL column per predicate (token whose lemma column 11 is not '-'): {len(targets)} predicates "
            f"but {n_srl} SRL columns",
        )
    predicates = []
    for k, position in enumerate(targets):
        tags = [row[N_FIXED + k] for row in rows]
        try:
            spans = bio_to_spans(tags)
        except ValueError as error:
            bad = next(r for r, tag in enumerate(tags) if not (tag == "O" or tag[:2] in ("B-", "I-")))
            raise DataFormatError(path, block.line_of(bad), f"SRL column {k + 1}: {error}") from error
        sense = rows[position][_SENSE]
        predicates.append(
            Predicate(
                position=position,
                lemma=rows[position][_LEMMA],
                sense=None if sense in (NO_PREDICATE, _MISSING) else sense,
                arguments=tuple(spans),
            )
        )
    return Sentence(
        words=[row[_WORD] for row in rows],
        pos=[row[_GOLD_POS] for row in rows],
        heads=heads,
        dep_labels=None if heads is None else dependency_labels([row[_DEPREL] for row in rows]),
        predicates=predicates,
        source=path,
        line=block.first_line,
        doc_id=rows[0][_DOMAIN],
    )


def lisa_lines(sentence: Sentence, sentence_id: int, domain: str = "-") -> list[str]:
    """The LISA lines of one sentence (no trailing blank line); token ids from 0.

    Raises:
        ValueError: a word, lemma or label containing whitespace, or a predicate whose spans overlap (BIO cannot
            express them; :func:`data_pipeline.spans.overlapping_spans` finds them beforehand).
    """
    n = len(sentence)
    pos = sentence.pos if sentence.pos is not None else [_MISSING] * n
    heads = [str(h) for h in sentence.heads] if sentence.heads is not None else [_MISSING] * n
    dep_labels = sentence.dep_labels if sentence.dep_labels is not None else [_MISSING] * n
    lemma = [NO_PREDICATE] * n
    sense = [NO_PREDICATE] * n
    ordered = sorted(sentence.predicates, key=lambda p: p.position)
    for predicate in ordered:
        lemma[predicate.position] = predicate.lemma
        sense[predicate.position] = predicate.sense or NO_PREDICATE
    srl = [spans_to_bio(p.arguments, n) for p in ordered]
    domain = sentence.doc_id or domain
    lines = []
    for i in range(n):
        cells = [domain, str(sentence_id), str(i), sentence.words[i], pos[i], pos[i], heads[i], dep_labels[i], _MISSING,
                 sense[i], lemma[i], NO_PREDICATE, NO_PREDICATE, "O"] + [column[i] for column in srl]
        for cell in cells:
            if not cell or any(c.isspace() for c in cell):
                raise ValueError(f"{sentence.where()}: token {i}: cell {cell!r} is empty or contains whitespace")
        lines.append("\t".join(cells))
    return lines


def write_lisa(sentences: Iterable[Sentence], path: str | os.PathLike, domain: str = "-") -> int:
    """Write sentences in the LISA combined format (gzip when ``path`` ends in ``.gz``); returns the count.

    Missing POS, heads or labels are written as ``_``; the domain is :attr:`Sentence.doc_id` or ``domain``.
    """
    path = os.fspath(path)
    lines: list[str] = []
    count = 0
    for count, sentence in enumerate(sentences, start=1):
        lines.extend(lisa_lines(sentence, count - 1, domain))
        lines.append("")
    text = "".join(line + "\n" for line in lines)
    if path.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return count
