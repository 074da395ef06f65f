"""Token-budget tf.data batches of real CoNLL-2005 test.wsj sentences."""

import collections
import dataclasses

import numpy as np
import pytest

from data_pipeline.dataset import PREDICATE_LAYOUT, SENTENCE_LAYOUT, example_order, length_buckets, make_dataset
from data_pipeline.errors import DataFormatError
from data_pipeline.spans import bio_to_spans
from data_pipeline.vocab import Vocabularies
from lisa_tf.models.preprocessor import SrlPreprocessor
from tests.conftest import DATA, shared_path


@pytest.fixture(scope="module")
def wsj():
    from data_pipeline.readers.conll05 import read_conll05

    return read_conll05(shared_path("conll05st", "conll05st-release", "test.wsj"))


@pytest.fixture(scope="module")
def vocabs(wsj):
    return Vocabularies.build(wsj)


@pytest.fixture(scope="module")
def epochs(wsj, vocabs):
    """Two iterations of each layout's dataset at 4096 tokens, as numpy batches."""
    result = {}
    for layout in (SENTENCE_LAYOUT, PREDICATE_LAYOUT):
        dataset, report = make_dataset(wsj, vocabs, layout=layout, token_budget=4096, seed=7,
                                       preprocess=SrlPreprocessor(vocabs.words.entries, layout))
        result[layout] = (report, [_numpy(dataset), _numpy(dataset)])
    return result


def _numpy(dataset):
    return [{k: v.numpy() for k, v in batch.items()} for batch in dataset]


def _budget_ok(batches, budget):
    over = 0
    for batch in batches:
        size, longest = batch["tokens"].shape
        assert longest == batch["length"].max()
        if size * longest > budget:
            assert size == 1, f"a batch of {size} x {longest} exceeds the budget {budget}"
            over += 1
    return over


def test_token_budget_is_respected(epochs):
    for layout, (report, passes) in epochs.items():
        assert _budget_ok(passes[0], 4096) == 0 == report.over_budget_examples
        # Buckets fill batches: most token slots sit in batches using over half the budget.
        slots = [b["tokens"].size for b in passes[0]]
        assert sum(s for s in slots if s > 2048) > 0.5 * sum(slots)


def test_sentences_longer_than_the_budget_are_batched_alone(wsj, vocabs):
    budget = 40
    longer = sum(len(s) > budget for s in wsj)
    assert longer > 100
    dataset, report = make_dataset(wsj, vocabs, token_budget=budget, seed=0)
    assert report.over_budget_examples == longer
    assert _budget_ok(_numpy(dataset), budget) == longer


def test_every_example_appears_once_per_epoch(wsj, epochs):
    report, passes = epochs[SENTENCE_LAYOUT]
    for batches in passes:
        seen = np.concatenate([b["sentence_index"] for b in batches])
        assert sorted(seen.tolist()) == list(range(len(wsj)))
    report, passes = epochs[PREDICATE_LAYOUT]
    expected = sorted((i, k) for i, s in enumerate(wsj) for k in range(len(s.predicates)))
    assert report.examples == len(expected) == 5267
    assert report.sentences_without_predicates == sum(not s.predicates for s in wsj)
    for batches in passes:
        seen = sorted((int(i), int(k)) for b in batches for i, k in zip(b["sentence_index"], b["predicate_index"]))
        assert seen == expected


def test_padding_is_masked_and_features_map_back_to_sentences(wsj, vocabs, epochs):
    for layout, (_, passes) in epochs.items():
        for batch in passes[0]:
            size, longest = batch["word_ids"].shape
            positions = np.arange(longest)[None, :]
            mask = positions < batch["length"][:, None]
            np.testing.assert_array_equal(batch["token_mask"], mask)
            assert not batch["word_ids"][~mask].any() and not batch["predicate_indicator"][~mask].any()
            assert all(t == b"" for t in batch["tokens"][~mask])
            for b in range(size):
                sentence = wsj[batch["sentence_index"][b]]
                n = len(sentence)
                assert [t.decode() for t in batch["tokens"][b, :n]] == sentence.words
                assert batch["word_ids"][b, :n].tolist() == [vocabs.word_id(w) for w in sentence.words]
                assert [vocabs.pos.entry(i) for i in batch["pos_ids"][b, :n]] == sentence.pos
                if layout == SENTENCE_LAYOUT:
                    count = batch["num_predicates"][b]
                    assert count == len(sentence.predicates)
                    assert batch["predicate_mask"][b].tolist() == [p < count for p in range(batch["predicate_mask"].shape[1])]
                    assert batch["predicate_positions"][b, :count].tolist() == sentence.predicate_positions
                    assert np.flatnonzero(batch["predicate_indicator"][b]).tolist() == sorted(set(sentence.predicate_positions))
                    assert not batch["srl_tag_ids"][b, count:].any()
                    joint = [vocabs.joint_pos_predicate.entry(i) for i in batch["joint_pos_predicate_ids"][b, :n]]
                    assert all(j.endswith(":PREDICATE") == (i in sentence.predicate_positions) for i, j in enumerate(joint))
                else:
                    position = sentence.predicates[batch["predicate_index"][b]].position
                    assert batch["predicate_position"][b] == position
                    assert np.flatnonzero(batch["predicate_indicator"][b]).tolist() == [position]


def test_tag_ids_decode_back_to_the_gold_spans(wsj, vocabs, epochs):
    checked = 0
    for layout, (_, passes) in epochs.items():
        for batch in passes[0]:
            for b in range(batch["tokens"].shape[0]):
                sentence = wsj[batch["sentence_index"][b]]
                n = len(sentence)
                if layout == SENTENCE_LAYOUT:
                    rows = [(k, batch["srl_tag_ids"][b, k, :n]) for k in range(batch["num_predicates"][b])]
                else:
                    rows = [(batch["predicate_index"][b], batch["srl_tag_ids"][b, :n])]
                for k, ids in rows:
                    tags = [vocabs.srl.entry(i) for i in ids]
                    assert bio_to_spans(tags) == sorted(sentence.predicates[k].arguments)
                    checked += 1
    assert checked == 2 * 5267


def _order(batches):
    return [b["sentence_index"].tolist() for b in batches]


def test_shuffling_depends_on_the_seed_alone(wsj, vocabs, epochs):
    _, passes = epochs[SENTENCE_LAYOUT]
    assert _order(passes[1]) == _order(passes[0])  # a second iterator of the dataset: the same batches
    again, _ = make_dataset(wsj, vocabs, token_budget=4096, seed=7)
    assert _order(_numpy(again)) == _order(passes[0])  # …and of a new one: the same on every run
    other, _ = make_dataset(wsj, vocabs, token_budget=4096, seed=8)
    assert _order(_numpy(other)) != _order(passes[0])


def test_each_pass_is_a_new_permutation_drawn_from_the_seed():
    def passes(seed):
        indices = [int(i) for i in example_order(100, seed=seed, repeat=True).take(300)]
        return [indices[k:k + 100] for k in (0, 100, 200)]

    first = passes(7)
    assert all(sorted(p) == list(range(100)) for p in first)
    assert first[0] != first[1] != first[2] != first[0]
    assert passes(7) == first and passes(8) != first
    assert [int(i) for i in example_order(5, shuffle=False, repeat=True).take(10)] == [0, 1, 2, 3, 4] * 2


def test_start_resumes_the_repeated_batch_sequence(wsj, vocabs):
    """``start=n`` gives the batches that follow the first n, whole (what a resumed training run reads)."""
    repeated, report = make_dataset(wsj, vocabs, layout=PREDICATE_LAYOUT, token_budget=4096, seed=7, repeat=True)
    batches = _numpy(repeated.take(120))
    assert sum(len(b["length"]) for b in batches) > report.examples  # more than a pass: buckets fill across passes
    for start in (1, 57, 110):
        resumed, _ = make_dataset(wsj, vocabs, layout=PREDICATE_LAYOUT, token_budget=4096, seed=7, repeat=True,
                                  start=start)
        tail = _numpy(resumed.take(120 - start))
        assert len(tail) == 120 - start
        for expected, got in zip(batches[start:], tail):
            assert expected.keys() == got.keys()
            for name in expected:
                np.testing.assert_array_equal(expected[name], got[name])


def test_length_buckets_cover_every_length():
    boundaries = length_buckets(159)
    assert boundaries[0] == 2 and boundaries[-1] == 160
    assert all(b > a for a, b in zip(boundaries, boundaries[1:]))
    # Width at most ~10 % of the bucket's lengths (or one length).
    assert all(b - a <= max(1, 0.1 * a) + 1 for a, b in zip(boundaries, boundaries[1:]))


def test_unknown_labels_error_or_are_counted(wsj):
    small = Vocabularies.build(wsj[:50])
    with pytest.raises(DataFormatError) as info:
        make_dataset(wsj, small)
    assert "not in the" in info.value.message and info.value.path is not None and info.value.line is not None
    _, report = make_dataset(wsj, small, unknown_labels="map")
    expected = collections.Counter()
    for sentence in wsj:
        for predicate in sentence.predicates:
            for span in predicate.arguments:
                for i, tag in enumerate([f"B-{span.label}"] + [f"I-{span.label}"] * (span.end - span.start)):
                    if tag not in small.srl:
                        expected[tag] += 1
    assert expected and report.unknown_labels["srl"] == dict(expected)


def test_features_need_every_sentence_annotated(wsj, vocabs):
    mixed = list(wsj[:20])
    mixed[5] = dataclasses.replace(mixed[5], pos=None)
    with pytest.raises(DataFormatError) as info:
        make_dataset(mixed, vocabs)
    assert info.value.line == mixed[5].line and "pos" in info.value.message
    without = [dataclasses.replace(s, pos=None) for s in wsj[:20]]
    dataset, report = make_dataset(without, vocabs)
    assert "pos_ids" not in report.features and "pos_ids" not in dataset.element_spec


def test_heads_are_zero_based_with_root_self_loops():
    from data_pipeline.readers.conll12 import read_conll12
    from data_pipeline.readers.conllu import attach_parse, read_conllu

    parse_path = DATA / "propbank-ewt" / "dev.conllu.gz"
    sentences = attach_parse(
        read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz"), read_conllu(parse_path), parse_path
    )[:300]
    vocabs = Vocabularies.build(sentences)
    dataset, _ = make_dataset(sentences, vocabs, token_budget=1000, seed=0,
                              preprocess=SrlPreprocessor(vocabs.words.entries, SENTENCE_LAYOUT))
    for batch in _numpy(dataset):
        for b, index in enumerate(batch["sentence_index"]):
            sentence = sentences[index]
            n = len(sentence)
            assert batch["parse_heads"][b, :n].tolist() == sentence.heads  # as read: CoNLL-U
            assert batch["heads"][b, :n].tolist() == [i if h == 0 else h - 1 for i, h in enumerate(sentence.heads)]
            assert [vocabs.dep_labels.entry(i) for i in batch["dep_label_ids"][b, :n]] == sentence.dep_labels
