"""Readers for the supported corpus formats, each returning :class:`data_pipeline.sentence.Sentence` lists.

============  ==========================================================  =========================================
format        input                                                       reader
============  ==========================================================  =========================================
``conll05``   a ``conll05st-release`` split directory, or a pasted file   :func:`data_pipeline.readers.conll05.read_conll05`
``conll12``   ``*.gold_conll`` / ``*.gold_skel`` file or directory        :func:`data_pipeline.readers.conll12.read_conll12`
``lisa``      LISA's combined tab-separated column file                   :func:`data_pipeline.readers.lisa_columns.read_lisa`
``conllu``    CoNLL-U dependency file                                     :func:`data_pipeline.readers.conllu.read_conllu`
============  ==========================================================  =========================================

:func:`read_sentences` picks the reader by format name; each reader module is imported only when used.
"""

from __future__ import annotations

import importlib
import os

from data_pipeline.sentence import Sentence

# format name -> (module, function)
READERS = {
    "conll05": ("data_pipeline.readers.conll05", "read_conll05"),
    "conll12": ("data_pipeline.readers.conll12", "read_conll12"),
    "lisa": ("data_pipeline.readers.lisa_columns", "read_lisa"),
    "conllu": ("data_pipeline.readers.conllu", "read_conllu"),
}
FORMATS = tuple(READERS)


def read_sentences(path: str | os.PathLike, fmt: str) -> list[Sentence]:
    """Read ``path`` with the reader of format ``fmt`` (one of :data:`FORMATS`).

    Raises:
        ValueError: ``fmt`` is not a known format.
        DataFormatError: whatever the format's reader finds wrong with the file.
    """
    if fmt not in READERS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    module_name, function_name = READERS[fmt]
    reader = getattr(importlib.import_module(module_name), function_name)
    return reader(path)
