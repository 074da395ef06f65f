"""SavedModel export: signatures, float32, core-TF-only graph, and exact agreement of a fresh
process (that never imports this project) with in-process prediction."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from data_pipeline.sentence import Span
from data_pipeline.spans import bio_to_spans
from data_pipeline.splits import read_split
from lisa_tf.labelling.batches import predict_sentences
from lisa_tf.models.runs import load_run, load_run_config

FRESH = r'''
import json, sys
import numpy as np
import tensorflow as tf
assert "lisa_tf" not in sys.modules and "tensorflow_text" not in sys.modules
export, requests = sys.argv[1], json.load(open(sys.argv[2]))
loaded = tf.saved_model.load(export)
fn = loaded.signatures["serving_default"]
out = fn(tokens=tf.constant(requests["tokens"]), predicate_index=tf.constant(requests["predicate_index"], tf.int32))
ops = set()
graph = fn.graph.as_graph_def()
ops.update(n.op for n in graph.node)
for f in graph.library.function:
    ops.update(n.op for n in f.node_def)
sentences = loaded.signatures["sentences"](sentences=tf.constant(requests["sentences"]),
                                           predicate_index=tf.constant(requests["predicate_index"], tf.int32))
print(json.dumps({
    "srl_tags": out["srl_tags"].numpy().astype(str).tolist(),
    "sentences_tags": sentences["srl_tags"].numpy().astype(str).tolist(),
    "dtypes": sorted({v.dtype.name for v in loaded.variables}),
    "non_core_ops": sorted(op for op in ops if not hasattr(tf.raw_ops, op)),
    "low_precision": [t for t in ("DT_BFLOAT16", "DT_HALF") if t in str(graph)],
}))
'''


@pytest.fixture(scope="module")
def exported(deepatt_export):
    return deepatt_export


def _requests(run):
    config = load_run_config(run)
    sentences = read_split(config.data.dev, config.data.format, None, 20)
    tokens, index, owners = [], [], []
    for s, sentence in enumerate(sentences):
        for k, predicate in enumerate(sentence.predicates):
            tokens.append(list(sentence.words))
            index.append(predicate.position)
            owners.append((s, k))
    width = max(map(len, tokens))
    padded = [t + [""] * (width - len(t)) for t in tokens]
    return sentences, {"tokens": padded, "predicate_index": index, "sentences": [" ".join(t) for t in tokens]}, owners


def test_saved_model_cli_lists_the_signatures(exported):
    cli = pathlib.Path(sys.executable).with_name("saved_model_cli")
    shown = subprocess.run([str(cli), "show", "--all", "--dir", str(exported)], capture_output=True, text=True, check=True).stdout
    for fragment in ("signature_def['serving_default']", "signature_def['sentences']", "inputs['tokens']",
                     "inputs['predicate_index']", "outputs['srl_tags']", "outputs['srl_scores']", "DT_STRING"):
        assert fragment in shown, fragment
    assert (exported / "assets" / "srl_labels.tsv").exists()


def test_fresh_process_reproduces_in_process_predictions(deepatt_run, exported, tmp_path):
    sentences, requests, owners = _requests(deepatt_run)
    (tmp_path / "requests.json").write_text(json.dumps(requests))
    (tmp_path / "fresh.py").write_text(FRESH)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "fresh.py", str(exported), "requests.json"], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["non_core_ops"] == []
    assert answer["dtypes"] == ["float32"] and answer["low_precision"] == []  # trained bf16, exported fp32
    assert answer["sentences_tags"] == answer["srl_tags"]  # in-graph whitespace split = given tokens

    predicted = predict_sentences(load_run(deepatt_run), sentences)
    for (s, k), tags in zip(owners, answer["srl_tags"]):
        n = len(sentences[s])
        assert all(t == "" for t in tags[n:])
        exported_spans = [x for x in bio_to_spans(tags[:n]) if x.label not in ("V", "C-V")]
        in_process = [x for x in predicted[s].predicates[k].arguments if x.label not in ("V", "C-V")]
        assert exported_spans == in_process, (s, k)


def test_the_export_tags_each_predicate_b_v_as_the_model_does(deepatt_run, exported):
    """Transitions that reward one ARGM-TMP over the whole sentence (+30 a step, more than any difference of two
    tags' log-probabilities, which are floored at log 1e-12 ≈ -27.6) make the search without the predicate's
    pin run that span across every predicate. The export, with the same transitions, and the in-process model
    both tag each predicate B-V instead, so no argument contains it, and agree span for span."""
    import tensorflow as tf

    from data_pipeline.dataset import inference_batches
    from lisa_tf.decoding.viterbi import bio_start_mask, bio_transition_mask

    sentences, requests, owners = _requests(deepatt_run)
    model = load_run(deepatt_run)
    labels = model.srl_labels
    tmp, inside = labels.index("B-ARGM-TMP"), labels.index("I-ARGM-TMP")
    transitions, start = bio_transition_mask(labels), bio_start_mask(labels)
    transitions[[tmp, inside], inside] += 30.0
    start[tmp] += 30.0
    model.set_transitions(transitions, start)
    covering = lambda spans, position: [  # noqa: E731
        x for x in spans if x.label not in ("V", "C-V") and x.start <= position <= x.end]
    # the same scores decoded without the pin (no predicate positions given)
    for batch in inference_batches(sentences, model.vocabularies(), model.layout):
        features = model.preprocessor(batch)
        unpinned = model.decode_tags(model.predict_scores(features)["srl_probs"], features["length"], constraints=True)
        for row, n, position in zip(unpinned.numpy(), features["length"].numpy(), features["predicate_position"].numpy()):
            assert covering(bio_to_spans([labels[i] for i in row[:n]]), position) == [Span(0, n - 1, "ARGM-TMP")]

    loaded = tf.saved_model.load(str(exported))
    weights = {v.name.split(":")[0].rsplit("/", 1)[-1]: v for v in loaded.variables}
    weights["transitions"].assign(transitions)
    weights["start_transitions"].assign(start)
    tags = loaded.signatures["serving_default"](tokens=tf.constant(requests["tokens"]), predicate_index=tf.constant(
        requests["predicate_index"], tf.int32))["srl_tags"].numpy().astype(str)
    in_process = predict_sentences(model, sentences)
    for (s, k), row in zip(owners, tags):
        n, position = len(sentences[s]), sentences[s].predicates[k].position
        assert row[position] == "B-V"
        exported_spans = [x for x in bio_to_spans(row[:n]) if x.label not in ("V", "C-V")]
        assert exported_spans == [x for x in in_process[s].predicates[k].arguments if x.label not in ("V", "C-V")]
        assert covering(exported_spans, position) == []


def test_rest_request_against_the_export(exported):
    import urllib.request

    from export.rest_server import make_server

    server = make_server("srl", exported.parent, port=0)
    server.start_in_thread()
    try:
        body = json.dumps({"instances": [{"tokens": ["I", "love", "this", "place", "."], "predicate_index": 1}]}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/v1/models/srl:predict", data=body)
        answer = json.loads(urllib.request.urlopen(request, timeout=60).read())
    finally:
        server.stop()
    (prediction,) = answer["predictions"]
    assert prediction["lengths"] == 5 and len(prediction["srl_tags"]) == 5
    assert all(0.0 < p <= 1.0 for p in prediction["srl_scores"])


TF_INTERNALS = ("node", "assertion failed", "{{", "[[", "Assert", "Traceback")


def test_out_of_range_predicate_index_is_a_400(exported):
    """``predicate_index: 9`` on a 4-token sentence used to return tags; the request is refused with one
    line naming the field and instance, before the model runs."""
    import urllib.error
    import urllib.request

    from export.rest_server import make_server

    server = make_server("srl", exported.parent, port=0)
    server.start_in_thread()
    try:
        for index in (9, 4, -1):
            body = json.dumps({"instances": [{"tokens": ["A", "cat", "sat", "."], "predicate_index": index}]}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{server.port}/v1/models/srl:predict", data=body)
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(request, timeout=60)
            assert info.value.code == 400
            message = json.loads(info.value.read())["error"]
            assert message == (f"predicate_index: instance 0 is {index}; expected a token index in 0..3 "
                               "(its sentence has 4 tokens)")
    finally:
        server.stop()


def test_the_exports_own_check_is_reported_as_one_line_naming_the_field(exported):
    """Run past the server's checks, the export's in-graph ``predicate_index`` check fails with a
    TensorFlow error full of graph internals; the server's message keeps only the field's line."""
    import tensorflow as tf

    from export.request_limits import graph_error_message

    function = tf.saved_model.load(str(exported)).signatures["serving_default"]
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        function(tokens=tf.constant([["A", "cat", "sat", "."]]), predicate_index=tf.constant([9], tf.int32))
    assert "assertion failed" in info.value.message  # what the server must not pass on
    message = graph_error_message("serving_default", info.value.message)
    assert message == "predicate_index: expected a token index in 0..length-1 of its sentence"
    assert not any(fragment in message for fragment in TF_INTERNALS)


def test_label_names_come_from_the_assets(deepatt_run, exported, tmp_path):
    """Renaming a label in the exported ``assets/srl_labels.tsv`` renames it in the served output: the
    asset is the export's id → name table, not a copy for reading."""
    import shutil

    import tensorflow as tf

    _, requests, _ = _requests(deepatt_run)
    inputs = {"tokens": tf.constant(requests["tokens"]),
              "predicate_index": tf.constant(requests["predicate_index"], tf.int32)}
    before = tf.saved_model.load(str(exported)).signatures["serving_default"](**inputs)["srl_tags"].numpy().astype(str)
    assert "B-V" in before
    copy = tmp_path / "renamed"
    shutil.copytree(exported, copy)
    asset = copy / "assets" / "srl_labels.tsv"
    rows = [line.split("\t") for line in asset.read_text().splitlines()]
    asset.write_text("".join(f"{'B-VERB' if name == 'B-V' else name}\t{i}\n" for name, i in rows))
    after = tf.saved_model.load(str(copy)).signatures["serving_default"](**inputs)["srl_tags"].numpy().astype(str)
    np.testing.assert_array_equal(after, np.where(before == "B-V", "B-VERB", before))
    for name in ("pos_tags.tsv", "dep_labels.tsv"):
        assert (exported / "assets" / name).exists()


def test_exports_with_a_predicate_identifier_find_predicates_themselves(deepatt_run, exported):
    """``find_predicates`` runs the identifier in-graph and then labels each predicate found exactly as
    ``serving_default`` labels it when given; ``text`` answers in the predictor's spans."""
    import tensorflow as tf

    from lisa_tf.labelling.batches import identify_predicates
    from tests.export.text_answers import text_signature_agrees_with_predictor

    config = load_run_config(deepatt_run)
    sentences = read_split(config.data.train, config.data.format, None, 12)
    loaded = tf.saved_model.load(str(exported))
    assert {"find_predicates", "text"} <= set(loaded.signatures)
    width = max(len(s) for s in sentences)
    tokens = tf.constant([list(s.words) + [""] * (width - len(s)) for s in sentences])
    out = {k: v.numpy() for k, v in loaded.signatures["find_predicates"](tokens=tokens).items()}
    found = identify_predicates(load_run(deepatt_run), sentences)
    assert sum(map(len, found)) >= len(sentences), "the tiny run should find predicates on its training sentences"
    given = loaded.signatures["serving_default"]
    for b, sentence in enumerate(sentences):
        n = len(sentence)
        positions = [int(p) for p in out["predicate_positions"][b] if p >= 0]
        assert positions == found[b]
        assert np.flatnonzero(out["predicate_flags"][b]).tolist() == found[b]
        for p, position in enumerate(positions):
            alone = given(tokens=tf.constant([list(sentence.words)]), predicate_index=tf.constant([position], tf.int32))
            assert out["srl_tags"][b, p, :n].tolist() == alone["srl_tags"].numpy()[0].tolist()
            np.testing.assert_allclose(out["srl_scores"][b, p, :n], alone["srl_scores"].numpy()[0], atol=1e-5)
    texts = [" ".join(s.words) for s in sentences] + ["The cat sat on the mat.", ""]
    assert text_signature_agrees_with_predictor(deepatt_run, exported, texts) > 10


def test_each_weight_is_stored_once(deepatt_run, exported):
    """The export's checkpoint holds the model's weights once (Keras' ExportArchive alone writes every
    weight twice, keras-team/keras#23553); only the dropout layers' seed states come on top."""
    import tensorflow as tf

    model = load_run(deepatt_run)
    reader = tf.train.load_checkpoint(str(exported / "variables" / "variables"))
    shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    stored = {k: int(np.prod(s)) for k, s in shapes.items() if k.endswith("VARIABLE_VALUE")}
    floats = sum(n for k, n in stored.items() if dtypes[k].is_floating)
    assert floats == model.count_params()
    assert all(dtypes[k] == tf.int64 and n == 2 for k, n in stored.items() if not dtypes[k].is_floating)


def test_writing_an_export_traces_each_endpoint_once(tmp_path):
    """Keras' archive traces every endpoint to list its variables and ``tf.saved_model.save`` traced each
    again under its save options; tracing is most of an export's time. A small layer's endpoint, whose
    Python body counts its traces, is traced once, and the export still answers."""
    import keras
    import tensorflow as tf

    from export.saved_model import _trace_endpoints_once

    layer = keras.layers.Dense(2, kernel_initializer="ones")
    layer.build((None, 3))
    traces = []

    def serve(x):
        traces.append(1)
        return {"y": layer(x)}

    archive = keras.export.ExportArchive()
    _trace_endpoints_once(archive)
    archive.track(layer)
    archive.add_endpoint("serving_default", serve, input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    archive.write_out(str(tmp_path / "1"), verbose=False)
    assert len(traces) == 1
    loaded = tf.saved_model.load(str(tmp_path / "1"))
    assert loaded.signatures["serving_default"](x=tf.ones([1, 3]))["y"].numpy().tolist() == [[3.0, 3.0]]
