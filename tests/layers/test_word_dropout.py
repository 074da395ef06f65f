"""Tests of lisa_tf.layers.word_dropout: real word ids become <unk> in training, padding never does."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.vocab import OOV_ID, PAD_ID
from lisa_tf.layers.dropout import LEVELS, drop_threshold
from lisa_tf.layers.word_dropout import WordDropout
from tests.layers.conftest import roundtrip


def batch_of_ids(rows=1000, time=500, vocabulary=10_000, seed=0):
    """Word ids ``[rows, time]`` below ``vocabulary`` (never <unk>), each row padded after a random length."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(2, vocabulary, size=(rows, time)).astype(np.int32)
    lengths = rng.integers(1, time + 1, size=rows)
    ids[np.arange(time)[None, :] >= lengths[:, None]] = PAD_ID
    return ids


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.3])
def test_replaces_the_rates_fraction_of_real_ids_and_no_padding(rate):
    ids = batch_of_ids()
    out = np.asarray(WordDropout(rate, seed=3)(ids, training=True))
    real = ids != PAD_ID
    replaced = out != ids
    assert (out[replaced] == OOV_ID).all()  # an id is kept or becomes <unk>, nothing else
    assert (out[~real] == PAD_ID).all() and not replaced[~real].any()  # padding untouched
    p = drop_threshold(rate) / LEVELS
    sigma = np.sqrt(p * (1 - p) / real.sum())
    assert abs(replaced[real].mean() - p) < 5 * sigma


def test_identity_at_inference_and_at_rate_zero():
    ids = batch_of_ids(8, 16)
    layer = WordDropout(0.5, seed=1)
    np.testing.assert_array_equal(layer(ids, training=False), ids)
    np.testing.assert_array_equal(layer(ids), ids)
    zero = WordDropout(0.0)
    np.testing.assert_array_equal(zero(ids, training=True), ids)
    assert zero.seed_generator is None and not zero.variables  # nothing drawn, no state


def test_other_ids_dtypes_and_traced_shapes():
    layer = WordDropout(0.5, unknown_id=7, padding_id=3, seed=2)
    ids = np.full((64, 32), 9, np.int64)
    ids[:, 20:] = 3
    out = np.asarray(layer(ids, training=True))
    assert out.dtype == np.int64
    assert set(np.unique(out[:, :20])) == {7, 9} and (out[:, 20:] == 3).all()
    traced = tf.function(lambda x: layer(x, training=True),
                         input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
    out = np.asarray(traced(tf.constant(ids[:5, :25], tf.int32)))
    assert out.shape == (5, 25) and (out[:, 20:] == 3).all()
    with pytest.raises(ValueError, match="must differ"):
        WordDropout(0.1, unknown_id=0, padding_id=0)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_refuses_a_rate_outside_0_1(rate):
    with pytest.raises(ValueError, match=r"word dropout rate must be in \[0, 1\)"):
        WordDropout(rate)


def test_seeding():
    ids = batch_of_ids(64, 64)
    first, second = WordDropout(0.3, seed=11), WordDropout(0.3, seed=11)
    a1, a2 = np.asarray(first(ids, training=True)), np.asarray(first(ids, training=True))
    b1 = np.asarray(second(ids, training=True))
    assert not np.array_equal(a1, a2)  # the seed generator advances on every call
    np.testing.assert_array_equal(a1, b1)  # the same seed gives the same replacements
    assert [v.name for v in first.variables] == ["seed_generator_state"]  # what training checkpoints restore


def test_ids_pass_mixed_precision_unchanged(mixed_policy):
    layer = WordDropout(0.2, seed=1)
    ids = batch_of_ids(4, 10)
    assert np.asarray(layer(ids, training=True)).dtype == np.int32
    np.testing.assert_array_equal(layer(ids), ids)


def test_serialisation_roundtrip():
    layer = WordDropout(0.15, unknown_id=4, padding_id=2, seed=5, name="unknown_words")
    ids = batch_of_ids(3, 6)
    clone = roundtrip(layer, ids)
    assert type(clone) is WordDropout
    assert (clone.rate, clone.unknown_id, clone.padding_id, clone.seed) == (0.15, 4, 2, 5)
    np.testing.assert_array_equal(clone(ids, training=True), WordDropout(0.15, 4, 2, seed=5)(ids, training=True))


def test_the_backbone_has_it_only_at_a_positive_rate():
    from lisa_tf.models.backbone import SrlBackbone

    sizes = dict(embedding_size=8, hidden_size=16, num_layers=1, num_heads=2, filter_size=32, residual_dropout=0.0)
    ids = tf.constant([[5, 7, 9, 0]])
    plain = SrlBackbone(50, **sizes)
    dropping = SrlBackbone(50, word_dropout=0.1, **sizes)
    assert plain.unknown_words is None and type(dropping.unknown_words) is WordDropout
    assert dropping.unknown_words.rate == 0.1
    for backbone in (plain, dropping):
        backbone(ids, tf.constant([[0, 1, 0, 0]]))
    assert len(plain.weights) == len(dropping.weights)  # no weight added: weight files fit either
    # a saved backbone config without the key (the default rate) builds the backbone without the layer
    config = plain.get_config()
    assert config.pop("word_dropout") == 0.0
    assert SrlBackbone.from_config(config).unknown_words is None
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(dropping))
    assert again.get_config() == dropping.get_config() and again.unknown_words.rate == 0.1
    # the <unk> row gets a gradient in training only: there no id of the batch is <unk>
    x = tf.constant(batch_of_ids(32, 20, vocabulary=50))
    for training, reached in ((False, False), (True, True)):
        with tf.GradientTape() as tape:
            out = dropping.embed(x, tf.zeros_like(x), training=training)
        gradient = tf.convert_to_tensor(tape.gradient(out, dropping.words.embeddings))
        assert (float(tf.norm(gradient[OOV_ID])) > 0) is reached
