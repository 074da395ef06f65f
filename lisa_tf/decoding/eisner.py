"""Projective maximum spanning tree decoding in core TensorFlow ops (Eisner's algorithm), batched.

:func:`lisa_tf.decoding.mst.decode_tree` finds the best tree with Chu-Liu-Edmonds in NumPy, outside
the graph, so a SavedModel cannot use it. :func:`eisner_heads` finds the best *projective* tree
(no two arcs cross when drawn above the sentence) in-graph, for a batch of sentences of different
lengths: every token gets exactly one head, exactly one token is attached to the root, and there is
no cycle. It runs inside any ``tf.function``, and so in an exported serving signature (no
``py_function``). Most trees of English treebanks are projective; on a sentence whose best tree is
not, the projective decoder returns the best projective tree instead.

Scores are those of the parser's output, in LISA's self-loop convention
(:mod:`lisa_tf.decoding.head_indices`): ``S[d, h]`` (0-based tokens) scores the arc head ``h`` →
dependent ``d``, and the diagonal ``S[d, d]`` scores ``d`` attaching to the root (the parser's
``arc_log_probs``; :func:`lisa_tf.decoding.mst.self_loop_scores` is the same reading). A tree's
score is the sum of its arcs' scores.

Chart (Eisner 1996, in the notation of McDonald et al. 2005), over the tokens ``0..n-1`` only,
for spans ``i ≤ j``: complete spans ``C→[i, j]`` (head ``i``, its dependents reach ``j``) and
``C←[i, j]`` (head ``j``, reaching back to ``i``); incomplete spans ``I→[i, j]`` and ``I←[i, j]``
(the arc ``i → j``, resp. ``j → i``, with the tokens between still to attach)::

    C→[i, i] = C←[i, i] = 0
    I→[i, j] = max_{i ≤ k < j} (C→[i, k] + C←[k+1, j]) + S[j, i]
    I←[i, j] = max_{i ≤ k < j} (C→[i, k] + C←[k+1, j]) + S[i, j]
    C→[i, j] = max_{i < k ≤ j} (I→[i, k] + C→[k, j])
    C←[i, j] = max_{i ≤ k < j} (C←[i, k] + I←[k, j])

The root takes exactly one dependent ``r``, whose left and right complete spans cover the whole
sentence (the root constraint of Zmigrod et al. 2020, built into the chart's last step instead of a
penalty on the root arcs, so nothing is lost to float rounding)::

    best = max_{0 ≤ r < n} (S[r, r] + C←[0, r] + C→[r, n-1])

The chart is four ``[B, T, T]`` tables indexed ``[i, j]``; a ``tf.while_loop`` over the widths
``w = j - i = 1..T-1`` fills the ``w``-th super-diagonal of each table at once for every start ``i``
(the splits ``k`` of all spans of one width are gathered into ``[B, T - w, w]``), so the loop has
``T - 1`` steps and the whole chart costs O(B·T³) work. A sentence of length ``n < T`` reads its
answer from ``C←[0, r]`` and ``C→[r, n-1]``, spans that never reach the padding.

The tree is read off the gradient of ``best`` with respect to ``S``: a max over a dynamic programme
is piecewise linear in the scores, and its (sub)gradient is the indicator of the arcs of the best tree
(Eisner 2016 shows the inside algorithm's gradient; in the max semiring it is the best derivation's
indicator). Every max takes the value at its ``argmax`` (one split, the first on a tie), so exactly
one tree's arcs receive 1 and every other score 0, and the head of ``d`` is the argmax of row ``d`` of
the gradient. This needs no backpointer tables and no batched stack walk: the backward pass of the same
loop does the backtracking, and it is differentiable TensorFlow that a SavedModel stores as it is.
The sums run in float64, as :func:`~lisa_tf.decoding.mst.decode_tree` does, so both decoders rank
nearly tied trees alike.

References:
    Eisner 1996, "Three New Probabilistic Models for Dependency Parsing: An Exploration", COLING.
    McDonald, Crammer & Pereira 2005, "Online Large-Margin Training of Dependency Parsers", ACL.
    Zmigrod, Vieira & Cotterell 2020, "Please Mind the Root: Decoding Arborescences for Dependency
    Parsing", EMNLP.
    Eisner 2016, "Inside-Outside and Forward-Backward Algorithms Are Just Backprop", SPNLP workshop.
"""

from __future__ import annotations

import tensorflow as tf


def _best_split(values):
    """``max`` over the last axis taken as the value at the argmax, so the gradient reaches one entry."""
    return tf.gather(values, tf.argmax(values, axis=-1, output_type=tf.int32), batch_dims=len(values.shape) - 1)


def _tree_scores(scores, lengths):
    """``best`` of the module docstring for every sentence: ``[B]`` float64 (scores ``[B, T, T]``, T ≥ 1)."""
    size = tf.shape(scores)[1]
    flat_scores = tf.reshape(scores, [tf.shape(scores)[0], -1])
    empty = tf.zeros_like(scores)

    def flat(rows, columns):  # indices of table entries [rows, columns] in a flattened [T·T] table
        return rows * size + columns

    def width_step(w, right, left, inc_right, inc_left):
        starts = tf.range(size - w)[:, None]  # [n_w, 1]: i
        offsets = tf.range(w)[None, :]  # [1, w]: k - i
        ends = starts + w  # j
        gather = lambda table, index: tf.gather(tf.reshape(table, [tf.shape(table)[0], -1]), index, axis=1)
        # Incomplete spans: C→[i, k] + C←[k+1, j] for k = i..j-1, then the arc between i and j.
        split = _best_split(gather(right, flat(starts, starts + offsets))
                            + gather(left, flat(starts + offsets + 1, ends)))
        inc_right = tf.linalg.set_diag(inc_right, split + gather(flat_scores, flat(ends, starts))[:, :, 0], k=w)
        inc_left = tf.linalg.set_diag(inc_left, split + gather(flat_scores, flat(starts, ends))[:, :, 0], k=w)
        # Complete spans: C→ splits at k = i+1..j, C← at k = i..j-1 (I[i, j] of this width is already in).
        right = tf.linalg.set_diag(right, _best_split(gather(inc_right, flat(starts, starts + offsets + 1))
                                                      + gather(right, flat(starts + offsets + 1, ends))), k=w)
        left = tf.linalg.set_diag(left, _best_split(gather(left, flat(starts, starts + offsets))
                                                    + gather(inc_left, flat(starts + offsets, ends))), k=w)
        return w + 1, right, left, inc_right, inc_left

    _, right, left, _, _ = tf.while_loop(
        lambda w, *tables: w < size, width_step, (tf.constant(1), empty, empty, empty, empty))
    # The root's one dependent r: S[r, r] + C←[0, r] + C→[r, n-1], for r < n.
    roots = tf.range(size)[None, :]
    last = tf.maximum(lengths - 1, 0)[:, None]
    total = (tf.linalg.diag_part(scores) + left[:, 0, :]
             + tf.gather(tf.reshape(right, [tf.shape(scores)[0], -1]), flat(roots, last), batch_dims=1))
    total = tf.where(roots < lengths[:, None], total, tf.fill(tf.shape(total), total.dtype.min))
    return _best_split(total)


def eisner_heads(scores, lengths):
    """The best projective dependency tree of each sentence, one token attached to the root.

    Args:
        scores: float ``[B, T, T]``, ``scores[b, d, h]`` the score of the arc ``h → d`` and
            ``scores[b, d, d]`` that of ``d`` attaching to the root (self-loop convention, e.g. the
            parser's ``arc_log_probs``); entries outside a sentence's ``lengths[b]`` tokens are
            ignored (they may be ``-inf``).
        lengths: int ``[B]``, each sentence's token count, ``0 ≤ lengths[b] ≤ T``.

    Returns:
        int32 ``[B, T]`` heads in the self-loop convention: ``heads[b, d]`` the 0-based head of token
        ``d``, ``d`` itself for the token attached to the root; 0 on padding. Convert with
        :func:`lisa_tf.decoding.head_indices.to_conllu`.
    """
    scores = tf.convert_to_tensor(scores)
    lengths = tf.cast(tf.convert_to_tensor(lengths), tf.int32)
    size = tf.shape(scores)[1]
    with tf.control_dependencies([
        tf.debugging.assert_equal(tf.shape(scores)[2], size, message="eisner_heads: scores must be [B, T, T]"),
        tf.debugging.assert_equal(tf.shape(lengths)[0], tf.shape(scores)[0],
                                  message="eisner_heads: one length per sentence of scores"),
        tf.debugging.assert_less_equal(lengths, size, message="eisner_heads: a length exceeds the T of scores"),
        tf.debugging.assert_non_negative(lengths, message="eisner_heads: a length is negative"),
    ]):
        lengths = tf.identity(lengths)
    # At least one position, so an all-empty batch ([B, 0, 0]) decodes to [B, 0] heads.
    padded = tf.maximum(size, 1)
    inside = tf.sequence_mask(lengths, padded)
    pairs = tf.logical_and(inside[:, :, None], inside[:, None, :])
    scores = tf.pad(tf.cast(scores, tf.float64), [[0, 0], [0, padded - size], [0, padded - size]])
    # Padding becomes 0 so no inf or nan reaches the chart (no read of a real sentence touches it).
    scores = tf.where(pairs, scores, tf.zeros_like(scores))
    with tf.GradientTape() as tape:
        tape.watch(scores)
        best = tf.reduce_sum(_tree_scores(scores, lengths))
    arcs = tape.gradient(best, scores)  # 1 on the best tree's arcs, 0 elsewhere
    heads = tf.argmax(arcs, axis=-1, output_type=tf.int32)
    return tf.where(inside, heads, 0)[:, :size]
