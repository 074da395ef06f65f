"""LISA export: the three signatures, and ``with_parse`` equals ``evaluate --parse`` (in-process
prediction with the same parse injected) on the same real sentences."""

import pathlib
import subprocess
import sys

import pytest
import tensorflow as tf

from data_pipeline.spans import bio_to_spans
from data_pipeline.splits import read_split
from lisa_tf.labelling.batches import predict_sentences
from lisa_tf.models.runs import load_run, load_run_config
from tests.export.text_answers import text_signature_agrees_with_predictor


def _padded(sentences):
    width = max(len(s) for s in sentences)
    tokens = [list(s.words) + [""] * (width - len(s)) for s in sentences]
    heads = [list(s.heads) + [-1] * (width - len(s)) for s in sentences]
    return tf.constant(tokens), tf.constant(heads, tf.int32)


def _spans_by_predicate(out, b, n):
    result = {}
    for p, position in enumerate(out["predicate_positions"][b]):
        if position >= 0:
            tags = [t.decode() for t in out["srl_tags"][b, p, :n]]
            result[int(position)] = [s for s in bio_to_spans(tags) if s.label not in ("V", "C-V")]
    return result


def test_signatures(lisa_export):
    _, export = lisa_export
    cli = pathlib.Path(sys.executable).with_name("saved_model_cli")
    shown = subprocess.run([str(cli), "show", "--all", "--dir", str(export)], capture_output=True, text=True, check=True).stdout
    for fragment in ("signature_def['serving_default']", "signature_def['with_parse']", "signature_def['sentences']",
                     "signature_def['text']", "outputs['argument_roles']", "outputs['argument_starts']",
                     "inputs['parse_heads']", "outputs['heads']", "outputs['pos']", "outputs['dep_labels']",
                     "outputs['predicate_flags']", "outputs['predicate_positions']", "outputs['srl_tags']"):
        assert fragment in shown, fragment


@pytest.mark.parametrize("inject", [True, False])
def test_export_equals_in_process_prediction(lisa_export, inject):
    run, export = lisa_export
    config = load_run_config(run)
    sentences = read_split(config.data.train, config.data.format, config.data.parse_train, 20)
    expected = predict_sentences(load_run(run), sentences, inject_parse=inject, gold_predicates=False)
    loaded = tf.saved_model.load(str(export))
    tokens, heads = _padded(sentences)
    if inject:
        out = loaded.signatures["with_parse"](tokens=tokens, parse_heads=heads)
    else:
        out = loaded.signatures["serving_default"](tokens=tokens)
    out = {k: v.numpy() for k, v in out.items()}
    for b, (sentence, predicted) in enumerate(zip(sentences, expected)):
        n = len(sentence)
        got = _spans_by_predicate(out, b, n)
        want = {p.position: [s for s in p.arguments if s.label not in ("V", "C-V")] for p in predicted.predicates}
        assert got == want, b
        assert [t.decode() for t in out["pos"][b, :n]] == predicted.pos
        assert list(out["heads"][b, :n]) == predicted.heads
        if inject:
            assert list(out["heads"][b, :n]) == sentence.heads  # the injected parse is the parse


def test_text_signature_answers_in_the_predictors_spans(lisa_export):
    """Raw sentences and paragraphs through the export's ``text`` signature (in-graph sentence splitter,
    tokeniser and BIO → spans) give the sentences, tokens, offsets and argument spans of
    ``lisa_tf.load(run).predict`` on the same text."""
    run, export = lisa_export
    config = load_run_config(run)
    texts = [" ".join(s.words) for s in read_split(config.data.train, config.data.format, None, 12)]
    texts += ["The cat sat on the mat.", "Mr. Smith didn't agree with them, did he?",
              "It rained. He said it would stop. They left early!\n\nThe end came", ""]
    assert text_signature_agrees_with_predictor(run, export, texts) > 10, (
        "the tiny run should label arguments, or this test shows nothing")


def test_parse_heads_outside_the_sentence_are_refused(lisa_export):
    _, export = lisa_export
    with_parse = tf.saved_model.load(str(export)).signatures["with_parse"]
    tokens = tf.constant([["A", "cat", "sat", "."]])
    ok = with_parse(tokens=tokens, parse_heads=tf.constant([[2, 3, 0, 3]], tf.int32))
    assert ok["heads"].numpy().tolist() == [[2, 3, 0, 3]]
    for heads in ([2, 9, 0, 3], [2, -5, 0, 3]):
        with pytest.raises(tf.errors.InvalidArgumentError, match="parse_heads: expected CoNLL-U heads in 0..length"):
            with_parse(tokens=tokens, parse_heads=tf.constant([heads], tf.int32))



def _post(server, body: dict) -> tuple:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{server.url}/v1/models/srl:predict", data=json.dumps(body).encode())
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def lisa_server(lisa_export):
    from export import rest_server

    _, export = lisa_export
    server = rest_server.make_server("srl", export.parent, port=0, warn=lambda m: None)
    server.start_in_thread()
    yield server
    server.stop()


def test_rest_refuses_bad_parse_heads_naming_the_field(lisa_server):
    """Heads of -5 or -1 inside the sentence used to become the root silently, 9 a raw graph error:
    each is a 400 naming ``parse_heads``, the instance and the token, with no TensorFlow internals."""
    tokens = ["A", "cat", "sat", "."]
    assert _post(lisa_server, {"signature_name": "with_parse",
                               "instances": [{"tokens": tokens, "parse_heads": [2, 3, 0, 3]}]})[0] == 200
    for heads, token in (([2, 9, 0, 3], 1), ([2, -5, 0, 3], 1), ([2, 3, -1, 3], 2)):
        status, answer = _post(lisa_server, {"signature_name": "with_parse",
                                             "instances": [{"tokens": tokens, "parse_heads": heads}]})
        assert status == 400
        assert answer["error"] == (f"parse_heads: instance 0 has head {heads[token]} at token {token} of its 4 tokens; "
                                   "expected 0..4 (0 = root) on every token and -1 only on padding")


def test_rest_refuses_an_empty_token_inside_a_sentence(lisa_server):
    """An empty token used to be read as padding, shortening the sentence silently."""
    status, answer = _post(lisa_server, {"instances": [["A", "cat", "sat", "."], ["A", "", "sat", "."]]})
    assert status == 400
    assert answer["error"].startswith("tokens: instance 1 has an empty token at index 1 before non-empty tokens")


def test_rest_sentence_limit_defaults_to_the_longest_training_sentence(lisa_export, lisa_server):
    run, _ = lisa_export
    config = load_run_config(run)
    sentences = read_split(config.data.train, config.data.format, None, config.data.max_train_sentences)
    longest = max(len(s) for s in sentences)  # what the tiny run was trained on
    assert longest < config.train.batch_tokens
    assert _post(lisa_server, {"instances": [["word"] * longest]})[0] == 200
    status, answer = _post(lisa_server, {"instances": [["word"] * (longest + 1)]})
    assert status == 400
    assert answer["error"] == (f"tokens per sentence ('tokens' is {longest + 1} tokens wide): {longest + 1} is over the "
                               f"limit of {longest} (--max_tokens_per_sentence)")


def test_the_exports_parse_check_is_reported_as_one_line(lisa_export):
    from export.request_limits import graph_error_message

    _, export = lisa_export
    with_parse = tf.saved_model.load(str(export)).signatures["with_parse"]
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        with_parse(tokens=tf.constant([["A", "cat", "sat", "."]]), parse_heads=tf.constant([[2, 9, 0, 3]], tf.int32))
    message = graph_error_message("with_parse", info.value.message)
    assert message == "parse_heads: expected CoNLL-U heads in 0..length (0 = root) on every token, -1 only on padding"
    assert not any(fragment in message for fragment in ("node", "assertion failed", "{{", "[[", "Assert"))


def test_oversize_requests_are_refused_before_the_model_and_memory_stays_bounded(lisa_server):
    """A 5,000-token sentence (the earlier server grew by 13.6 GB and hit a TF OOM), 200 sentences of 10
    tokens (each within the sentence limit, together over the run's 1,024-token budget), and a 50 MB body
    of ~10 million tokens (``std::bad_alloc``): 400, 400 and 413. The resident memory of the test process
    (server included), sampled every 10 ms while they are answered, never grows by 1 GB over what it was
    before (a 2,000-token sentence alone took the earlier server 5.45 GB)."""
    import json
    import os
    import threading
    import urllib.error
    import urllib.request

    from benchmarks.serving_soak import rss_mb

    before, peak, done = rss_mb(os.getpid()), [0.0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb(os.getpid()))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        status, answer = _post(lisa_server, {"instances": [["word"] * 5000]})
        assert status == 400 and "(--max_tokens_per_sentence)" in answer["error"]
        status, answer = _post(lisa_server, {"instances": [["word"] * 10] * 200})
        assert status == 400 and "(--max_tokens_per_request)" in answer["error"]
        body = b'{"instances": [[' + b",".join([b'"w"'] * 10_000_000) + b"]]}"
        assert len(body) > 40_000_000
        request = urllib.request.Request(f"{lisa_server.url}/v1/models/srl:predict", data=body)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=60)
        assert info.value.code == 413 and "(--max_request_bytes)" in json.loads(info.value.read())["error"]
    finally:
        done.set()
        sampler.join()
    assert peak[0] - before < 1024, (before, peak[0])


def test_the_signatures_share_one_graph_of_the_model(lisa_export, tmp_path):
    """``serving_default``, ``sentences``, ``text`` and ``with_parse`` call one function that runs the model
    (the parse injected or not as an in-graph flag says), so it is traced once per tracing context: an
    export traced the model in every signature, twice (Keras' archive, then the save), and later in two."""
    from export.saved_model import LabelNames, serving_functions

    run, _ = lisa_export
    model = load_run(run)
    calls = []
    scores = model.predict_scores
    model.predict_scores = lambda *args, **kwargs: calls.append(1) or scores(*args, **kwargs)
    for function, signature in serving_functions(model, LabelNames(model, tmp_path)).values():
        tf.function(function, input_signature=signature, autograph=False).get_concrete_function()
    assert len(calls) == 1  # one function for all four; earlier graphs ran it in two, then in all four
