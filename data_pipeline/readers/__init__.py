"""Readers for the supported corpus formats, each returning :class:`data_pipeline.sentence.Sentence` lists.

============  ==========================================================  =========================================
format        input                                                       reader
============  ==========================================================  =========================================
``conll05``   a ``conll05st-release`` split directory, or a pasted file   :func:`data_pipeline.readers.conll05.read_conll05`
``conll12``   ``*.gold_conll`` / ``*.gold_skel`` file or directory        :func:`data_pipeline.readers.conll12.read_conll12`
``lisa``      LISA's combined tab-separated column file                   :func:`data_pipeline.readers.lisa_columns.read_lisa`
``conllu``    CoNLL-U dependency file                                     :func:`data_pipeline.readers.conllu.read_conllu`
============  ==========================================================  =========================================

:func:`read_sentences` calls the reader of a format name; :data:`FORMATS` lists the names.
"""

from __future__ import annotations

import os

from data_pipeline.readers.conll05 import read_conll05
from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.readers.conllu import read_conllu
from data_pipeline.readers.lisa_columns import read_lisa
from data_pipeline.sentence import Sentence

#: The format names :func:`read_sentences` accepts.
FORMATS = ("conll05", "conll12", "lisa", "conllu")


def read_sentences(path: str | os.PathLike, fmt: str) -> list[Sentence]:
    """Read ``path`` with the reader of format ``fmt`` (one of :data:`FORMATS`).

    Raises:
        ValueError: ``fmt`` is not a known format.
        DataFormatError: whatever the format's reader finds wrong with the file.
    """
    if fmt == "conll05":
        return read_conll05(path)
    if fmt == "conll12":
        return read_conll12(path)
    if fmt == "lisa":
        return read_lisa(path)
    if fmt == "conllu":
        return read_conllu(path)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
