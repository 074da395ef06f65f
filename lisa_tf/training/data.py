"""Reading an experiment's splits: SRL sentences plus, when given, an aligned dependency parse."""

from __future__ import annotations

from typing import Optional, Sequence

from data_pipeline.readers import read_sentences
from data_pipeline.readers.conllu import attach_parse, read_conllu
from data_pipeline.sentence import Sentence

from lisa_tf.config import DataConfig


def read_split(config: DataConfig, path: str, parse: Optional[str] = None, limit: int = 0) -> list[Sentence]:
    """Sentences of ``path`` in ``config.format``; heads/labels from the CoNLL-U file ``parse`` if given.

    ``limit`` > 0 keeps the first ``limit`` sentences (quick runs); the parse is cut the same way.
    """
    sentences = read_sentences(path, config.format)
    parses: Optional[Sequence[Sentence]] = read_conllu(parse) if parse else None
    if limit:
        sentences = sentences[:limit]
        parses = parses[:limit] if parses is not None else None
    if parses is not None:
        sentences = attach_parse(sentences, parses, parse)
    return sentences
