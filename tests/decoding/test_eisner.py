"""Eisner's projective decoder in TF against brute force over every projective one-root tree, and
against Chu-Liu-Edmonds where the best tree is projective."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import tensorflow as tf

from lisa_tf.decoding.eisner import eisner_heads
from lisa_tf.decoding.head_indices import to_conllu
from lisa_tf.decoding.mst import decode_tree, is_tree, self_loop_scores


def is_projective(heads) -> bool:
    """1-based heads (0 = root node at position 0): every token strictly between a head and its
    dependent descends from that head."""
    nodes = [0] + list(heads)

    def descends(node, ancestor):
        while node != 0 and node != ancestor:
            node = nodes[node]
        return node == ancestor

    for d in range(1, len(nodes)):
        h = nodes[d]
        if any(not descends(between, h) for between in range(min(h, d) + 1, max(h, d))):
            return False
    return True


@functools.lru_cache(maxsize=None)
def projective_trees_of(n: int) -> np.ndarray:
    """Every projective tree of ``n`` tokens with one root dependent, as 1-based heads ``[K, n]``."""
    trees = [heads for heads in itertools.product(range(n + 1), repeat=n) if is_tree(heads) and is_projective(heads)]
    return np.array(trees, dtype=np.int64)


def _brute_force(scores: np.ndarray, n: int) -> np.ndarray:
    """The best projective one-root tree of the ``[T, T]`` self-loop ``scores`` cut to ``n`` tokens."""
    trees = projective_trees_of(n)
    tokens = np.arange(n)
    columns = np.where(trees == 0, tokens, trees - 1)  # self-loop columns: the root is the diagonal
    totals = scores[tokens, columns].sum(axis=1)
    order = np.sort(totals)
    assert len(order) == 1 or order[-1] - order[-2] > 1e-9, "a tie: pick another seed"
    return trees[np.argmax(totals)]


def _decode(scores, lengths) -> list[list[int]]:
    """Eisner's heads, 1-based, one list per sentence cut to its length."""
    heads = to_conllu(eisner_heads(tf.constant(scores), tf.constant(lengths)), tf.sequence_mask(lengths, scores.shape[1]))
    return [list(row[:n]) for row, n in zip(heads.numpy(), lengths)]


def test_known_cases():
    # Token 1 prefers the root, token 0 prefers token 1: the tree 2 → 1, root → 2.
    scores = np.array([[0.0, 5.0], [-1.0, 3.0]])
    assert _decode(scores[None], [2]) == [[2, 0]]
    # Every token prefers the root most: still one root dependent, the best one (token 1, score 9).
    scores = np.full((3, 3), -5.0)
    np.fill_diagonal(scores, [8.0, 9.0, 7.0])
    scores[0, 1] = scores[2, 1] = 0.0
    assert _decode(scores[None], [3]) == [[2, 0, 2]]
    assert _decode(np.zeros((1, 1, 1)), [1]) == [[0]]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_equals_brute_force_on_padded_batches(seed):
    rng = np.random.default_rng(seed)
    lengths = np.array([6, 1, 4, 2, 5, 3])
    width = 7  # every sentence has padding
    scores = rng.normal(size=(len(lengths), width, width)) * 3.0
    for b, n in enumerate(lengths):
        scores[b, n:, :] = -np.inf  # padding as a masked parser leaves it, never read
        scores[b, :, n:] = rng.choice([np.nan, 1e6])
    decoded = _decode(scores, lengths)
    for b, n in enumerate(lengths):
        assert decoded[b] == list(_brute_force(scores[b], n)), (seed, b)
        assert is_tree(decoded[b])


@pytest.mark.parametrize("seed", range(6))
def test_equals_chu_liu_edmonds_when_that_tree_is_projective(seed):
    rng = np.random.default_rng(100 + seed)
    lengths = rng.integers(1, 9, size=16)
    # Like a parser's scores, near heads score higher, so most best trees are projective.
    distance = np.abs(np.arange(8)[:, None] - np.arange(8)[None, :])
    scores = (rng.normal(size=(16, 8, 8)) - 0.7 * distance).astype(np.float32)
    decoded = _decode(scores, lengths)
    projective = 0
    for b, n in enumerate(lengths):
        assert is_tree(decoded[b])
        mst = [int(h) for h in decode_tree(self_loop_scores(scores[b], n))[1:]]
        if is_projective(mst):
            projective += 1
            assert decoded[b] == mst
        else:  # the best tree crosses arcs: the projective one is another, scoring less
            tokens = np.arange(n)
            score = lambda heads: scores[b][tokens, np.where(np.array(heads) == 0, tokens, np.array(heads) - 1)].sum()
            assert decoded[b] != mst and score(decoded[b]) < score(mst)
    assert projective >= 8  # the comparison ran on most sentences


def test_runs_in_a_tf_function_with_unknown_shapes():
    decode = tf.function(eisner_heads, input_signature=[tf.TensorSpec([None, None, None], tf.float32),
                                                        tf.TensorSpec([None], tf.int32)])
    rng = np.random.default_rng(7)
    for batch, width in ((3, 5), (2, 6), (4, 1)):
        scores = rng.normal(size=(batch, width, width)).astype(np.float32)
        lengths = rng.integers(1, width + 1, size=batch).astype(np.int32)
        heads = to_conllu(decode(scores, lengths), tf.sequence_mask(lengths, width)).numpy()
        for b, n in enumerate(lengths):
            assert list(heads[b, :n]) == list(_brute_force(scores[b], n))
            assert (heads[b, n:] == -1).all()
    graph = decode.get_concrete_function().graph.as_graph_def()
    ops = {node.op for node in graph.node} | {node.op for f in graph.library.function for node in f.node_def}
    assert not ops & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}
    assert decode(np.zeros((2, 0, 0), np.float32), np.zeros(2, np.int32)).shape == (2, 0)


def test_refuses_lengths_beyond_the_scores():
    with pytest.raises(tf.errors.InvalidArgumentError, match="a length exceeds the T of scores"):
        eisner_heads(tf.zeros((1, 3, 3)), tf.constant([4]))
