"""data_pipeline.readers.read_sentences: every name in FORMATS reaches its own reader."""

import pytest

import data_pipeline.readers as readers

READER_OF = {"conll05": "read_conll05", "conll12": "read_conll12", "lisa": "read_lisa", "conllu": "read_conllu"}


def test_every_format_calls_its_reader(monkeypatch):
    assert isinstance(readers.FORMATS, tuple) and set(readers.FORMATS) == set(READER_OF)
    for name in READER_OF.values():
        monkeypatch.setattr(readers, name, lambda path, name=name, **_: [name, path])
    for fmt in readers.FORMATS:
        assert readers.read_sentences("some/path", fmt) == [READER_OF[fmt], "some/path"]


def test_unknown_format_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown format 'conll09'; expected one of conll05, conll12, lisa, conllu"):
        readers.read_sentences("some/path", "conll09")
