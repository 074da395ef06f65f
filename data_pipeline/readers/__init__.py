"""Readers for the supported corpus formats, each returning :class:`data_pipeline.sentence.Sentence` lists.

============  ==========================================================  =========================================
format        input                                                       reader
============  ==========================================================  =========================================
``conll05``   a ``conll05st-release`` split directory, or a pasted file   :func:`data_pipeline.readers.conll05.read_conll05`
``conll12``   ``*.gold_conll`` / ``*.gold_skel`` file or directory        :func:`data_pipeline.readers.conll12.read_conll12`
``lisa``      LISA's combined tab-separated column file                   :func:`data_pipeline.readers.lisa_columns.read_lisa`
``conllu``    CoNLL-U dependency file                                     :func:`data_pipeline.readers.conllu.read_conllu`
============  ==========================================================  =========================================

:func:`read_sentences` calls the reader of a format name; :data:`FORMATS` lists the names. It is where data
is read for training, evaluation and ``stats``, so a file (or directory) without a sentence is an error there.
"""

from __future__ import annotations

import os

from data_pipeline.errors import DataFormatError
from data_pipeline.readers.conll05 import read_conll05
from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.readers.conllu import read_conllu
from data_pipeline.readers.lisa_columns import read_lisa
from data_pipeline.sentence import Sentence

#: The format names :func:`read_sentences` accepts.
FORMATS = ("conll05", "conll12", "lisa", "conllu")

# What a sentence looks like in each format, for the error on a file without any.
_LAYOUT = {
    "conll05": "token lines 'WORD [POS [PARSE ...]] LEMMA ARGS...' (or the words/ and props/ layer files of a split "
               "directory), a blank line after each sentence",
    "conll12": "token lines of at least 12 (.gold_conll) or 8 (.gold_skel) whitespace-separated columns, a blank "
               "line after each sentence",
    "lisa": "token lines of at least 14 tab-separated columns, a blank line after each sentence",
    "conllu": "word lines of 10 tab-separated CoNLL-U columns, a blank line after each sentence",
}


def read_sentences(path: str | os.PathLike, fmt: str, limit: int = 0) -> list[Sentence]:
    """Read ``path`` with the reader of format ``fmt`` (one of :data:`FORMATS`); ``limit`` > 0 keeps the
    first ``limit`` sentences (the conll12 and conllu readers stop there, without reading the rest).

    Raises:
        ValueError: ``fmt`` is not a known format.
        DataFormatError: whatever the format's reader finds wrong with the file, or no sentence at all (an empty
            or blank-only file).
    """
    readers = {"conll05": read_conll05, "conll12": read_conll12, "lisa": read_lisa, "conllu": read_conllu}
    if fmt not in readers:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if fmt in ("conll12", "conllu"):
        sentences = readers[fmt](path, limit=limit)
    else:
        sentences = readers[fmt](path)[: limit or None]
    if not sentences:
        raise DataFormatError(path, None, f"no sentences found; expected {fmt} data: {_LAYOUT[fmt]}")
    return sentences
