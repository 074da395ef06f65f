"""Tree decoding against brute force: every head assignment of short sentences."""

import itertools

import numpy as np
import pytest

from lisa_tf.decoding.mst import chu_liu_edmonds, decode_tree, is_tree, self_loop_scores, tree_score


def _brute_force(scores, one_root):
    n = len(scores) - 1
    best, best_heads = -np.inf, None
    for assignment in itertools.product(range(n + 1), repeat=n):
        if one_root and sum(h == 0 for h in assignment) != 1:
            continue
        if not one_root and not any(h == 0 for h in assignment):
            continue
        heads = np.array((0,) + assignment)
        if any(h == d for d, h in enumerate(heads) if d) or not _acyclic(heads):
            continue
        score = tree_score(scores, heads)
        if score > best:
            best, best_heads = score, heads
    return best, best_heads


def _acyclic(heads):
    for start in range(1, len(heads)):
        node, steps = start, 0
        while node != 0 and steps <= len(heads):
            node, steps = heads[node], steps + 1
        if node != 0:
            return False
    return True


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_matches_brute_force(n):
    rng = np.random.default_rng(n)
    for _ in range(40):
        scores = rng.normal(size=(n + 1, n + 1)) * 3
        best, _ = _brute_force(scores, one_root=True)
        heads = decode_tree(scores)
        assert is_tree(heads[1:])
        assert tree_score(scores, heads) == pytest.approx(best)
        free_best, _ = _brute_force(scores, one_root=False)
        assert tree_score(scores, chu_liu_edmonds(scores)) == pytest.approx(free_best)


def test_breaks_a_cycle_and_extra_roots():
    # argmax heads: 1 <- 2, 2 <- 1 (a cycle), 3 <- root, 4 <- root
    scores = np.full((5, 5), -10.0)
    scores[1, 2] = scores[2, 1] = 5.0
    scores[1, 0] = 1.0
    scores[3, 0] = scores[4, 0] = 4.0
    scores[4, 3] = 3.0
    heads = decode_tree(scores)
    assert is_tree(heads[1:])
    assert list(heads[1:]) == [0, 1, 1, 3] or sum(h == 0 for h in heads[1:]) == 1


def test_self_loop_form_puts_the_diagonal_on_the_root():
    model = np.array([[2.0, 0.0], [1.0, -1.0]])  # token 0: root score 2; token 1: head 0 scores 1
    scores = self_loop_scores(model, 2)
    assert scores[1, 0] == 2.0 and scores[2, 0] == -1.0 and scores[2, 1] == 1.0
    assert list(decode_tree(scores)[1:]) == [0, 1]


def test_is_tree():
    assert is_tree([2, 0, 2])
    assert not is_tree([0, 0, 2])  # two roots
    assert not is_tree([2, 1, 0])  # cycle 1 <-> 2
    assert not is_tree([2, 0, 4])  # head outside the sentence
