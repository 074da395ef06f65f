"""Maximum spanning tree decoding of dependency scores: one root, no cycles (Chu-Liu-Edmonds, NumPy).

A biaffine parser scores every (dependent, head) pair; taking each token's best head (argmax) can give
cycles or several tokens attached to the root. :func:`decode_tree` returns the highest-scoring
*well-formed* tree instead: every token has exactly one head, the root node has exactly one dependent,
and following heads from any token reaches the root (Dozat & Manning 2017, §3.1 "at test time we also
ensure that the tree is well-formed"; McDonald et al. 2005 for the maximum spanning tree view).

Scores are arc scores that add up over a tree, e.g. log-probabilities ``log P(head(d) = h)``. Nodes are
numbered as in CoNLL-U: 0 is the artificial root, 1..n the tokens.

* :func:`chu_liu_edmonds` finds the maximum spanning arborescence rooted at 0 (Chu & Liu 1965,
  Edmonds 1967) by recursive cycle contraction, O(n³) in the worst case and fast in practice: a
  trained parser's argmax tree rarely has a cycle.
* The one-root constraint is exact by a constant penalty (Zmigrod et al. 2020, "Please Mind the Root"):
  every arborescence has at least one root arc, so subtracting more than the whole score range from
  every root arc makes any one-root tree beat any tree with more, while leaving the order among
  one-root trees unchanged.
* :func:`self_loop_scores` converts the model's ``[T, T]`` matrix, whose diagonal holds the root score
  (LISA's self-loop convention, :mod:`lisa_tf.decoding.head_indices`), to the ``[n + 1, n + 1]`` form.

Tests compare with brute force over every head assignment of short sentences (``tests/decoding/test_mst.py``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

NEG_INF = -np.inf


def _find_cycle(heads: np.ndarray) -> Optional[np.ndarray]:
    """Nodes of one cycle of the head graph ``heads`` (node 0 is the root and ignored), or None."""
    n = len(heads)
    state = np.zeros(n, np.int8)  # 0 unseen, 1 on the current path, 2 done
    state[0] = 2
    for start in range(1, n):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node]
        if state[node] == 1:  # came back to the current path: a cycle from ``node``
            return np.array(path[path.index(node):])
        for visited in path:
            state[visited] = 2
    return None


def chu_liu_edmonds(scores: np.ndarray) -> np.ndarray:
    """Heads of the maximum spanning arborescence rooted at node 0.

    Args:
        scores: ``[n + 1, n + 1]`` float, ``scores[d, h]`` the score of the arc head ``h`` → dependent
            ``d``; ``-inf`` marks a forbidden arc. Row 0 (the root's head) and the diagonal are ignored.

    Returns:
        int ``[n + 1]``: ``heads[d]`` for every token ``d ≥ 1``; ``heads[0] = 0``. The root may have
        several dependents (see :func:`decode_tree` for one).
    """
    scores = np.array(scores, dtype=np.float64)
    size = len(scores)
    np.fill_diagonal(scores, NEG_INF)
    scores[0] = NEG_INF
    return _contract(scores) if size > 1 else np.zeros(size, np.int64)


def _contract(scores: np.ndarray) -> np.ndarray:
    heads = scores.argmax(axis=1)
    heads[0] = 0
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = np.zeros(len(scores), bool)
    in_cycle[cycle] = True
    outside = np.flatnonzero(~in_cycle)  # includes the root, at index 0
    # The contracted graph: the nodes outside the cycle, then the cycle as one node ``c``.
    c = len(outside)
    sub = np.full((c + 1, c + 1), NEG_INF)
    sub[:c, :c] = scores[np.ix_(outside, outside)]
    # Into the cycle: attaching cycle node v to an outside head u breaks v's cycle arc.
    entering = scores[np.ix_(cycle, outside)] - scores[cycle, heads[cycle]][:, None]
    enter_at = entering.argmax(axis=0)
    sub[c, :c] = entering.max(axis=0)
    # Out of the cycle: an outside dependent takes its best head inside the cycle.
    leaving = scores[np.ix_(outside, cycle)]
    leave_from = leaving.argmax(axis=1)
    sub[:c, c] = leaving.max(axis=1)
    sub[0] = NEG_INF
    sub_heads = _contract(sub)
    result = heads.copy()
    for i, node in enumerate(outside[1:], start=1):
        h = sub_heads[i]
        result[node] = cycle[leave_from[i]] if h == c else outside[h]
    head = sub_heads[c]
    result[cycle[enter_at[head]]] = outside[head]
    return result


def tree_score(scores: np.ndarray, heads: np.ndarray) -> float:
    """Sum of ``scores[d, heads[d]]`` over the tokens ``d ≥ 1``."""
    tokens = np.arange(1, len(heads))
    return float(np.sum(np.asarray(scores)[tokens, np.asarray(heads)[tokens]]))


def decode_tree(scores: np.ndarray) -> np.ndarray:
    """The highest-scoring well-formed dependency tree: one root dependent, no cycle.

    Args:
        scores: ``[n + 1, n + 1]``, ``scores[d, h]`` as in :func:`chu_liu_edmonds` (finite on every
            allowed arc).

    Returns:
        int ``[n + 1]`` heads in CoNLL-U numbering (``heads[0] = 0``, unused).
    """
    scores = np.array(scores, dtype=np.float64)
    size = len(scores)
    if size <= 2:
        return np.zeros(size, np.int64)
    tokens = scores[1:]
    finite = tokens[np.isfinite(tokens)]
    # Larger than the difference of any two trees' scores (Zmigrod et al. 2020, §3).
    penalty = (finite.max() - finite.min() + 1.0) * size if finite.size else 1.0
    scores[1:, 0] -= penalty
    return chu_liu_edmonds(scores)


def self_loop_scores(scores: np.ndarray, length: int) -> np.ndarray:
    """The ``[n + 1, n + 1]`` root-node form of a model's ``[T, T]`` self-loop scores, cut to ``length``.

    ``scores[d, h]`` (0-based tokens) is the arc ``h → d``; the diagonal ``scores[d, d]`` is the score of
    ``d`` attaching to the root.
    """
    n = length
    out = np.full((n + 1, n + 1), NEG_INF)
    block = np.asarray(scores, np.float64)[:n, :n]
    out[1:, 1:] = block
    out[1:, 0] = np.diag(block)
    np.fill_diagonal(out, NEG_INF)
    return out


def is_tree(heads) -> bool:
    """True when 1-based ``heads`` (``heads[i]`` the head of token ``i + 1``; 0 = root) form one tree:
    exactly one token attached to the root, every head a token of the sentence, no cycle."""
    heads = [int(h) for h in heads]
    n = len(heads)
    if n == 0 or sum(h == 0 for h in heads) != 1 or any(not 0 <= h <= n for h in heads):
        return False
    return _find_cycle(np.array([0] + heads)) is None and all(h != i + 1 for i, h in enumerate(heads))
