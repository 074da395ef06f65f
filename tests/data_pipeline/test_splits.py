"""read_split: a data file without sentences is an error."""

from __future__ import annotations

import gzip

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.readers import FORMATS
from data_pipeline.splits import read_split

NAMES = {"conll05": "train.pasted", "conll12": "train.gold_conll", "lisa": "train.lisa", "conllu": "train.conllu"}
EMPTY = {"empty": b"", "blank lines": b"\n \n\t\n\r\n", "empty gzip": gzip.compress(b"", mtime=0)}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("content", sorted(EMPTY))
def test_a_data_file_without_sentences_is_an_error(tmp_path, fmt, content):
    path = tmp_path / NAMES[fmt]
    path.write_bytes(EMPTY[content])
    with pytest.raises(DataFormatError, match=f"no sentences found; expected {fmt} data: ") as caught:
        read_split(str(path), fmt)
    assert (caught.value.path, caught.value.line) == (str(path), None)


@pytest.mark.parametrize("fmt, text", [
    ("conllu", "# sent_id = 1\n# text = nothing follows\n\n"),
    ("conll12", "#begin document (empty); part 000\n\n#end document\n"),
])
def test_a_file_of_comments_or_document_markers_only_is_an_error(tmp_path, fmt, text):
    path = tmp_path / NAMES[fmt]
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{path}: no sentences found; expected {fmt} data"):
        read_split(str(path), fmt)


def test_a_conll05_split_directory_with_empty_layers_is_an_error(tmp_path):
    split = tmp_path / "test.wsj"
    for layer in ("words", "props", "synt.cha"):
        (split / layer).mkdir(parents=True)
        (split / layer / f"test.wsj.{layer}").write_text("\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{split}: no sentences found; expected conll05 data"):
        read_split(str(split), "conll05")

