"""A model with contextual word features exports: the SavedModel runs the frozen encoder in-graph
(TF Text's word-piece ops) and answers as the model does in-process, on real EWT sentences."""

from __future__ import annotations

import os
import subprocess
import sys

import keras
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from data_pipeline.splits import read_split
from data_pipeline.vocab import Vocabularies
from export.model_versions import TF_TEXT_OPS, _word_piece_counter
from export.saved_model import export_model
from lisa_tf.config import load_config
from lisa_tf.labelling.batches import predict_sentences
from lisa_tf.models import build_model
from lisa_tf.models.contextual import encoders_in
from tests.conftest import ROOT
from tests.models.conftest import EWT, tiny_overrides
from tests.models.test_lisa import TINY_LISA


def _ops(export) -> set:
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((export / "saved_model.pb").read_bytes())
    graph = saved.meta_graphs[0].graph_def
    return {n.op for n in graph.node} | {n.op for f in graph.library.function for n in f.node_def}


@pytest.mark.slow(minutes=1.0)
def test_export_runs_the_encoder_in_graph_and_equals_in_process_prediction(tmp_path):
    config = load_config(None, tiny_overrides(**{**TINY_LISA, "model.kind": "sa", "model.contextual": "minilm"}))
    sentences = read_split(EWT / "dev.gold_conll.gz", "conll12", EWT / "dev.conllu.gz", 6)
    keras.utils.set_random_seed(11)
    model = build_model(config.model, Vocabularies.build(sentences))
    model.build_from_batch()
    export = export_model(model, tmp_path / "srl" / "1")
    assert TF_TEXT_OPS <= _ops(export)  # keras-hub's BERT tokenizer: the server imports tensorflow_text for them
    expected = predict_sentences(model, sentences, gold_predicates=False)
    width = max(len(s) for s in sentences)
    tokens = tf.constant([list(s.words) + [""] * (width - len(s)) for s in sentences])
    out = {k: v.numpy() for k, v in tf.saved_model.load(str(export)).signatures["serving_default"](tokens=tokens).items()}
    for b, (sentence, predicted) in enumerate(zip(sentences, expected)):
        n = len(sentence)
        assert [t.decode() for t in out["pos"][b, :n]] == predicted.pos
        assert sorted(int(p) for p in out["predicate_positions"][b] if p >= 0) == sorted(p.position for p in predicted.predicates)
    # The servers' loader, in a process that has not imported tensorflow_text (nor keras-hub) before; it
    # counts a request's word pieces as the model's encoder makes them, with the encoder's function the
    # export carries: keras-hub is never imported.
    [encoder] = encoders_in(model)
    words = [list(s.words) for s in sentences] + [["x." * 70] * 3, ["café", "naïve", "日本語"]]
    fresh = ("import sys; from export.model_versions import load_version; "
             f"assert 'tensorflow_text' not in sys.modules; loaded = load_version(1, {str(export)!r}); "
             "print(sorted(loaded.signatures)); print('keras_hub' in sys.modules); "
             f"print(loaded.word_pieces.sentence_lengths({words!r}))")
    done = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "serving_default" in done.stdout
    assert done.stdout.splitlines()[-2:] == ["False", str(encoder.piece_lengths(words))]
    # An export without that function (written before exports carried it) counts with a tokenizer of its
    # assets/word_pieces.json, alike.
    assert _word_piece_counter(export, object()).sentence_lengths(words) == encoder.piece_lengths(words)
