"""The head conventions on real EWT trees: CoNLL-U ↔ self-loop is a bijection on real tokens, the
root is the only self-loop, and padding takes the given value."""

from __future__ import annotations

import numpy as np

from data_pipeline.readers.conllu import read_conllu
from lisa_tf.decoding.head_indices import to_conllu, to_self_loop
from tests.conftest import DATA


def test_round_trip_on_real_trees():
    sentences = read_conllu(DATA / "propbank-ewt" / "dev.conllu.gz")[:200]
    width = max(len(s) for s in sentences)
    heads = np.array([s.heads + [0] * (width - len(s)) for s in sentences], np.int32)
    mask = np.arange(width)[None, :] < np.array([len(s) for s in sentences])[:, None]
    loops = np.asarray(to_self_loop(heads, mask))
    for row, sentence in zip(loops, sentences):
        n = len(sentence)
        # the root (head 0) attends to itself, every other token to its head's 0-based index
        assert [j == i for i, j in enumerate(row[:n])] == [h == 0 for h in sentence.heads]
        assert all(j == h - 1 for j, h in zip(row[:n], sentence.heads) if h)
        assert not row[n:].any()
    back = np.asarray(to_conllu(loops, mask))
    np.testing.assert_array_equal(back[mask], heads[mask])
    assert (back[~mask] == -1).all()
