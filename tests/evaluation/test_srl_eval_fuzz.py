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
