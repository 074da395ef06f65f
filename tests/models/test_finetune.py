"""Fine-tuning the contextual encoder with the task (``model.contextual_trainable``): which weights
train, at which learning rates, that training runs the encoder in the step (no feature cache) and that
the fine-tuned encoder's weights are saved with the model's."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from lisa_tf.config import ConfigError, load_config, validate_config
from lisa_tf.models.contextual import ContextualWordFeatures
from lisa_tf.training.learning_rate_scales import with_learning_rate_scales
from tests.models.conftest import tiny_overrides
from tests.models.test_lisa import TINY_LISA


def test_a_scaled_variable_steps_by_its_share_of_the_learning_rate():
    """Two equal variables with equal gradients under Nadam: one at scale 0.25 moves a quarter as far
    (Adam-type steps do not shrink with the gradient, so scaling gradients would not do this), one at 0
    stays, the rest move at the full rate."""
    values = [keras.Variable(np.ones(3, np.float32), name=name) for name in ("full", "quarter", "still")]
    scales = {values[1].path: 0.25, values[2].path: 0.0}
    optimizer = with_learning_rate_scales(keras.optimizers.Nadam)(learning_rate=0.01, learning_rate_scales=scales)
    gradient = tf.constant([0.5, -2.0, 3.0])
    for _ in range(3):
        optimizer.apply([gradient] * 3, values)
    moved = [np.abs(v.numpy() - 1.0) for v in values]
    assert moved[0].min() > 0.005
    np.testing.assert_allclose(moved[1], moved[0] * 0.25, rtol=1e-4)
    assert not moved[2].any()
    restored = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(restored).__name__ == "ScaledNadam" and restored.learning_rate_scales == scales


def test_a_trainable_encoder_trains_its_blocks_at_decaying_rates_and_keeps_its_embeddings():
    frozen = ContextualWordFeatures("minilm")
    assert not frozen.trainable_variables
    tuned = ContextualWordFeatures("minilm", trainable=True, dropout=0.2)
    names = {v.path.split("/")[0] for v in tuned.trainable_variables}
    assert names == {f"transformer_layer_{k}" for k in range(6)}  # the word-piece embeddings stay frozen
    scales = tuned.learning_rate_scales(0.1, 0.5)
    assert set(scales) == {v.path for v in tuned.trainable_variables}
    by_block = {path.split("/")[0]: scale for path, scale in scales.items()}
    assert by_block == {f"transformer_layer_{k}": pytest.approx(0.1 * 0.5 ** (5 - k)) for k in range(6)}
    assert tuned.get_config()["dropout"] == 0.2 and tuned.bert.get_layer("embeddings_dropout").rate == 0.2
    with_embeddings = ContextualWordFeatures("minilm", trainable=True, train_embeddings=True)
    embedding_scales = {p: s for p, s in with_embeddings.learning_rate_scales(0.1, 0.5).items() if "embedding" in p}
    assert embedding_scales and list(embedding_scales.values()) == pytest.approx([0.1 * 0.5 ** 6] * len(embedding_scales))
    # dropout acts only while training a trainable encoder
    tokens = tf.constant([["The", "cat", "sat", "."]])
    np.testing.assert_allclose(tuned(tokens, training=False), tuned(tokens, training=False))
    assert not np.allclose(tuned(tokens, training=True), tuned(tokens, training=False))
    np.testing.assert_allclose(frozen(tokens, training=True), frozen(tokens, training=False))


@pytest.mark.slow(minutes=0.9)
def test_fine_tuning_trains_the_encoder_in_the_step_and_saves_it(tmp_path):
    from lisa_tf.models.runs import load_run
    from lisa_tf.training.loop import train

    overrides = tiny_overrides(**{**TINY_LISA, "model.contextual": "minilm", "model.contextual_trainable": "true",
                                  "train.max_steps": "3", "train.eval_every": "3",
                                  "train.encoder_learning_rate_scale": "0.5"})
    config = load_config(None, overrides)
    fresh = ContextualWordFeatures("minilm")
    train(config, tmp_path / "runs" / "lisa", verbose=0)
    assert not (tmp_path / "runs" / ".contextual-cache").exists()  # no feature cache: the encoder ran in the step
    model = load_run(tmp_path / "runs" / "lisa")
    encoder = model.backbone.encoder
    assert encoder.trainable
    tuned = {v.path: v.numpy() for v in encoder.bert.weights}
    original = {v.path: v.numpy() for v in fresh.bert.weights}
    changed = {path.split("/")[0] for path in tuned if not np.array_equal(tuned[path], original[path])}
    assert changed == {f"transformer_layer_{k}" for k in range(6)}, changed  # the embeddings kept their values


def test_fine_tuning_settings_are_checked():
    with pytest.raises(ConfigError, match="model.contextual_trainable fine-tunes the contextual encoder"):
        validate_config(load_config(None, tiny_overrides(**{**TINY_LISA, "model.contextual_trainable": "true"})))
    with pytest.raises(ConfigError, match="train.layer_decay must be at most 1"):
        validate_config(load_config(None, tiny_overrides(**{**TINY_LISA, "train.layer_decay": "1.5"})))
    with pytest.raises(ConfigError, match="model.contextual_dropout must be in"):
        validate_config(load_config(None, tiny_overrides(**{**TINY_LISA, "model.contextual_dropout": "1.0"})))


def test_fine_tuning_batches_are_bounded_by_word_pieces():
    """A fine-tuned encoder's memory grows with word pieces, not words: EWT train has one-word
    sentences of 76 pieces (rules of dashes) that a 2,500-token budget would batch 2,500 at a time.
    ``piece_lengths`` counts each sentence's encoder input exactly as the encoder builds it, and
    batches formed by it stay within the budget in pieces."""
    from data_pipeline.dataset import make_dataset
    from data_pipeline.splits import read_split
    from data_pipeline.vocab import Vocabularies
    from tests.conftest import DATA

    sentences = read_split(str(DATA / "propbank-ewt" / "train.gold_conll.gz"), "conll12")
    encoder = ContextualWordFeatures("minilm")
    lengths = encoder.piece_lengths([s.words for s in sentences])
    wordy = sorted(range(len(sentences)), key=lambda i: len(sentences[i]) - lengths[i])[:40]
    plain = [i for i in range(0, len(sentences), 97)][:60]
    picked = [sentences[i] for i in wordy + plain]
    assert max(lengths[i] - len(sentences[i]) for i in wordy) > 50
    picked_lengths = [lengths[i] for i in wordy + plain]
    budget = 300
    vocabs = Vocabularies.build(picked)

    def piece_slots(dataset):
        slots = []
        for batch in dataset:
            tokens = batch["tokens"]  # padded with ""
            assert batch["srl_tag_ids"].shape[-1] == tokens.shape[1] == batch["length"].numpy().max()
            token_ids, _, _ = encoder.word_pieces(tokens, tf.not_equal(tokens, ""))
            np.testing.assert_array_equal(  # the counted lengths are the encoder's own
                np.sort(tf.reduce_sum(tf.cast(token_ids != 0, tf.int32), axis=1).numpy()),
                np.sort([picked_lengths[i] for i in batch["sentence_index"].numpy()]))
            slots.append((token_ids.shape[0], token_ids.shape[0] * token_ids.shape[1]))
        return slots

    by_words, _ = make_dataset(picked, vocabs, token_budget=budget, shuffle=False)
    by_pieces, report = make_dataset(picked, vocabs, token_budget=budget, shuffle=False, sentence_lengths=picked_lengths)
    assert max(slots for _, slots in piece_slots(by_words)) > 3 * budget  # what ran out of memory
    assert all(slots <= budget or size == 1 for size, slots in piece_slots(by_pieces))
    assert report.over_budget_examples == 0
    with pytest.raises(ValueError, match="sentence_lengths has 3 entries for 100 sentences"):
        make_dataset(picked, vocabs, token_budget=budget, sentence_lengths=[5, 5, 5])
