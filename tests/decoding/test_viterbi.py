"""Tests of lisa_tf.decoding.viterbi: brute force on small cases, BIO validity, graph/SavedModel use,
and transition statistics on the shipped PropBank-EWT data."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.spans import bio_to_spans
from data_pipeline.vocab import predicate_bio_tags
from lisa_tf.decoding.viterbi import (
    FORBIDDEN,
    PREDICATE_TAG,
    bio_start_mask,
    bio_transition_mask,
    pin_predicates,
    predicate_tag_id,
    start_log_probs,
    transition_log_probs,
    viterbi_decode,
)
from tests.conftest import DATA

LABELS = ["O", "B-A0", "I-A0", "B-A1", "I-A1"]


def is_valid_bio(tags):
    """I-X only after B-X or I-X, never first."""
    previous = "O"
    for tag in tags:
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            return False
        previous = tag
    return True


def path_score(path, unary, transitions, start):
    return start[path[0]] + sum(unary[t, y] for t, y in enumerate(path)) + sum(
        transitions[a, b] for a, b in zip(path, path[1:])
    )


def brute_force(unary, length, transitions, start, pinned=None):
    """Best path by enumerating all L^length sequences (with ``pinned = (position, tag)``, those with that tag
    there)."""
    paths = itertools.product(range(unary.shape[1]), repeat=length)
    if pinned is not None and 0 <= pinned[0] < length:
        paths = (p for p in paths if p[pinned[0]] == pinned[1])
    best = max(paths, key=lambda p: path_score(p, unary, transitions, start))
    return list(best), path_score(best, unary, transitions, start)


def argument_over(tags, position):
    """The argument spans (not the predicate's own ``V``/``C-V``) that contain ``position``."""
    return [span for span in bio_to_spans(tags)
            if span.label not in ("V", "C-V") and span.start <= position <= span.end]


def test_masks_encode_bio():
    mask = bio_transition_mask(LABELS)
    for i, previous in enumerate(LABELS):
        for j, following in enumerate(LABELS):
            valid = not following.startswith("I-") or (previous[:2] in ("B-", "I-") and previous[2:] == following[2:])
            assert mask[i, j] == (0.0 if valid else FORBIDDEN)
    assert mask[1, 2] == 0 and mask[2, 2] == 0 and mask[3, 2] == FORBIDDEN and mask[0, 4] == FORBIDDEN
    np.testing.assert_array_equal(bio_start_mask(LABELS), [0, 0, FORBIDDEN, 0, FORBIDDEN])


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    lengths = np.array([6, 3, 1, 5, 0, 4])
    unary = rng.normal(size=(6, 6, 5)).astype("float32")
    transitions = (rng.normal(size=(5, 5)) + bio_transition_mask(LABELS)).astype("float32")
    start = (rng.normal(size=5) + bio_start_mask(LABELS)).astype("float32")
    for use_start in (True, False):
        start_used = start if use_start else np.zeros(5, "float32")
        paths, scores = viterbi_decode(unary, lengths, transitions, start if use_start else None, pad_value=0)
        paths, scores = paths.numpy(), scores.numpy()
        assert paths.dtype == np.int32 and paths.shape == (6, 6)
        for row, length in enumerate(lengths):
            assert np.all(paths[row, length:] == 0)
            if length == 0:
                assert scores[row] == 0
                continue
            best, best_score = brute_force(unary[row], length, transitions, start_used)
            assert list(paths[row, :length]) == best
            np.testing.assert_allclose(scores[row], best_score, rtol=1e-6)
            if use_start:
                assert is_valid_bio([LABELS[y] for y in best])


WITH_V = ["O", "B-A0", "I-A0", "B-A1", "I-A1", "B-V", "I-V"]


def test_the_predicates_tag_and_what_may_follow_it():
    """The predicate's token is tagged B-V in gold data, and no argument's I- tag may follow B-V, so an argument
    cannot continue across a token pinned to B-V."""
    assert predicate_tag_id(WITH_V) == 5 and predicate_tag_id(LABELS) is None
    sentences = read_conll12(DATA / "propbank-ewt" / "test.gold_conll.gz")
    assert all(predicate_bio_tags(p, len(s))[0][p.position] == PREDICATE_TAG for s in sentences for p in s.predicates)
    mask = bio_transition_mask(WITH_V)
    assert mask[5, 2] == FORBIDDEN and mask[5, 4] == FORBIDDEN and mask[6, 4] == FORBIDDEN and mask[5, 6] == 0


@pytest.mark.parametrize("seed", range(3))
def test_pinned_predicate_is_exact_against_brute_force(seed):
    """Each row's best path among those tagging its predicate B-V; rows pinned at -1 or past their end decode
    unpinned. Scores favour long A1 spans, so the unpinned search crosses the predicate in most rows."""
    rng = np.random.default_rng(20 + seed)
    lengths = np.array([5, 5, 4, 5, 3, 5, 0])
    predicates = np.array([2, 1, 3, -1, 4, 0, 0])
    unary = np.log(rng.dirichlet(np.full(len(WITH_V), 0.5), size=(7, 5))).astype("float32")
    unary[:, 0, 3] += 2.0
    unary[:, 1:, 4] += 2.0
    transitions = (rng.normal(0, 0.3, size=(7, 7)) + bio_transition_mask(WITH_V)).astype("float32")
    start = (rng.normal(0, 0.3, size=7) + bio_start_mask(WITH_V)).astype("float32")
    paths, scores = viterbi_decode(unary, lengths, transitions, start, predicates=predicates, predicate_tag=5)
    plain, _ = viterbi_decode(unary, lengths, transitions, start)
    paths, scores, plain = paths.numpy(), scores.numpy(), plain.numpy()
    crossed = 0
    for row, (length, position) in enumerate(zip(lengths, predicates)):
        if length == 0:
            continue
        best, best_score = brute_force(unary[row], length, transitions, start, (position, 5))
        assert list(paths[row, :length]) == best
        np.testing.assert_allclose(scores[row], best_score, rtol=1e-6)
        tags = [WITH_V[y] for y in paths[row, :length]]
        assert is_valid_bio(tags)
        if 0 <= position < length:
            assert tags[position] == "B-V" and argument_over(tags, position) == []
            crossed += bool(argument_over([WITH_V[y] for y in plain[row, :length]], position))
        else:
            assert list(paths[row]) == list(plain[row])
    assert crossed >= 2, "the scores should make the unpinned search cross the predicate"


def test_pinned_decoding_never_covers_the_predicate_on_random_scores():
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 16, size=128)
    predicates = rng.integers(0, lengths)
    unary = np.log(rng.dirichlet([1, 1, 6, 1, 6, 1, 1], size=(128, 15))).astype("float32")  # I- tags everywhere
    transitions, start = bio_transition_mask(WITH_V), bio_start_mask(WITH_V)
    paths, scores = viterbi_decode(unary, lengths, transitions, start, predicates=predicates, predicate_tag=5)
    plain, _ = viterbi_decode(unary, lengths, transitions, start)
    assert np.all(scores.numpy() > FORBIDDEN / 2)
    crossed = 0
    for row, (length, position) in enumerate(zip(lengths, predicates)):
        tags = [WITH_V[y] for y in paths.numpy()[row, :length]]
        assert tags[position] == "B-V" and argument_over(tags, position) == [] and is_valid_bio(tags)
        crossed += bool(argument_over([WITH_V[y] for y in plain.numpy()[row, :length]], position))
    assert crossed > 20


def test_pin_predicates_forbids_every_other_tag_at_the_predicate_only():
    unary = np.zeros((2, 3, 4), np.float32)
    pinned = pin_predicates(unary, [1, -1], 2).numpy()
    np.testing.assert_array_equal(pinned[0, 1], [FORBIDDEN, FORBIDDEN, 0, FORBIDDEN])
    assert not pinned[0, [0, 2]].any() and not pinned[1].any()
    with pytest.raises(ValueError, match="predicate_tag"):
        viterbi_decode(unary, [3, 3], predicates=[1, 1])


def test_unconstrained_equals_argmax_and_pad_value():
    unary = np.random.default_rng(5).normal(size=(2, 4, 5)).astype("float32")
    paths, _ = viterbi_decode(unary, [4, 2], pad_value=-1)
    np.testing.assert_array_equal(paths.numpy()[0], unary[0].argmax(-1))
    np.testing.assert_array_equal(paths.numpy()[1], list(unary[1, :2].argmax(-1)) + [-1, -1])


def test_decoded_paths_are_always_valid_bio():
    rng = np.random.default_rng(1)
    # Potentials that favour I- tags everywhere: argmax would be invalid almost always.
    unary = np.log(rng.dirichlet([1, 1, 5, 1, 5], size=(64, 12))).astype("float32")
    lengths = rng.integers(0, 13, size=64)
    paths, scores = viterbi_decode(unary, lengths, bio_transition_mask(LABELS), bio_start_mask(LABELS))
    assert np.all(scores.numpy() > FORBIDDEN / 2)
    for row, length in enumerate(lengths):
        assert is_valid_bio([LABELS[y] for y in paths.numpy()[row, :length]])


def test_runs_in_tf_function_with_unknown_shapes_and_in_saved_model(tmp_path):
    class Decoder(tf.Module):
        def __init__(self):
            super().__init__()
            self.transitions = tf.Variable(bio_transition_mask(LABELS))
            self.start = tf.Variable(bio_start_mask(LABELS))

        @tf.function(input_signature=[tf.TensorSpec([None, None, None], tf.float32), tf.TensorSpec([None], tf.int32)])
        def __call__(self, potentials, lengths):
            return viterbi_decode(potentials, lengths, self.transitions, self.start)

        @tf.function(input_signature=[tf.TensorSpec([None, None, None], tf.float32), tf.TensorSpec([None], tf.int32),
                                      tf.TensorSpec([None], tf.int32)])
        def pinned(self, potentials, lengths, predicates):
            return viterbi_decode(potentials, lengths, self.transitions, self.start, predicates=predicates,
                                  predicate_tag=3)

    decoder = Decoder()
    rng = np.random.default_rng(2)
    cases = [
        (rng.normal(size=(3, 7, 5)).astype("float32"), np.array([7, 2, 0], "int32")),
        (rng.normal(size=(1, 1, 5)).astype("float32"), np.array([1], "int32")),
        (np.zeros((2, 0, 5), "float32"), np.array([0, 0], "int32")),
    ]
    expected = [viterbi_decode(p, n, bio_transition_mask(LABELS), bio_start_mask(LABELS)) for p, n in cases]
    for (potentials, lengths), (paths, scores) in zip(cases, expected):
        got_paths, got_scores = decoder(potentials, lengths)
        assert got_paths.shape == potentials.shape[:2]
        np.testing.assert_array_equal(got_paths.numpy(), paths.numpy())
        np.testing.assert_array_equal(got_scores.numpy(), scores.numpy())
    predicates = [np.array([3, 1, -1], "int32"), np.array([0], "int32"), np.array([0, -1], "int32")]
    pinned = [viterbi_decode(p, n, bio_transition_mask(LABELS), bio_start_mask(LABELS), predicates=k, predicate_tag=3)
              for (p, n), k in zip(cases, predicates)]
    assert pinned[0][0].numpy()[0, 3] == 3 and pinned[1][0].numpy()[0, 0] == 3
    tf.saved_model.save(decoder, str(tmp_path / "decoder"))
    loaded = tf.saved_model.load(str(tmp_path / "decoder"))
    for (potentials, lengths), (paths, scores) in zip(cases, expected):
        got_paths, got_scores = loaded(tf.constant(potentials), tf.constant(lengths))
        np.testing.assert_array_equal(got_paths.numpy(), paths.numpy())
        np.testing.assert_array_equal(got_scores.numpy(), scores.numpy())
    for (potentials, lengths), positions, (paths, scores) in zip(cases, predicates, pinned):
        got_paths, got_scores = loaded.pinned(tf.constant(potentials), tf.constant(lengths), tf.constant(positions))
        np.testing.assert_array_equal(got_paths.numpy(), paths.numpy())
        np.testing.assert_array_equal(got_scores.numpy(), scores.numpy())


@pytest.fixture(scope="module")
def ewt_dev_tags():
    """BIO tag sequences of every predicate of the shipped PropBank-EWT dev set, and the label list."""
    sentences = read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz")
    sequences = [predicate_bio_tags(p, len(s.words))[0] for s in sentences for p in s.predicates]
    tags = sorted({tag for sequence in sequences for tag in sequence} - {"O"})
    return sequences, ["O"] + tags


def test_transition_statistics_on_real_data(ewt_dev_tags):
    sequences, labels = ewt_dev_tags
    assert len(sequences) > 1000
    allowed = bio_transition_mask(labels) == 0
    log_probs = transition_log_probs(sequences, labels, smoothing=1.0)
    assert np.all(log_probs[~allowed] == FORBIDDEN)
    np.testing.assert_allclose(np.where(allowed, np.exp(log_probs), 0).sum(1), 1.0, rtol=1e-5)
    index = {label: i for i, label in enumerate(labels)}
    # Add-one estimate of one transition, counted by hand.
    pairs = [(a, b) for s in sequences for a, b in zip(s, s[1:])]
    from_b_arg1 = [b for a, b in pairs if a == "B-ARG1"]
    expected = (from_b_arg1.count("I-ARG1") + 1) / (len(from_b_arg1) + allowed[index["B-ARG1"]].sum())
    np.testing.assert_allclose(np.exp(log_probs[index["B-ARG1"], index["I-ARG1"]]), expected, rtol=1e-5)
    starts = start_log_probs(sequences, labels)
    assert np.all(starts[[i for i, l in enumerate(labels) if l.startswith("I-")]] == FORBIDDEN)
    np.testing.assert_allclose(np.exp(starts[starts > FORBIDDEN]).sum(), 1.0, rtol=1e-5)
    # Ids work like strings.
    as_ids = [[index[t] for t in s] for s in sequences[:50]]
    np.testing.assert_array_equal(transition_log_probs(as_ids, labels), transition_log_probs(sequences[:50], labels))


def test_real_gold_paths_are_recovered_and_corrupted_ones_repaired(ewt_dev_tags):
    sequences, labels = ewt_dev_tags
    sequences = [s for s in sequences if len(s) <= 40][:200]
    index = {label: i for i, label in enumerate(labels)}
    gold = np.zeros((len(sequences), 40), np.int32)
    lengths = np.array([len(s) for s in sequences], np.int32)
    for row, sequence in enumerate(sequences):
        gold[row, : len(sequence)] = [index[t] for t in sequence]
    peaked = np.full((len(sequences), 40, len(labels)), 0.1 / len(labels), np.float32)
    np.put_along_axis(peaked, gold[..., None], 0.9, axis=-1)
    transitions = transition_log_probs(sequences, labels)
    paths, _ = viterbi_decode(np.log(peaked), lengths, bio_transition_mask(labels), bio_start_mask(labels))
    valid_positions = np.arange(40)[None, :] < lengths[:, None]
    np.testing.assert_array_equal(paths.numpy()[valid_positions], gold[valid_positions])
    # Corrupt: every B-X scored as I-X (the invalid argmax DeepAtt's rule has to repair).
    corrupted = gold.copy()
    for label, i in index.items():
        if label.startswith("B-") and "I-" + label[2:] in index:
            corrupted[gold == i] = index["I-" + label[2:]]
    assert not all(is_valid_bio([labels[y] for y in corrupted[r, :n]]) for r, n in enumerate(lengths))
    noisy = np.full_like(peaked, 0.1 / len(labels))
    np.put_along_axis(noisy, corrupted[..., None], 0.9, axis=-1)
    paths, _ = viterbi_decode(np.log(noisy), lengths, transitions, start_log_probs(sequences, labels))
    for row, length in enumerate(lengths):
        assert is_valid_bio([labels[y] for y in paths.numpy()[row, :length]])


def test_bad_tags_are_reported():
    with pytest.raises(ValueError, match="'B-A9'"):
        transition_log_probs([["O", "B-A9"]], LABELS)
    with pytest.raises(ValueError, match="found 7"):
        transition_log_probs([[0, 7]], LABELS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log_probs = transition_log_probs([["O", "I-A0", "I-A0"]], LABELS)
    assert any("1 forbidden BIO transitions" in str(w.message) for w in caught)
    assert log_probs[0, 2] == FORBIDDEN
    np.testing.assert_allclose(np.exp(log_probs[2, [0, 1, 2, 3]]), [1 / 5, 1 / 5, 2 / 5, 1 / 5], rtol=1e-6)  # 4 allowed successors, 1 count
