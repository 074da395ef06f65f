"""The sense head (each predicate's roleset) on real PropBank-EWT sentences, for every SRL model kind."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.splits import read_split
from lisa_tf.models import SenseHead
from lisa_tf.models.sense_head import sense_loss
from tests.models.test_lisa import _model_and_batch


def _built(tiny, sentences=6, **extra):
    config, vocabs, model, batch = _model_and_batch(tiny, sentences, **extra)
    return read_split(config.data.train, config.data.format, config.data.parse_train, sentences), vocabs, model, batch


def test_sense_ids_are_the_gold_rolesets(tiny):
    data, vocabs, _, batch = _built(tiny)
    assert len(vocabs.senses) > 5
    ids, count, index = batch["sense_ids"].numpy(), batch["num_predicates"].numpy(), batch["sentence_index"].numpy()
    for row, s in enumerate(index):
        gold = [p.sense for p in data[s].predicates]  # the file's frameset column, e.g. "kill.01"
        assert [vocabs.senses.entry(int(i)) for i in ids[row, : count[row]]] == gold


@pytest.mark.parametrize("kind", ["lisa", "deepatt", "selective"])
def test_every_kind_scores_each_predicate_over_the_training_rolesets(tiny, kind):
    _, vocabs, model, batch = _built(tiny, **{"model.kind": kind})
    assert isinstance(model.sense_head, SenseHead)
    outputs = model(batch, training=True)
    logits = outputs["sense_logits"].numpy()
    if model.layout == "sentence":
        assert logits.shape == tuple(batch["predicate_positions"].shape) + (len(vocabs.senses),)
    else:
        assert logits.shape == (batch["predicate_position"].shape[0], len(vocabs.senses))
    scores = model.predict_scores(batch, **({"gold_predicates": True} if model.layout == "sentence" else {}))
    decoded = model.decode_scores(scores, batch)
    # without a word-form lexicon: the head's best roleset over all, at every decoded predicate
    best = np.array(vocabs.senses.entries)[scores["sense_probs"].numpy().argmax(-1)]
    senses = decoded["senses"].numpy().astype(str)
    if model.layout == "sentence":
        flags = decoded["predicate_flags"].numpy().astype(bool)
        assert flags.any() and (senses[flags] == best[flags]).all() and (senses[~flags] == "").all()
    else:
        assert (senses == best).all()
    # the head's loss is part of the model's: without it (weight 0) the total is lower by it
    with_head = float(model.compute_loss(x=batch, y_pred=outputs))
    model.config.sense_loss_weight = 0.0
    try:
        without = float(model.compute_loss(x=batch, y_pred=outputs))
    finally:
        model.config.sense_loss_weight = 1.0
    ids = batch["sense_ids"] if "sense_ids" in batch else batch["sense_id"]
    mask = batch["predicate_mask"] if "predicate_mask" in batch else tf.ones_like(ids, tf.bool)
    head = float(sense_loss(ids, outputs["sense_logits"], mask, model.config.label_smoothing))
    assert head > 0 and with_head == pytest.approx(without + head, rel=1e-5)


def test_sense_loss_is_the_cross_entropy_of_the_known_rolesets():
    logits = np.array([[[2.0, 0.0, -1.0], [0.5, 0.5, 3.0], [9.0, 9.0, 9.0]]], np.float32)
    ids = np.array([[0, 2, -1]], np.int32)  # the third predicate's roleset training never saw
    mask = np.array([[True, True, True]])
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -(log_p[0, 0, 0] + log_p[0, 1, 2]) / 2
    assert float(sense_loss(ids, logits, mask)) == pytest.approx(expected, rel=1e-6)
    # a padded predicate adds nothing either
    assert float(sense_loss(ids, logits, np.array([[True, False, False]]))) == pytest.approx(-log_p[0, 0, 0], rel=1e-6)


def test_no_sense_column_no_head(tiny):
    _, vocabs, model, batch = _built(tiny, **{"model.kind": "deepatt", "model.sense_loss_weight": 0})
    assert len(vocabs.senses) > 0 and model.sense_head is None
    assert "sense_logits" not in model(batch, training=True)
    assert "senses" not in model.decode_scores(model.predict_scores(batch), batch)


def test_sense_head_config_round_trip():
    head = SenseHead(7, name="sense_head")
    head(tf.zeros([2, 3, 16]))
    again = SenseHead.from_config(head.get_config())
    again(tf.zeros([2, 3, 16]))
    assert again.num_senses == 7 and len(again.weights) == len(head.weights) == 2
    assert again.compute_output_shape((2, 3, 16)) == (2, 3, 7)
