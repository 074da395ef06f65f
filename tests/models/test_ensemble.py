"""Ensembles (``evaluate --run A B``): the models' softmax outputs are averaged, then decoded."""

from __future__ import annotations

import numpy as np
import pytest

from data_pipeline.dataset import make_dataset
from data_pipeline.splits import read_split
from lisa_tf.evaluation.runs import evaluate_runs
from lisa_tf.labelling.batches import decode_batch, predict_sentences
from lisa_tf.models.runs import load_run, load_run_config
from tests.models.conftest import EWT


@pytest.fixture(scope="module")
def pair(deepatt_pair):
    models = [load_run(run) for run in deepatt_pair]
    config = load_run_config(deepatt_pair[0])
    # held-out real sentences (EWT dev), where two briefly trained models disagree
    sentences = read_split(str(EWT / "dev.gold_conll.gz"), config.data.format, None, 30)
    return models, models[0].vocabularies(), sentences


def test_ensemble_decodes_the_mean_of_the_softmax_outputs(pair):
    models, vocabs, sentences = pair
    dataset, _ = make_dataset(sentences, vocabs, layout="predicate", token_budget=4096, shuffle=False,
                              unknown_labels="map", preprocess=models[0].preprocessor)
    disagreements = 0
    for batch in dataset:
        probs = [np.asarray(m.predict_scores(batch)["srl_probs"], dtype=np.float64) for m in models]
        expected = np.argmax((probs[0] + probs[1]) / 2, axis=-1)
        got = np.asarray(decode_batch(models, batch)["srl_tags"])
        mask = np.asarray(batch["length"])[:, None] > np.arange(got.shape[1])[None, :]
        np.testing.assert_array_equal(got[mask], expected[mask])
        singles = [np.argmax(p, axis=-1)[mask] for p in probs]
        disagreements += int(np.sum(singles[0] != singles[1]))
    assert disagreements > 0, "the two seeds should disagree somewhere, or this test shows nothing"


def test_ensemble_of_a_model_with_itself_is_the_model(pair):
    models, vocabs, sentences = pair
    single = predict_sentences(models[0], sentences, vocabs)
    doubled = predict_sentences([models[0], models[0]], sentences, vocabs)
    assert [s.predicates for s in single] == [s.predicates for s in doubled]


def test_evaluate_accepts_several_runs(deepatt_pair):
    data = load_run_config(deepatt_pair[0]).data
    metrics = evaluate_runs([str(r) for r in deepatt_pair], data.dev, limit=20)
    assert metrics["runs"] == [str(r) for r in deepatt_pair]
    assert metrics["srl"]["f1"] > 0
