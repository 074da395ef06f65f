"""The scorer on mutated real props files (gold CoNLL-2005 test.wsj, DeepAtt's predictions) and arbitrary bytes:
it scores, or raises a DataFormatError naming one of the two files and a line of it (``benchmarks/fuzz_readers.py``
runs many more examples)."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.fuzz_readers import check, inputs, seed_files, target
from data_pipeline.errors import DataFormatError
from lisa_tf.evaluation.srl_eval import evaluate


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(inputs(target("srl_eval")))
def test_scorer_returns_or_raises_a_placed_data_format_error(files):
    check(target("srl_eval"), files)


@pytest.mark.parametrize("side", ["gold.props", "predicted.props"])
def test_a_corrupt_gzip_props_file_is_a_data_format_error(tmp_path, side):
    # zlib.error escaped the scorer before.
    for name, raw in seed_files(target("srl_eval")).items():
        if name == side:
            packed = gzip.compress(raw, mtime=0)
            raw = packed[:12] + b"\xff" + packed[12:]
        (tmp_path / name).write_bytes(raw)
    with pytest.raises(DataFormatError, match="looks like gzip but does not decompress") as caught:
        evaluate(tmp_path / "gold.props", tmp_path / "predicted.props", warn=None)
    assert caught.value.path == str(tmp_path / side)


@pytest.mark.parametrize("side", ["gold.props", "predicted.props"])
@pytest.mark.parametrize("row", [9, 14])  # the first line of sentence 2 (line 10), and one in its middle
def test_a_line_with_a_cell_more_is_blamed_at_that_line(tmp_path, side, row):
    # The width expected was the sentence's first row's: a cell added there blamed line 11.
    for name, raw in seed_files(target("srl_eval")).items():
        lines = raw.decode("utf-8").split("\n")
        if name == side:
            lines[row] += "   *"
        (tmp_path / name).write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"expected 5 columns like the other lines of its sentence \(lines 10-49\), "
                                              r"found 6") as caught:
        evaluate(tmp_path / "gold.props", tmp_path / "predicted.props", warn=None)
    assert (caught.value.path, caught.value.line) == (str(tmp_path / side), row + 1)
