"""The contextual feature cache on real EWT sentences: built once, reused, and equal to the
encoder run in-graph (features and the model's tags)."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.dataset import make_dataset
from data_pipeline.splits import read_split
from data_pipeline.vocab import Vocabularies
from lisa_tf.config import load_config
from lisa_tf.models import build_model
from lisa_tf.models.contextual import ContextualWordFeatures
from lisa_tf.models.feature_cache import FeatureCache
from tests.models.conftest import EWT, tiny_overrides
from tests.models.test_lisa import TINY_LISA


@pytest.fixture(scope="module")
def ewt():
    config = load_config(None, tiny_overrides(**{**TINY_LISA, "model.kind": "sa", "model.contextual": "minilm"}))
    return config, read_split(EWT / "dev.gold_conll.gz", "conll12", EWT / "dev.conllu.gz", 10)


@pytest.fixture(scope="module")
def encoder():
    return ContextualWordFeatures("minilm")


def test_built_once_then_reused_and_extended(ewt, encoder, tmp_path):
    _, sentences = ewt
    words = [s.words for s in sentences]
    lines = []
    cache = FeatureCache(tmp_path, "minilm")
    stats = cache.build(words[:8], encoder=encoder, log=lines.append)
    tokens = sum(len(w) for w in words[:8])
    assert stats["sentences"] == stats["computed"] == 8 and stats["tokens"] == tokens
    assert tokens * 7 * 384 * 2 <= stats["bytes"] < tokens * 7 * 384 * 2 + 8192  # float16, plus headers and index
    assert "8/8 sentences" in lines[-2] and "8 sentences" in lines[-1] and "MiB" in lines[-1]
    again = FeatureCache(tmp_path, "minilm")  # another run: reads the shards, computes nothing
    assert len(again) == 8 and again.build(words[:8], encoder=encoder, log=lines.append)["computed"] == 0
    assert again.build(words, encoder=encoder, log=lines.append)["computed"] == 2
    assert len(FeatureCache(tmp_path, "minilm")) == 10 and len(list(again.directory.glob("shard-*.npy"))) == 2
    assert len(FeatureCache(tmp_path, "minilm", pooling="mean")) == 0  # another key
    with pytest.raises(KeyError, match="not in the contextual feature cache"):
        again.features(["never", "seen"])


def test_cached_features_equal_the_in_graph_encoder(ewt, encoder, tmp_path):
    _, sentences = ewt
    words = [s.words for s in sentences]
    cache = FeatureCache(tmp_path, "minilm")
    cache.build(words, encoder=encoder, log=lambda line: None)
    width = max(map(len, words))
    tokens = tf.constant([w + [""] * (width - len(w)) for w in words])
    in_graph = np.asarray(encoder(tokens))
    cached = cache.batch(words, width=width)
    assert cached.dtype == np.float16 and cached.shape == in_graph.shape
    np.testing.assert_allclose(cached.astype(np.float32), in_graph, rtol=1e-3, atol=2e-3)


def test_a_model_tags_the_same_from_the_cache_and_from_tokens(ewt, encoder, tmp_path):
    config, sentences = ewt
    vocabs = Vocabularies.build(sentences)
    keras.utils.set_random_seed(7)
    model = build_model(config.model, vocabs)
    cache = FeatureCache(tmp_path, "minilm")
    cache.build([s.words for s in sentences], encoder=encoder, log=lambda line: None)
    dataset, _ = make_dataset(sentences, vocabs, layout=model.layout, token_budget=4096, shuffle=False,
                              preprocess=model.preprocessor)
    batch = next(iter(dataset))
    model.build_from_batch(batch)
    cached_batch = next(iter(dataset.map(cache.attach)))
    assert cached_batch["contextual_features"].shape[:2] == batch["tokens"].shape
    from_tokens = model.predict_scores(batch)
    from_cache = model.predict_scores(cached_batch)
    for name in from_tokens:
        np.testing.assert_allclose(np.asarray(from_cache[name]), np.asarray(from_tokens[name]), atol=2e-3)
    tags = model.decode_scores(from_tokens, batch)
    cached_tags = model.decode_scores(from_cache, cached_batch)
    for name in tags:
        np.testing.assert_array_equal(np.asarray(cached_tags[name]), np.asarray(tags[name]))
