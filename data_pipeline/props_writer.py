"""Writing sentences in the CoNLL-2005 ``props`` format (the input of ``srl-eval.pl``).

One line per token: column 0 is the predicate lemma on a target row and ``-`` elsewhere, then one
Start-End bracket column per predicate in token order (:func:`data_pipeline.spans.spans_to_brackets`);
a blank line ends each sentence. Columns are padded for reading; readers split on whitespace.
"""

from __future__ import annotations

import gzip
import io
import os
from typing import IO, Iterable

from data_pipeline.sentence import Sentence
from data_pipeline.spans import spans_to_brackets

NO_TARGET = "-"


def props_lines(sentence: Sentence) -> list[str]:
    """The props lines of one sentence (no trailing blank line).

    Raises:
        ValueError: two predicates on one token, a predicate outside the sentence, or a lemma that is empty or
            contains whitespace (it would shift the columns).
    """
    n = len(sentence)
    lemmas = [NO_TARGET] * n
    for predicate in sentence.predicates:
        if not 0 <= predicate.position < n:
            raise ValueError(f"{sentence.where()}: predicate position {predicate.position} outside a {n}-token sentence")
        if lemmas[predicate.position] != NO_TARGET:
            raise ValueError(f"{sentence.where()}: two predicates on token {predicate.position}")
        lemma = predicate.lemma or ""
        if not lemma or any(c.isspace() for c in lemma) or lemma == NO_TARGET:
            raise ValueError(f"{sentence.where()}: predicate at {predicate.position} has lemma {lemma!r}; expected a non-blank word")
        lemmas[predicate.position] = lemma
    # The k-th bracket column belongs to the k-th target row, so columns follow token order.
    ordered = sorted(sentence.predicates, key=lambda p: p.position)
    columns = [spans_to_brackets(p.arguments, n) for p in ordered]
    lemma_width = max([len(x) for x in lemmas] + [1])
    widths = [max(len(cell) for cell in column) for column in columns]
    lines = []
    for i in range(n):
        cells = [lemmas[i].ljust(lemma_width)] + [column[i].rjust(w) for column, w in zip(columns, widths)]
        lines.append("  ".join(cells).rstrip())
    return lines


def write_props(sentences: Iterable[Sentence], path_or_file: str | os.PathLike | IO[str]) -> int:
    """Write ``sentences`` as a props file; gzip when a path ends in ``.gz``.

    Args:
        sentences: sentences with predicates (the ``V`` span and all argument spans are written).
        path_or_file: a path, or an open text stream.

    Returns:
        The number of sentences written.
    """
    if isinstance(path_or_file, (str, os.PathLike)):
        path = os.fspath(path_or_file)
        if path.endswith(".gz"):
            with gzip.open(path, "wt", encoding="utf-8") as handle:
                return _write(sentences, handle)
        with open(path, "w", encoding="utf-8") as handle:
            return _write(sentences, handle)
    return _write(sentences, path_or_file)


def _write(sentences: Iterable[Sentence], handle: IO[str]) -> int:
    count = 0
    buffer = io.StringIO()
    for sentence in sentences:
        for line in props_lines(sentence):
            buffer.write(line + "\n")
        buffer.write("\n")
        count += 1
    handle.write(buffer.getvalue())
    return count
