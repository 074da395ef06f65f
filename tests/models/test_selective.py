"""Selective Connection SRL (Park et al. 2019) on real sentences: it learns, its switches add and
remove exactly the weights they name, the multi-channel loss combines every layer's loss, and
inference averages every layer's label distribution."""

import numpy as np
import pytest

from data_pipeline.dataset import make_dataset
from data_pipeline.vocab import Vocabularies
from lisa_tf.config import load_config
from lisa_tf.models import build_model
from lisa_tf.models.preprocessor import SrlPreprocessor
from lisa_tf.models.selective import SelectiveSRL
from data_pipeline.splits import read_split
from lisa_tf.evaluation.runs import evaluate_runs
from lisa_tf.training.loop import train
from tests.models.conftest import tiny_overrides

D, LAYERS = 64, 2  # the tiny config's hidden_size and num_layers


@pytest.fixture(scope="module")
def real():
    """The tiny config, vocabularies and a batch of the first 20 real EWT training sentences that
    holds sentences of different lengths (so some rows are padded)."""
    config = load_config(None, tiny_overrides(**{"model.kind": "selective"}))
    sentences = read_split(config.data.train, config.data.format, None, 20)
    vocabs = Vocabularies.build(sentences)
    dataset, _ = make_dataset(sentences, vocabs, layout="predicate", token_budget=1024, shuffle=False,
                              preprocess=SrlPreprocessor(vocabs.words.entries, "predicate"))
    padded = [b for b in dataset if len(set(b["length"].numpy().tolist())) > 1]
    assert padded, "no batch of the 20 sentences mixes lengths"
    return config, vocabs, padded[0]


def _model(real, **changes):
    config, vocabs, batch = real
    model_config = load_config(None, tiny_overrides(**{"model.kind": "selective", **changes})).model
    model = build_model(model_config, vocabs)
    model.build_from_batch(batch)
    return model


def _paths(model):
    return [v.path for v in model.weights]


def _softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(-1, keepdims=True)


def test_overfits_twenty_real_sentences(tmp_path, tiny):
    config = load_config(None, tiny(**{"model.kind": "selective", "train.max_steps": 400, "train.eval_every": 400}))
    summary = train(config, tmp_path / "run", verbose=0)
    assert summary["best_dev_f1"] >= 95.0, summary
    # reloading the best weights (S_0 included: it is a saved, non-trained weight) scores the same
    # (the dev F1 of training is scored with the gold predicates)
    metrics = evaluate_runs([str(tmp_path / "run")], config.data.train, limit=20, gold_predicates=True)
    assert abs(metrics["srl"]["f1"] - summary["best_dev_f1"]) < 1e-6


def test_ablation_switch_removes_exactly_the_selective_connection(real):
    full = _model(real)
    ablated = _model(real, **{"model.selective": "false"})
    assert any("selective_connection" in p for p in _paths(full))
    assert not any("selective_connection" in p or "initial_state" in p for p in _paths(ablated))
    # one shared cell (Eqns 9-12: W_z, U_z, W_g, U_g, W, U, d x d each, + 3 biases), one LN per layer, S_0
    cell = 3 * (2 * D * D + D)
    assert full.count_params() - ablated.count_params() == cell + LAYERS * 2 * D + D
    # S_0 is fixed, not trained
    (s0,) = [v for v in full.weights if "initial_state" in v.path]
    assert not s0.trainable and tuple(s0.shape) == (D,)
    # per-layer cells: one cell per layer instead of one
    config, vocabs, batch = real
    per_layer = SelectiveSRL(config.model, vocabs.words.entries, vocabs.srl.entries, vocabs.joint_pos_predicate.entries,
                            vocabs.pos.entries, sense_labels=vocabs.senses.entries, share_connection=False)
    per_layer.build_from_batch(batch)
    assert per_layer.count_params() - full.count_params() == (LAYERS - 1) * cell


def test_bilstm_switch_adds_exactly_the_lstm_encoder(real):
    plain = _model(real)
    with_lstm = _model(real, **{"model.bilstm_encoder": "true"})
    assert not any("lstm" in p for p in _paths(plain))
    assert any("forward" in p and "lstm" in p for p in _paths(with_lstm))
    assert any("backward" in p and "lstm" in p for p in _paths(with_lstm))
    # two LSTMs of width d (4 gates: input kernel, recurrent kernel, bias) + the LN after the residual
    lstm = 4 * (D * D + D * D + D)
    assert with_lstm.count_params() - plain.count_params() == 2 * lstm + 2 * D


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_multichannel_loss_combines_every_layers_loss(real, reduction):
    _, _, batch = real
    model = _model(real, **{"model.multichannel_loss": reduction, "model.sense_loss_weight": 0})  # SRL loss alone
    outputs = model(batch, training=False)
    logits = outputs["srl_layer_logits"].numpy()
    assert logits.shape[0] == LAYERS
    labels, mask = batch["srl_tag_ids"].numpy(), batch["token_mask"].numpy()
    per_layer = []
    for layer_logits in logits:  # cross-entropy over real tokens only, computed here in numpy
        log_p = np.log(_softmax(layer_logits.astype(np.float64)))
        picked = np.take_along_axis(log_p, labels[..., None], axis=-1)[..., 0]
        per_layer.append(-picked[mask].mean())
    assert abs(per_layer[0] - per_layer[1]) > 1e-3  # the layers really differ, so the test can tell
    expected = np.mean(per_layer) if reduction == "mean" else np.sum(per_layer)
    loss = float(model.compute_loss(x=batch, y_pred=outputs))
    assert loss == pytest.approx(expected, rel=1e-4)


def test_inference_averages_every_layers_distribution(real):
    _, _, batch = real
    model = _model(real)
    logits = model(batch, training=False)["srl_layer_logits"].numpy().astype(np.float64)
    probs = model.predict_scores(batch)["srl_probs"].numpy()
    mask = batch["token_mask"].numpy()
    expected = np.mean([_softmax(layer) for layer in logits], axis=0)
    np.testing.assert_allclose(probs[mask], expected[mask], atol=1e-5)
    assert not np.allclose(probs[mask], _softmax(logits[-1])[mask], atol=1e-3)  # not just the top layer
    np.testing.assert_allclose(probs[mask].sum(-1), 1.0, atol=1e-5)
    tags = model.decode_scores({"srl_probs": probs}, batch)["srl_tags"].numpy()
    np.testing.assert_array_equal(tags[mask], probs.argmax(-1)[mask])  # tiny config decodes by argmax


def test_padding_does_not_change_predictions(real):
    _, _, batch = real
    model = _model(real, **{"model.bilstm_encoder": "true"})
    probs = model.predict_scores(batch)["srl_probs"].numpy()
    lengths = batch["length"].numpy()
    b = int(np.argmin(lengths))
    n = int(lengths[b])
    assert n < batch["token_mask"].shape[1], "needs a padded example"
    alone = {k: v[b : b + 1, :n] if v.shape.rank == 2 else v[b : b + 1] for k, v in batch.items()}
    np.testing.assert_allclose(model.predict_scores(alone)["srl_probs"].numpy()[0], probs[b, :n], atol=1e-5)


def test_next_input_switch_changes_only_what_the_next_module_reads(real):
    config, vocabs, batch = real
    state = SelectiveSRL(config.model, vocabs.words.entries, vocabs.srl.entries, vocabs.joint_pos_predicate.entries,
                            vocabs.pos.entries, next_input="state")
    module = SelectiveSRL(config.model, vocabs.words.entries, vocabs.srl.entries, vocabs.joint_pos_predicate.entries,
                            vocabs.pos.entries, next_input="module")
    state.build_from_batch(batch)
    module.build_from_batch(batch)
    module.set_weights(state.get_weights())  # same architecture and weights, different wiring
    a = state(batch, training=False)["srl_layer_logits"].numpy()
    b = module(batch, training=False)["srl_layer_logits"].numpy()
    np.testing.assert_allclose(a[0], b[0], atol=1e-5)  # layer 1 reads the embeddings either way
    assert not np.allclose(a[1], b[1], atol=1e-3)  # layer 2 reads LN(X_1 + S_1) vs X_1
    with pytest.raises(ValueError, match="next_input"):
        SelectiveSRL(config.model, vocabs.words.entries, vocabs.srl.entries, vocabs.joint_pos_predicate.entries,
                            vocabs.pos.entries, next_input="both")
