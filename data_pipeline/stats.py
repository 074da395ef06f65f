"""Corpus counts: sentences, tokens, predicates and arguments.

Arguments are counted as ``srl-eval.pl`` counts them (:meth:`Sentence.num_arguments`): the ``V`` span is not
an argument, and the ``C-X`` pieces of a discontinuous argument belong to its ``X``. For the CoNLL-2005
test sets this gives 14,077 (WSJ) and 2,177 (Brown) arguments, the ``corr + missed`` totals of any
``srl-eval.pl`` run against those gold files; counting every non-``V`` span separately would give 14,331
and 2,201.
"""

from __future__ import annotations

import os
from typing import Iterable

from data_pipeline.sentence import Sentence


def corpus_stats(sentences: Iterable[Sentence]) -> dict[str, int]:
    """``{"sentences", "tokens", "predicates", "arguments"}`` of a list of sentences."""
    stats = {"sentences": 0, "tokens": 0, "predicates": 0, "arguments": 0}
    for sentence in sentences:
        stats["sentences"] += 1
        stats["tokens"] += len(sentence)
        stats["predicates"] += len(sentence.predicates)
        stats["arguments"] += sentence.num_arguments()
    return stats


def file_stats(path: str | os.PathLike, fmt: str) -> dict[str, int]:
    """:func:`corpus_stats` of ``path`` read as format ``fmt`` (see :func:`data_pipeline.readers.read_sentences`)."""
    from data_pipeline.readers import read_sentences

    return corpus_stats(read_sentences(path, fmt))
