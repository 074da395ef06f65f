"""Every reader on mutated real files and arbitrary bytes: it returns, or raises a DataFormatError naming a file of
the input and a line of it. Strategies and checks are those of ``benchmarks/fuzz_readers.py`` (which runs many
more examples); the regression cases below are inputs that fuzzing found raising something else."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.fuzz_readers import READER_TARGETS, MissingData, check, inputs, seed_files, target
from data_pipeline.errors import DataFormatError

FUZZ = settings(max_examples=50, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fuzz_target(name: str):
    """The fuzz target ``name``, skipping the test when its real files are absent."""
    try:
        return target(name)
    except MissingData as missing:
        pytest.skip(str(missing))


def real_files(name: str) -> dict[str, bytes]:
    """The target's unmutated files, as bytes."""
    return seed_files(fuzz_target(name))


def read_edited(tmp_path, name: str, file: str, edit) -> None:
    """Write the target's real files with ``edit(lines) -> lines`` applied to ``file`` (cells of a line split on
    tabs), and read them."""
    files = real_files(name)
    lines = [line.split("\t") for line in files[file].decode("utf-8").split("\n")]
    files[file] = "\n".join("\t".join(cells) for cells in edit(lines)).encode("utf-8")
    for relative, raw in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(raw)
    fuzz_target(name).run(tmp_path)


@pytest.mark.parametrize("name", READER_TARGETS)
def test_reader_returns_or_raises_a_placed_data_format_error(name):
    subject = fuzz_target(name)

    @FUZZ
    @given(inputs(subject))
    def read(files):
        check(subject, files)

    read()


@pytest.mark.parametrize("name", READER_TARGETS)
def test_a_corrupt_gzip_file_is_a_data_format_error(name, tmp_path):
    # zlib.error ("invalid distance too far back") escaped the reader before.
    files = real_files(name)
    file = sorted(files)[0]
    packed = gzip.compress(files[file], mtime=0)
    files[file] = packed[:12] + b"\xff" + packed[12:]
    for relative, raw in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(raw)
    with pytest.raises(DataFormatError, match="looks like gzip but does not decompress") as caught:
        fuzz_target(name).run(tmp_path)
    assert caught.value.path == str(tmp_path / file)


def _set_cell(row: int, column: int, value: str):
    def edit(lines):
        lines[row][column] = value
        return lines

    return edit


@pytest.mark.parametrize("cell", ["\u00b2", "3\u00b2", "\u2460"])
def test_a_lisa_head_that_is_a_digit_but_not_a_number(tmp_path, cell):
    # str.isdigit() accepts superscripts and circled digits, int() does not: ValueError before.
    with pytest.raises(DataFormatError, match=f"expected a head between 0 and 8 in column 7, found '{cell}'") as caught:
        read_edited(tmp_path, "lisa", "mini.lisa", _set_cell(2, 6, cell))
    assert caught.value.line == 3


def test_a_lisa_token_id_that_is_a_digit_but_not_a_number(tmp_path):
    with pytest.raises(DataFormatError, match="expected token id 2 in column 3, found '\u00b2'") as caught:
        read_edited(tmp_path, "lisa", "mini.lisa", _set_cell(2, 2, "\u00b2"))
    assert caught.value.line == 3


@pytest.mark.parametrize("name", ["conllu", "parse"])
def test_a_conllu_head_that_is_a_digit_but_not_a_number(tmp_path, name):
    # Line 6 of the excerpt is the first word line ("1 From from ADP IN _ 3 case ...").
    with pytest.raises(DataFormatError, match="expected a HEAD between 0 and 7, found '\u2460'") as caught:
        read_edited(tmp_path, name, "dev.conllu", _set_cell(5, 6, "\u2460"))
    assert caught.value.line == 6
