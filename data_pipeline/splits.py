"""Reading an experiment's splits: SRL sentences plus dependency heads for LISA.

Dependency supervision comes from, in order of preference (LISA issue, "Dependency supervision"):
a CoNLL-U file given explicitly, a CoNLL-U file beside the data (``X.gold_conll.gz`` →
``X.conllu.gz``; PropBank-EWT ships one), heads already in the data (LISA combined format), or the
head-rule conversion (:mod:`data_pipeline.head_rules`, content heads) of the data's constituency trees.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Optional, Sequence

from data_pipeline.head_rules import sentence_heads
from data_pipeline.readers import read_sentences
from data_pipeline.readers.conllu import attach_parse, read_conllu
from data_pipeline.sentence import Sentence



def parse_beside(path: str) -> Optional[str]:
    """The CoNLL-U file shipped beside a data file (``name.gold_conll.gz`` → ``name.conllu.gz``)."""
    candidate = pathlib.Path(path)
    for suffix in (".gold_conll.gz", ".gold_conll", ".gold_skel.gz", ".gold_skel"):
        if candidate.name.endswith(suffix):
            stem = candidate.name[: -len(suffix)]
            for ending in (".conllu.gz", ".conllu"):
                beside = candidate.with_name(stem + ending)
                if beside.exists():
                    return str(beside)
    return None


def read_split(path: str, fmt: str, parse: Optional[str] = None, limit: int = 0) -> list[Sentence]:
    """Sentences of ``path`` in format ``fmt`` (:data:`data_pipeline.readers.FORMATS`) with dependency heads when any source has them.

    ``limit`` > 0 keeps the first ``limit`` sentences (quick runs); the parse is cut the same way.
    """
    sentences = read_sentences(path, fmt, limit)
    parse = parse or parse_beside(path)
    parses: Optional[Sequence[Sentence]] = read_conllu(parse, limit=limit) if parse else None
    if parses is not None:
        return attach_parse(sentences, parses, parse)
    # A parse-bit column of "*" alone (CoNLL-2012 files without trees) holds no tree: no heads.
    has_trees = any("(" in bit for s in sentences for bit in (s.parse_bits or ()))
    if has_trees and all(s.heads is None and s.parse_bits is not None and s.pos is not None for s in sentences):
        converted = []
        for sentence in sentences:
            heads, labels = sentence_heads(sentence, content_heads=True)
            converted.append(dataclasses.replace(sentence, heads=heads, dep_labels=labels))
        return converted
    return sentences
