"""Constrained BIO Viterbi decoding in core TensorFlow ops, and BIO transition statistics.

Both DeepAtt (Tan et al. 2018, §4 "Constrained Decoding", Table 4: argmax 83.1 F1 vs constrained
decoding 83.0 F1 on CoNLL-05 dev) and LISA (Strubell et al. 2018, §2.4: "At test time, we perform constrained decoding
using the Viterbi algorithm to emit valid sequences of BIO tags, using unary scores s_ft and the
transition probabilities given by the training data") decode per-token label scores with a
first-order Viterbi search.

- :func:`viterbi_decode` runs the search with ``tf.scan`` over time, in float32, using only core
  TensorFlow ops (no tensorflow-addons or tensorflow-text), so it works inside ``tf.function``
  with unknown batch and time sizes and inside an exported SavedModel.
- :func:`bio_transition_mask` / :func:`bio_start_mask` encode the BIO constraints: ``I-X`` may
  only follow ``B-X`` or ``I-X``, and may not start a sequence.
- :func:`pin_predicates` allows a predicate's own token only the predicate's tag ``B-V``
  (:data:`PREDICATE_TAG`); :func:`viterbi_decode` and the frame-constrained search apply it when given
  each row's predicate position, so no argument span covers or joins across its own predicate.
- :func:`transition_log_probs` / :func:`start_log_probs` estimate log-probabilities of tag
  transitions (and first tags) from training tag sequences with add-k smoothing over the allowed
  transitions, with the constraints built in. LISA's released code added raw probabilities to
  log-scores; here all scores are log-probabilities, and forbidden transitions get ``FORBIDDEN``.

Forbidden moves carry the finite score ``FORBIDDEN = -1e9`` rather than ``-inf``: sums stay
finite (no ``-inf - -inf`` or ``0 · -inf`` NaN anywhere downstream, e.g. when the matrix is a
model weight or is exponentiated), yet one forbidden move outweighs any real sentence — with
scores floored at ``log(1e-12) ≈ -27.6`` per token, a valid path of 10,000 tokens still scores
above ``-3e5``.
"""

from __future__ import annotations

import warnings
from typing import Iterable, Sequence

import numpy as np
import tensorflow as tf

from lisa_tf.layers.masking import MASK_LOGIT

#: Score of a forbidden transition or start (see the module docstring): the layers' logit of a
#: padded key, for the same reasons.
FORBIDDEN = MASK_LOGIT

#: The tag of a predicate's own token in its frame's BIO tags
#: (:func:`data_pipeline.vocab.predicate_bio_tags`): its ``V`` span starts there. So in PropBank-EWT:
#: 4,795 of the 4,795 test predicates, 40,418 of the 40,429 training ones (the other 11, ``B-C-V``
#: or ``I-V``, are words split by a hyphen: "flip - flopped").
PREDICATE_TAG = "B-V"


def _split_tag(tag: str) -> tuple[str, str | None]:
    """``"B-A0"`` → ``("B", "A0")``, ``"I-C-A1"`` → ``("I", "C-A1")``, anything else → ``("O", None)``."""
    if tag.startswith("B-") or tag.startswith("I-"):
        return tag[0], tag[2:]
    return "O", None


def bio_transition_mask(labels: Sequence[str]) -> np.ndarray:
    """Allowed BIO transitions as scores: ``[L, L]`` float32, ``0`` allowed, ``FORBIDDEN`` not.

    Entry ``[i, j]`` scores the move from ``labels[i]`` at position ``t`` to ``labels[j]`` at
    ``t + 1``. ``I-X`` may only follow ``B-X`` or ``I-X``; every other tag (``O``, ``B-X``, and any
    tag that is neither ``B-`` nor ``I-``) may follow anything.

    Args:
        labels: the tag strings in id order, e.g. ``["O", "B-A0", "I-A0", ...]``.

    Example:
    ```python
    bio_transition_mask(["O", "B-A0", "I-A0"])
    # [[0, 0, -1e9],     O    → I-A0 forbidden
    #  [0, 0, 0],        B-A0 → anything
    #  [0, 0, 0]]        I-A0 → anything
    ```
    """
    parsed = [_split_tag(label) for label in labels]
    mask = np.zeros((len(labels), len(labels)), np.float32)
    for j, (prefix_to, role_to) in enumerate(parsed):
        if prefix_to != "I":
            continue
        for i, (prefix_from, role_from) in enumerate(parsed):
            if prefix_from == "O" or role_from != role_to:
                mask[i, j] = FORBIDDEN
    return mask


def bio_start_mask(labels: Sequence[str]) -> np.ndarray:
    """Allowed first tags as scores: ``[L]`` float32, ``FORBIDDEN`` for ``I-X``, else 0."""
    return np.array([FORBIDDEN if _split_tag(label)[0] == "I" else 0.0 for label in labels], np.float32)


def predicate_tag_id(labels: Sequence[str]) -> int | None:
    """The id of :data:`PREDICATE_TAG` in ``labels``, or None for a label set without it."""
    labels = list(labels)
    return labels.index(PREDICATE_TAG) if PREDICATE_TAG in labels else None


def pin_predicates(log_potentials, predicates, predicate_tag: int):
    """Per-token scores in which each row's predicate token may only take the predicate's tag.

    ``unary'[n, t, j] = FORBIDDEN`` for ``t = predicates[n]`` and ``j ≠ predicate_tag``, else
    ``unary[n, t, j]``. A path through a forbidden entry scores below every path that avoids it
    (module docstring), and the path ``O … B-V … O`` always avoids them, so a search over ``unary'``
    returns the best path, under the original scores, among those that tag the predicate ``B-V``.
    With the BIO constraints (:func:`bio_transition_mask`: ``I-X`` only after ``B-X``/``I-X``, so
    never right after ``B-V``) an argument can then neither contain the predicate's token nor
    continue across it, so no argument span contains its own predicate. Gold data has none; without
    the pin the search may tag the predicate ``I-ARG1`` and join two pieces of argument around it
    into one span (``B-ARG1 I-ARG1 I-ARG1`` with the predicate in the middle).

    Args:
        log_potentials: ``[N, T, L]`` per-token scores.
        predicates: ``[N]`` int, each row's predicate token; a position outside ``[0, T)`` (``-1``)
            pins nothing in that row.
        predicate_tag: the id of the predicate's tag (:func:`predicate_tag_id`).

    Returns:
        ``[N, T, L]`` float32 scores.
    """
    potentials = tf.cast(tf.convert_to_tensor(log_potentials), tf.float32)
    shape = tf.shape(potentials)
    at = tf.equal(tf.range(shape[1])[None, :], tf.cast(tf.convert_to_tensor(predicates), tf.int32)[:, None])  # [N, T]
    other = tf.not_equal(tf.range(shape[2]), predicate_tag)  # [L]
    return tf.where(tf.logical_and(at[:, :, None], other[None, None, :]), FORBIDDEN, potentials)


def _as_ids(tag_sequences: Iterable[Sequence], labels: Sequence[str]) -> list[list[int]]:
    """Tag sequences of strings or ids → lists of ids; unknown tags raise ``ValueError``."""
    index = {label: i for i, label in enumerate(labels)}
    sequences = []
    for number, sequence in enumerate(tag_sequences):
        ids = []
        for position, tag in enumerate(sequence):
            if isinstance(tag, str):
                if tag not in index:
                    raise ValueError(
                        f"tag sequence {number}, position {position}: expected one of the {len(labels)} labels, found {tag!r}"
                    )
                ids.append(index[tag])
            else:
                tag = int(tag)
                if not 0 <= tag < len(labels):
                    raise ValueError(
                        f"tag sequence {number}, position {position}: expected a label id in [0, {len(labels)}), found {tag}"
                    )
                ids.append(tag)
        sequences.append(ids)
    return sequences


def _smoothed_log_probs(counts: np.ndarray, allowed: np.ndarray, smoothing: float) -> np.ndarray:
    """Add-``smoothing`` log-probabilities over the allowed entries of the last axis; FORBIDDEN elsewhere."""
    if smoothing < 0:
        raise ValueError(f"smoothing must be >= 0, found {smoothing}")
    smoothed = np.where(allowed, counts + smoothing, 0.0)
    totals = smoothed.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_probs = np.log(smoothed / totals)
    # Unseen but allowed entries with smoothing 0 (or rows never seen) fall back to FORBIDDEN / uniform.
    uniform = -np.log(np.maximum(allowed.sum(axis=-1, keepdims=True), 1))
    log_probs = np.where(totals > 0, log_probs, uniform)
    log_probs = np.where(allowed & np.isfinite(log_probs), log_probs, FORBIDDEN)
    return log_probs.astype(np.float32)


def transition_log_probs(tag_sequences: Iterable[Sequence], labels: Sequence[str], smoothing: float = 1.0) -> np.ndarray:
    """Log-probabilities ``log P(tag_{t+1} = j | tag_t = i)`` estimated from training tag sequences.

    Counts every adjacent pair of every sequence, adds ``smoothing`` to every *allowed* transition
    (add-k / Laplace smoothing) and normalises each row over the allowed transitions, so each
    row's probabilities sum to 1 and forbidden transitions (see :func:`bio_transition_mask`) score
    ``FORBIDDEN``. A row never seen in the data is uniform over its allowed transitions.
    Forbidden transitions found in the data are not counted; their number is reported with a
    warning (gold BIO tags built from spans never contain one).

    Args:
        tag_sequences: iterable of tag sequences, as strings (``"B-A0"``) or label ids.
        labels: the tag strings in id order.
        smoothing: pseudo-count added to every allowed transition.

    Returns:
        ``[L, L]`` float32, rows = previous tag, columns = next tag; pass it as
        ``viterbi_decode(..., transitions=...)``.

    Raises:
        ValueError: a tag is not one of ``labels`` (or an id is out of range).
    """
    allowed = bio_transition_mask(labels) == 0
    counts = np.zeros(allowed.shape, np.float64)
    for ids in _as_ids(tag_sequences, labels):
        if len(ids) > 1:
            np.add.at(counts, (ids[:-1], ids[1:]), 1.0)
    invalid = int(counts[~allowed].sum())
    if invalid:
        warnings.warn(f"transition_log_probs: {invalid} forbidden BIO transitions in the tag sequences were not counted")
    counts[~allowed] = 0.0
    return _smoothed_log_probs(counts, allowed, smoothing)


def start_log_probs(tag_sequences: Iterable[Sequence], labels: Sequence[str], smoothing: float = 1.0) -> np.ndarray:
    """Log-probabilities of the first tag of a sequence, estimated like :func:`transition_log_probs`.

    Returns ``[L]`` float32 (``FORBIDDEN`` for ``I-X``); pass it as
    ``viterbi_decode(..., start_transitions=...)``. Sequences starting with a forbidden tag are
    not counted; their number is reported with a warning.
    """
    allowed = bio_start_mask(labels) == 0
    counts = np.zeros(allowed.shape, np.float64)
    for ids in _as_ids(tag_sequences, labels):
        if ids:
            counts[ids[0]] += 1.0
    invalid = int(counts[~allowed].sum())
    if invalid:
        warnings.warn(f"start_log_probs: {invalid} tag sequences starting with a forbidden tag were not counted")
    counts[~allowed] = 0.0
    return _smoothed_log_probs(counts, allowed, smoothing)


def viterbi_decode(log_potentials, lengths, transitions=None, start_transitions=None, pad_value: int = 0,
                   predicates=None, predicate_tag: int | None = None):
    """Best tag sequence of each batch row under per-token scores plus transition scores.

    Maximises ``start[y_0] + Σ_{t<n} unary[t, y_t] + Σ_{0<t<n} transitions[y_{t-1}, y_t]`` over
    tag sequences ``y`` of each row's length ``n`` (with ``predicates``, over those with
    ``y_p = predicate_tag`` at the row's predicate ``p``: :func:`pin_predicates`). Runs in float32
    with ``tf.scan`` over the time axis (dynamic batch, time and label sizes; core TF ops only, so it
    can be traced into a ``tf.function`` and exported in a SavedModel).

    Args:
        log_potentials: ``[batch, time, labels]`` per-token scores, usually log-probabilities
            (LISA Eqn 6 scores after ``log_softmax``). Cast to float32.
        lengths: ``[batch]`` int, the number of real tokens per row (right padding); values
            above ``time`` are clipped.
        transitions: optional ``[labels, labels]`` scores, row = previous tag, column = next tag,
            e.g. :func:`bio_transition_mask` or :func:`transition_log_probs`; ``None``: all zero.
        start_transitions: optional ``[labels]`` scores of the first tag, e.g.
            :func:`bio_start_mask` or :func:`start_log_probs`; ``None``: all zero.
        pad_value: the tag id written at padded positions (``t >= length``). Default 0, the
            ``"O"`` tag of the project's SRL vocabulary.
        predicates: optional ``[batch]`` int, each row's predicate token (``-1``: none), tagged
            ``predicate_tag`` so that no argument span contains it; ``None``: no token is pinned.
        predicate_tag: the predicate's tag id (:func:`predicate_tag_id`); needed with ``predicates``.

    Returns:
        ``(paths, scores)``: ``paths`` int32 ``[batch, time]``, ``scores`` float32 ``[batch]``,
        the score of each best path (0 for an empty row).

    Example:
    ```python
    labels = ["O", "B-A0", "I-A0"]
    unary = tf.math.log([[[0.1, 0.2, 0.7], [0.1, 0.2, 0.7]]])
    paths, _ = viterbi_decode(unary, [2], bio_transition_mask(labels), bio_start_mask(labels))
    # paths == [[1, 2]]: B-A0 I-A0 (argmax would give the invalid I-A0 I-A0)
    ```

    References:
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", §2.4.
        - Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", §4, Table 4.
    """
    potentials = tf.cast(tf.convert_to_tensor(log_potentials), tf.float32)
    if predicates is not None:
        if predicate_tag is None:
            raise ValueError("viterbi_decode: predicates needs predicate_tag, the id of the predicate's tag (B-V)")
        potentials = pin_predicates(potentials, predicates, predicate_tag)
    shape = tf.shape(potentials)
    batch, time, num_labels = shape[0], shape[1], shape[2]
    lengths = tf.minimum(tf.cast(tf.convert_to_tensor(lengths), tf.int32), time)
    if transitions is None:
        transitions = tf.zeros([num_labels, num_labels], tf.float32)
    transitions = tf.cast(tf.convert_to_tensor(transitions), tf.float32)
    if start_transitions is None:
        start_transitions = tf.zeros([num_labels], tf.float32)
    start_transitions = tf.cast(tf.convert_to_tensor(start_transitions), tf.float32)

    # Time-major, padded to at least two steps: position 0 always exists, and neither scan runs
    # over an empty sequence (in a graph with an unknown batch size, stacking an empty list fails).
    steps = tf.transpose(tf.pad(potentials, [[0, 0], [0, tf.maximum(2 - time, 0)], [0, 0]]), [1, 0, 2])
    active = tf.range(tf.shape(steps)[0])[:, None] < lengths[None, :]  # [T', B]
    identity = tf.broadcast_to(tf.range(num_labels)[None, :], [batch, num_labels])
    incoming = tf.transpose(transitions)  # [next, previous]

    def forward(carry, step):
        """One step: alpha_t[j] = max_i (alpha_{t-1}[i] + transitions[i, j]) + unary_t[j]."""
        alpha, _ = carry
        unary, is_active = step
        candidates = alpha[:, None, :] + incoming[None, :, :]  # [B, next, previous]: reduced along memory
        new_alpha = tf.reduce_max(candidates, axis=2) + unary
        best_previous = tf.argmax(candidates, axis=2, output_type=tf.int32)
        # Past a row's end the scores are carried unchanged and the back-pointer is the identity,
        # so the backward pass walks through the padding to the row's last real token.
        return (
            tf.where(is_active[:, None], new_alpha, alpha),
            tf.where(is_active[:, None], best_previous, identity),
        )

    alpha0 = steps[0] + start_transitions[None, :]
    alphas, pointers = tf.scan(forward, (steps[1:], active[1:]), initializer=(alpha0, identity))
    final_alpha = alphas[-1]
    best_last = tf.argmax(final_alpha, axis=-1, output_type=tf.int32)
    scores = tf.where(lengths > 0, tf.reduce_max(final_alpha, axis=-1), 0.0)

    def backward(state, pointer):
        """y_{t-1} = pointer_t[y_t]."""
        return tf.gather(pointer, state, batch_dims=1)

    earlier = tf.scan(backward, pointers, initializer=best_last, reverse=True)  # [T'-1, B]
    paths = tf.transpose(tf.concat([earlier, best_last[None]], axis=0))[:, :time]
    paths = tf.where(tf.range(time)[None, :] < lengths[:, None], paths, tf.cast(pad_value, tf.int32))
    return paths, scores
