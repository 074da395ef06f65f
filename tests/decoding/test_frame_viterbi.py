"""Tests of lisa_tf.decoding.frame_viterbi: exact against brute force over every tag sequence, the
constraints on the shipped PropBank-EWT label set, and use inside a traced function."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.spans import bio_to_spans
from data_pipeline.vocab import predicate_bio_tags
from lisa_tf.decoding.frame_viterbi import CoreRoleTags, frame_viterbi_decode
from lisa_tf.decoding.viterbi import bio_start_mask, bio_transition_mask, predicate_tag_id, viterbi_decode
from tests.conftest import DATA

LABELS = ["O", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-C-ARG0", "I-C-ARG0", "B-R-ARG1", "B-ARGM-TMP",
          "I-ARGM-TMP", "B-ARG1-DSP"]


def keeps_frame(tags, allowed=None):
    """The constraints, written directly on tag strings."""
    seen = []
    for tag in tags:
        m = re.match(r"B-(?:(C|R)-)?ARG([0-5A])", tag)
        if not m:
            if allowed is not None and re.match(r"[BI]-(?:[CR]-)?ARG([0-5A])", tag) and \
                    re.match(r"[BI]-(?:[CR]-)?ARG([0-5A])", tag).group(1) not in allowed:
                return False
            continue
        role = m.group(2)
        if allowed is not None and role not in allowed:
            return False
        if m.group(1):
            if role not in seen:
                return False
        elif role in seen:
            return False
        else:
            seen.append(role)
    return True


def brute_force(unary, transitions, start, allowed=None, labels=LABELS, predicate=None):
    """The best path keeping the frame, by enumeration; with ``predicate``, over every sequence that tags that
    token B-V."""
    choices = [range(len(labels))] * unary.shape[0]
    if predicate is not None:
        choices[predicate] = [labels.index("B-V")]
    best, best_score = None, -np.inf
    for path in itertools.product(*choices):
        tags = [labels[i] for i in path]
        if not keeps_frame(tags, allowed):
            continue
        score = start[path[0]] + sum(unary[t, y] for t, y in enumerate(path))
        score += sum(transitions[a, b] for a, b in zip(path[:-1], path[1:]))
        if score > best_score:
            best, best_score = list(path), score
    return best, best_score


def score_of(path, unary, transitions, start):
    return start[path[0]] + sum(unary[t, y] for t, y in enumerate(path)) + sum(
        transitions[a, b] for a, b in zip(path[:-1], path[1:]))


def test_core_role_tags_read_the_label_set():
    tags = CoreRoleTags(LABELS)
    assert tags.roles == ("0", "1")
    assert tags.role_of_tag.tolist() == [-1, 0, 0, 1, 1, 0, 0, 1, -1, -1, 1]
    assert [LABELS[i] for i in np.flatnonzero(tags.opens)] == ["B-ARG0", "B-ARG1", "B-ARG1-DSP"]
    assert [LABELS[i] for i in np.flatnonzero(tags.needs)] == ["B-C-ARG0", "B-R-ARG1"]


@pytest.mark.parametrize("seed", range(6))
def test_exact_against_every_tag_sequence(seed):
    rng = np.random.default_rng(seed)
    n, length = 4, 4
    unary = np.log(rng.dirichlet(np.full(len(LABELS), 0.3), size=(n, length))).astype(np.float32)
    # Make the plain best path break the frame in most rows: ARG0 twice, C-ARG0 first.
    unary[0, :, 1] += 3.0
    unary[1, 0, 5] += 6.0
    transitions = bio_transition_mask(LABELS) + rng.normal(0, 0.3, (len(LABELS),) * 2).astype(np.float32)
    start = bio_start_mask(LABELS)
    allowed = np.array([[True, True], [True, True], [True, False], [False, True]])
    paths = frame_viterbi_decode(unary, [length] * n, CoreRoleTags(LABELS), transitions, start, allowed).numpy()
    for row in range(n):
        roles = {k for k, ok in zip("01", allowed[row]) if ok}
        expected, expected_score = brute_force(unary[row], transitions, start, roles)
        assert keeps_frame([LABELS[i] for i in paths[row]], roles)
        assert score_of(paths[row], unary[row], transitions, start) == pytest.approx(expected_score, rel=1e-5, abs=1e-4)


THREE_ROLES = ["O", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-ARG2", "I-ARG2", "B-C-ARG1", "B-R-ARG2", "B-ARGM-LOC"]


@pytest.mark.parametrize("seed", range(3))
def test_exact_when_keeping_one_role_breaks_another(seed):
    """Row 0's best path repeats ARG0; its best path with one ARG0 repeats ARG1, and the best with one of each
    ends in ARG2: the decoder must not stop at the roles the plain path broke. The other rows are random."""
    labels = THREE_ROLES
    index = {t: i for i, t in enumerate(labels)}
    rng = np.random.default_rng(10 + seed)
    n, length = 4, 4
    unary = np.log(rng.dirichlet(np.full(len(labels), 0.3), size=(n, length))).astype(np.float32)
    unary[0] = np.log(1e-3)
    for t, scores in enumerate([{"B-ARG0": 0.0}, {"B-ARG0": -0.1, "B-ARG1": -0.2},
                                {"B-ARG1": -0.1, "B-ARG2": -0.5}, {"O": 0.0}]):
        for tag, score in scores.items():
            unary[0, t, index[tag]] = score
    unary[1, :, index["B-ARG1"]] += 2.0
    transitions = bio_transition_mask(labels)
    if seed:  # seed 0 keeps the cascade of row 0 to the unary scores
        transitions = transitions + rng.normal(0, 0.3, (len(labels),) * 2).astype(np.float32)
    start = bio_start_mask(labels)
    tags = CoreRoleTags(labels)
    paths = frame_viterbi_decode(unary, [length] * n, tags, transitions, start).numpy()
    plain, _ = viterbi_decode(unary, [length] * n, transitions, start)
    if seed == 0:
        assert [labels[i] for i in plain.numpy()[0]] == ["B-ARG0", "B-ARG0", "B-ARG1", "O"]
        assert [labels[i] for i in paths[0]] == ["B-ARG0", "B-ARG1", "B-ARG2", "O"]
    for row in range(n):
        expected, expected_score = brute_force(unary[row], transitions, start, labels=labels)
        assert keeps_frame([labels[i] for i in paths[row]])
        assert score_of(paths[row], unary[row], transitions, start) == pytest.approx(expected_score, rel=1e-5, abs=1e-4)


WITH_V = ["O", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-C-ARG1", "B-R-ARG0", "B-ARGM-TMP", "I-ARGM-TMP", "B-V"]


def covers(tags, position):
    """Argument spans (not the predicate's own V) that contain ``position``."""
    return [span for span in bio_to_spans(tags)
            if span.label not in ("V", "C-V") and span.start <= position <= span.end]


@pytest.mark.parametrize("seed", range(4))
def test_exact_with_the_predicate_pinned(seed):
    """The best path keeping the frame and tagging the predicate B-V, against every tag sequence. Row 0 is
    built so that its frame without the pin is one ARG1 across the predicate, and its plain path with the pin
    repeats ARG1 on both sides of it; the other rows favour ARG0/ARG1 spans on random scores."""
    labels = WITH_V
    index = {t: i for i, t in enumerate(labels)}
    verb = predicate_tag_id(labels)
    rng = np.random.default_rng(30 + seed)
    n, length = 5, 5
    unary = np.log(rng.dirichlet(np.full(len(labels), 0.4), size=(n, length))).astype(np.float32)
    unary[0] = np.log(1e-3)
    for t, tag in enumerate(["B-ARG1", "I-ARG1", "I-ARG1", "I-ARG1", "I-ARG1"]):
        unary[0, t, index[tag]] = 0.0
    unary[0, 3, index["B-ARG1"]] = -0.5
    unary[1:, 0, index["B-ARG1"]] += 2.0
    unary[1:, 1:, index["I-ARG1"]] += 1.5
    unary[1:, 2:, index["B-ARG0"]] += 1.0
    transitions = bio_transition_mask(labels)
    if seed:
        transitions = transitions + rng.normal(0, 0.3, (len(labels),) * 2).astype(np.float32)
    start = bio_start_mask(labels)
    predicates = np.array([2, 1, 3, 0, 4])
    allowed = np.array([[True, True], [True, True], [True, True], [False, True], [True, True]])
    tags = CoreRoleTags(labels)
    paths = frame_viterbi_decode(unary, [length] * n, tags, transitions, start, allowed, predicates=predicates,
                                 predicate_tag=verb).numpy()
    unpinned = frame_viterbi_decode(unary, [length] * n, tags, transitions, start, allowed).numpy()
    plain, _ = viterbi_decode(unary, [length] * n, transitions, start, predicates=predicates, predicate_tag=verb)
    if seed == 0:
        assert [labels[i] for i in unpinned[0]] == ["B-ARG1", "I-ARG1", "I-ARG1", "I-ARG1", "I-ARG1"]
        assert [labels[i] for i in plain.numpy()[0]] == ["B-ARG1", "I-ARG1", "B-V", "B-ARG1", "I-ARG1"]
        assert [labels[i] for i in paths[0]].count("B-ARG1") == 1  # the frame search had to fix the pinned path
    for row in range(n):
        roles = {k for k, ok in zip("01", allowed[row]) if ok}
        decoded = [labels[i] for i in paths[row]]
        expected, expected_score = brute_force(unary[row], transitions, start, roles, labels, predicates[row])
        assert keeps_frame(decoded, roles) and decoded[predicates[row]] == "B-V"
        assert covers(decoded, predicates[row]) == []
        assert score_of(paths[row], unary[row], transitions, start) == pytest.approx(expected_score, rel=1e-5, abs=1e-4)
    assert sum(bool(covers([labels[i] for i in unpinned[row]], predicates[row])) for row in range(n)) >= 2


def test_pinned_frames_never_cover_the_predicate_on_random_scores():
    rng = np.random.default_rng(5)
    labels = WITH_V
    n, width = 96, 14
    lengths = rng.integers(1, width + 1, size=n)
    predicates = rng.integers(0, lengths)
    concentration = np.array([1, 3, 4, 3, 4, 1, 1, 1, 1, 1], float)  # core-role spans everywhere
    unary = np.log(rng.dirichlet(concentration, size=(n, width))).astype(np.float32)
    tags = CoreRoleTags(labels)
    transitions, start = bio_transition_mask(labels), bio_start_mask(labels)
    paths = frame_viterbi_decode(unary, lengths, tags, transitions, start, predicates=predicates,
                                 predicate_tag=predicate_tag_id(labels)).numpy()
    unpinned = frame_viterbi_decode(unary, lengths, tags, transitions, start).numpy()
    crossed = 0
    for row, (length, position) in enumerate(zip(lengths, predicates)):
        decoded = [labels[i] for i in paths[row, :length]]
        assert decoded[position] == "B-V" and covers(decoded, position) == [] and keeps_frame(decoded)
        crossed += bool(covers([labels[i] for i in unpinned[row, :length]], position))
    assert crossed > 10
    assert not tags.violations(paths).numpy().any()


def test_role_violations_name_the_roles_broken():
    tags = CoreRoleTags(THREE_ROLES)
    index = {t: i for i, t in enumerate(THREE_ROLES)}
    rows = [["B-ARG0", "B-ARG0", "B-C-ARG1", "B-ARG1"], ["B-R-ARG2", "B-ARG2", "O", "O"], ["B-ARG1", "B-C-ARG1", "B-ARG2", "B-R-ARG2"]]
    broken = tags.role_violations([[index[t] for t in row] for row in rows]).numpy()
    assert broken.tolist() == [[True, True, False], [False, False, True], [False, False, False]]


def test_rows_that_keep_the_frame_are_the_plain_viterbi_path_and_padding_is_o():
    rng = np.random.default_rng(7)
    unary = np.log(rng.dirichlet(np.ones(len(LABELS)), size=(3, 5))).astype(np.float32)
    unary[:, :, 0] += 4.0  # mostly O: nothing to fix
    unary[2, 1, 1] += 8.0
    unary[2, 3, 1] += 8.0  # two ARG0 in row 2 (length 5)
    lengths = [5, 3, 5]
    tags = CoreRoleTags(LABELS)
    plain, _ = viterbi_decode(unary, lengths, bio_transition_mask(LABELS), bio_start_mask(LABELS))
    paths = frame_viterbi_decode(unary, lengths, tags, bio_transition_mask(LABELS), bio_start_mask(LABELS)).numpy()
    assert paths[:2].tolist() == plain.numpy()[:2].tolist()
    assert paths[1, 3:].tolist() == [0, 0]
    assert [LABELS[i] for i in plain.numpy()[2]].count("B-ARG0") == 2
    assert [LABELS[i] for i in paths[2]].count("B-ARG0") == 1


def test_ewt_gold_keeps_the_constraints_and_a_repeated_role_is_found():
    """The stricter reading (R-X and C-X after X) holds on the gold data the docstring cites."""
    sentences = read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz")
    labels = sorted({t for s in sentences for p in s.predicates for t in predicate_bio_tags(p, len(s.words))[0]} | {"O"})
    labels.remove("O")
    labels = ["O"] + labels
    tags = CoreRoleTags(labels)
    assert "0" in tags.roles and "1" in tags.roles
    index = {t: i for i, t in enumerate(labels)}
    rows = [[index[t] for t in predicate_bio_tags(p, len(s.words))[0]] for s in sentences[:400] for p in s.predicates]
    width = max(map(len, rows))
    paths = np.array([r + [0] * (width - len(r)) for r in rows], np.int32)
    assert not tags.violations(paths).numpy().any()
    broken = paths.copy()
    row = next(i for i, r in enumerate(rows) if index["B-ARG0"] in r and index["B-ARG1"] in r)
    broken[row, rows[row].index(index["B-ARG1"])] = index["B-ARG0"]
    assert np.flatnonzero(tags.violations(broken).numpy()).tolist() == [row]


def test_traced_with_unknown_sizes_and_an_empty_batch():
    tags = CoreRoleTags(LABELS)
    transitions, start = bio_transition_mask(LABELS), bio_start_mask(LABELS)

    @tf.function(input_signature=[tf.TensorSpec([None, None, len(LABELS)]), tf.TensorSpec([None], tf.int32)])
    def decode(unary, lengths):
        return frame_viterbi_decode(unary, lengths, tags, transitions, start)

    unary = np.full((2, 3, len(LABELS)), np.log(0.01), np.float32)
    unary[:, :, 1] = 0.0  # B-ARG0 everywhere
    paths = decode(unary, tf.constant([3, 2])).numpy()
    assert [[LABELS[i] for i in row].count("B-ARG0") for row in paths] == [1, 1]
    assert decode(np.zeros((0, 4, len(LABELS)), np.float32), tf.zeros([0], tf.int32)).shape == (0, 4)

    verb = WITH_V.index("B-V")
    pinned_tags, pinned_transitions = CoreRoleTags(WITH_V), bio_transition_mask(WITH_V)
    pinned_start = bio_start_mask(WITH_V)

    @tf.function(input_signature=[tf.TensorSpec([None, None, len(WITH_V)]), tf.TensorSpec([None], tf.int32),
                                  tf.TensorSpec([None], tf.int32)])
    def pinned(unary, lengths, predicates):
        return frame_viterbi_decode(unary, lengths, pinned_tags, pinned_transitions, pinned_start,
                                    predicates=predicates, predicate_tag=verb)

    unary = np.full((2, 4, len(WITH_V)), np.log(0.01), np.float32)
    unary[:, 0, 3] = unary[:, 1:, 4] = 0.0  # one ARG1 over the whole row
    paths = pinned(unary, tf.constant([4, 3]), tf.constant([1, -1])).numpy()
    assert [WITH_V[i] for i in paths[0]] == ["B-ARG1", "B-V", "O", "O"]  # ARG1 once: not again after the predicate
    assert [WITH_V[i] for i in paths[1]] == ["B-ARG1", "I-ARG1", "I-ARG1", "O"]
    empty = pinned(np.zeros((0, 4, len(WITH_V)), np.float32), tf.zeros([0], tf.int32), tf.zeros([0], tf.int32))
    assert empty.shape == (0, 4)
