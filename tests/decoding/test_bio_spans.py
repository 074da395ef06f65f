"""In-graph BIO → spans equals the Python reader (DeepAtt's rule) on real and on arbitrary tag rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.spans import bio_to_spans
from data_pipeline.vocab import predicate_bio_tags
from lisa_tf.decoding.bio_spans import bio_spans
from tests.conftest import DATA


def _python(rows):
    return [[(s.label, s.start, s.end + 1) for s in bio_to_spans([t for t in row if t]) if s.label not in ("V", "C-V")]
            for row in rows]


def _graph(rows, probabilities=None):
    out = bio_spans(rows, probabilities)
    return [list(zip([x.decode() for x in label], start, end))
            for label, start, end in zip(out["label"].to_list(), out["start"].to_list(), out["end"].to_list())], out


def _padded(rows):
    width = max(len(r) for r in rows)
    return [list(r) + [""] * (width - len(r)) for r in rows]


def test_real_gold_tags_round_trip():
    rows = [predicate_bio_tags(p, len(s))[0] for s in read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz")[:150]
            for p in s.predicates]
    padded = _padded(rows)
    got, _ = _graph(padded)
    assert got == _python(padded)
    assert sum(map(len, got)) > 300


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["O", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-V", "I-V"]),
                         min_size=1, max_size=9), min_size=1, max_size=5))
def test_invalid_sequences_read_like_the_python_reader(rows):
    padded = _padded(rows)
    got, _ = _graph(padded)
    assert got == _python(padded)


def test_scores_are_span_means():
    rows = [["B-ARG0", "I-ARG0", "B-V", "O", "B-ARG1"]]
    probabilities = np.array([[0.5, 0.7, 0.9, 0.2, 0.4]], np.float32)
    got, out = _graph(rows, probabilities)
    assert got == [[("ARG0", 0, 2), ("ARG1", 4, 5)]]
    np.testing.assert_allclose(out["score"].to_list()[0], [0.6, 0.4], rtol=1e-6)
