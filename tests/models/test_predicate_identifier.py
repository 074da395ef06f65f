"""The predicate identifier of DeepAtt and Selective Connection: its decision rule and serialisation, and
that a trained run finds the predicates of real EWT sentences and labels them as given predicates."""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.sentence import Predicate
from data_pipeline.splits import read_split
from data_pipeline.vocab import Vocabularies
import lisa_tf
from lisa_tf.config import load_config
from lisa_tf.evaluation.runs import evaluate_runs
from lisa_tf.labelling.batches import identify_predicates, predict_sentences
from lisa_tf.labelling.predictor import PredictionInputError, Predictor
from lisa_tf.models import PredicateIdentifier, SrlBackbone, build_model
from lisa_tf.models.runs import load_run, load_run_config
from tests.models.conftest import tiny_overrides


def _backbone(**options):
    return SrlBackbone(20, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2, filter_size=32,
                       order="attention_first", **options)


def test_a_token_is_a_predicate_when_its_best_joint_label_is_a_predicate_label():
    tagger = PredicateIdentifier(_backbone(predicate_indicator=False), [0.0, 1.0, 0.0, 1.0])
    logits = tf.constant([[[2.0, 1.0, 0.0, 0.0],   # TAG wins
                           [0.0, 3.0, 2.9, 0.0],   # TAG:PREDICATE wins narrowly
                           [0.0, 0.0, 1.0, 1.5],   # the other predicate label wins
                           [0.0, 5.0, 0.0, 0.0]]])  # padding
    flags = tagger.predicate_flags(logits, tf.constant([[True, True, True, False]]))
    assert flags.numpy().tolist() == [[False, True, True, False]]
    exp = np.exp(logits.numpy()[0])
    expected = (exp[:, 1] + exp[:, 3]) / exp.sum(axis=1)
    np.testing.assert_allclose(tagger.predicate_probabilities(logits).numpy()[0], expected, rtol=1e-6)
    with pytest.raises(ValueError, match="must not read a predicate indicator"):
        PredicateIdentifier(_backbone(predicate_indicator=True), [0.0, 1.0])
    with pytest.raises(ValueError, match="at least one TAG:PREDICATE label"):
        PredicateIdentifier(_backbone(predicate_indicator=False), [0.0, 0.0])


def test_config_round_trip_gives_the_same_logits():
    tagger = PredicateIdentifier(_backbone(predicate_indicator=False), [0.0, 1.0, 0.0])
    ids = tf.constant([[5, 7, 9, 0]])
    before = tagger(ids, padding_mask=ids > 0)
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(tagger))
    again(ids, padding_mask=ids > 0)
    again.set_weights(tagger.get_weights())
    np.testing.assert_allclose(again(ids, padding_mask=ids > 0), before, rtol=1e-6)
    assert again.predicate_label_flags == (0.0, 1.0, 0.0)


def test_a_trained_run_finds_the_predicates_of_its_sentences(deepatt_run):
    """The tiny DeepAtt run (300 steps on 20 EWT sentences) identifies their predicates; labelling
    without predicates equals labelling the identified ones given; ``--gold-predicates`` keeps the gold."""
    config = load_run_config(deepatt_run)
    metrics = evaluate_runs([str(deepatt_run)], config.data.train, limit=20)
    assert metrics["gold_predicates"] is False
    assert metrics["parsing"]["predicate_f1"] >= 90.0  # an untrained identifier finds next to none
    gold = evaluate_runs([str(deepatt_run)], config.data.train, limit=20, gold_predicates=True)
    assert gold["gold_predicates"] is True and "parsing" not in gold

    model = load_run(deepatt_run)
    sentences = read_split(config.data.train, config.data.format, None, 20)
    found = identify_predicates(model, sentences)
    automatic = predict_sentences(model, sentences, gold_predicates=False)
    assert [[p.position for p in s.predicates] for s in automatic] == found
    given = [dataclasses.replace(s, predicates=[Predicate(i, s.words[i].lower()) for i in positions])
             for s, positions in zip(sentences, found)]
    by_hand = predict_sentences(model, given)
    assert [[(p.position, p.arguments) for p in s.predicates] for s in automatic] == \
        [[(p.position, p.arguments) for p in s.predicates] for s in by_hand]

    # The predictor finds predicates in raw text the same way.
    texts = [" ".join(s.words) for s in sentences[:6]]
    results = lisa_tf.load(deepatt_run).predict(texts)
    assert [[p["token"] for p in r["predicates"]] for r in results] == found[:6]


def test_a_model_without_an_identifier_asks_for_predicates():
    config = load_config(None, tiny_overrides(**{"model.kind": "selective", "model.predicate_identifier_layers": 0}))
    sentences = read_split(config.data.train, config.data.format, None, 4)
    model = build_model(config.model, Vocabularies.build(sentences))
    model.build_from_batch()
    assert model.predicate_identifier is None and not model.predicts_predicates
    with pytest.raises(PredictionInputError, match="no predicate identifier and labels given predicates only"):
        Predictor(model).predict("A cat sat.")
    (result,) = Predictor(model).predict(tokens=[["A", "cat", "sat", "."]], predicates=[[2]])
    assert [p["token"] for p in result["predicates"]] == [2]


def test_the_identifier_of_the_papers_selective_sizes_takes_heads_that_divide_the_width():
    """CoNLL-05 Selective Connection: 100 units and 16 heads; the identifier's attention gets 10 heads."""
    config = load_config(None, tiny_overrides(**{"model.kind": "selective", "model.hidden_size": 100,
                                                 "model.num_heads": 16, "model.num_layers": 1}))
    sentences = read_split(config.data.train, config.data.format, None, 5)
    model = build_model(config.model, Vocabularies.build(sentences))
    model.build_from_batch()
    attention = model.predicate_identifier.backbone.blocks[0][0].layer  # attention first
    assert (attention.num_heads, attention.key_dim) == (10, 10)
