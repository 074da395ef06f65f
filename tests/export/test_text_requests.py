"""Raw-text requests are bounded before they are split (:func:`export.request_limits.check_raw_text`), and
the in-graph split copies each sentence's and token's own characters only
(:func:`data_pipeline.tokenizer.substrings_tf`).

The sentence splitter is replaced by a function that fails the test when called, so each refusal is
shown to come before the split it saves: an 8 MB ``text`` of two million sentences, the same size of
256 sentences padded with whitespace, and 1 MB of one sentence each cost seconds to split (and the
in-graph split copied a padded text once per sentence). Their time and memory are measured by
``benchmarks/oversize_requests.py``.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from data_pipeline.input_limits import MAX_WORD_CHARACTERS, TrainingSizes
from export.request_limits import LimitExceeded, RequestLimits, check_request
from export.serving_codec import BadRequest, InputSpec, Signature

MAX_BODY = 8 * 1024 * 1024
#: The shipped models' limits: 2,500 tokens per request, 159 per sentence.
SHIPPED = RequestLimits().resolve(TrainingSizes(2500, 159))


def _signature(name: str) -> Signature:
    return Signature(name, {name: InputSpec(name, "DT_STRING", (None,))}, [], "", None)


def _strings(*values: str) -> np.ndarray:
    return np.array([v.encode() for v in values], dtype=object)


@pytest.fixture
def no_split(monkeypatch):
    monkeypatch.setattr("export.request_limits.tokenized_sentences",
                        lambda text: pytest.fail("the text was split into sentences before it was refused"))


OVERSIZE = {
    # 2,097,000 sentences in 8.4 MB, under the body limit
    "sentences": ("Go. " * 2_097_000, "characters per request ('text' holds 8388000 characters, at most 64 per token "
                                      "of --max_tokens_per_request 2500): 8388000 is over the limit of 160000 "
                                      "(--max_tokens_per_request)"),
    # 256 sentences (inside the sentence limit), each padded with 32,000 spaces
    "padded": (("Hello there." + " " * 32_000) * 256, "characters per request ('text' holds 8195072 characters"),
    "one_sentence": ("a " * 500_000, "characters per request ('text' holds 1000000 characters"),
    # inside the character limit, over the tokens: counted up to the limit only
    "words": ("Go. " * 20_000, "tokens per request ('text' holds more than 2500 words and punctuation marks): over "
                               "the limit of 2500 (--max_tokens_per_request)"),
}


@pytest.mark.parametrize("case", sorted(OVERSIZE))
def test_an_oversize_text_is_refused_before_it_is_split(no_split, case):
    text, message = OVERSIZE[case]
    assert len(text) < MAX_BODY
    with pytest.raises(LimitExceeded) as refused:
        check_request({"text": _strings(text)}, _signature("text"), SHIPPED)
    assert str(refused.value).startswith(message)


def test_the_bounds_count_the_whole_request_and_every_raw_text_input(no_split):
    with pytest.raises(LimitExceeded, match=r"^tokens per request \('text' holds more than 2500"):
        check_request({"text": _strings(*["Go. " * 100] * 13)}, _signature("text"), SHIPPED)  # 13 x 200
    with pytest.raises(LimitExceeded, match=r"^characters per request \('sentences' holds 200000 characters"):
        check_request({"sentences": _strings(*[" " * 1000] * 200)}, _signature("sentences"), SHIPPED)


def test_a_text_inside_the_bounds_is_still_checked_sentence_by_sentence():
    # the tokeniser's own whitespace (a zero-width space, its separator) is no word or mark
    check_request({"text": _strings("\u200b\x01 " * 3000)}, _signature("text"), SHIPPED)
    sentence = " ".join(["word"] * 24) + "."
    check_request({"text": _strings(" ".join([sentence] * 100))}, _signature("text"), SHIPPED)  # 2,500 exactly
    with pytest.raises(LimitExceeded, match=r"sentences per request \('text' splits into 257\)"):
        check_request({"text": _strings("Hi. " * 257)}, _signature("text"), RequestLimits().resolve(TrainingSizes(8192, 159)))


def test_a_text_that_is_not_utf8_is_refused_naming_it():
    with pytest.raises(BadRequest) as refused:
        check_request({"text": np.array([b"fine", b"caf\xe9"], dtype=object)}, _signature("text"), SHIPPED)
    assert str(refused.value).startswith("text: instance 1 is not UTF-8 text (byte 3: ")


def test_the_in_graph_split_cuts_pieces_without_copying_their_whole_text():
    """``tf.strings.substr`` of ``tf.gather(texts, rows)`` copies the whole text once per sentence (and
    per token of a paragraph): 256 sentences padded to 8 MB were 2 GB. No string gather may feed a
    substring in the traced split and tokeniser."""
    import tensorflow as tf

    from data_pipeline.tokenizer import sentences_tf

    split = tf.function(sentences_tf, input_signature=[tf.TensorSpec([None], tf.string)]).get_concrete_function()
    copies = [op.name for op in split.graph.get_operations() if op.type == "Substr"  # the tokeniser's are inside
              and op.inputs[0].op.type in ("GatherV2", "Gather") and op.inputs[0].dtype == tf.string]
    assert copies == []
    sentences, _, starts, ends = split(tf.constant(["Hi  there.\u00e9 Go.", "", "Ok."]))
    assert sentences.numpy().tolist() == ["Hi  there.\u00e9 Go.".encode(), b"Ok."]
    assert starts.numpy().tolist() == [0, 0] and ends.numpy().tolist() == [15, 3]


@pytest.fixture(scope="module")
def lisa_servers(lisa_export, tmp_path_factory):
    """The tiny LISA export (it has a ``text`` signature) served over REST (in-process) and gRPC."""
    from export.grpc_server import GrpcServer
    from export.model_versions import VersionManager
    from export.rest_server import PredictionService

    base = tmp_path_factory.mktemp("text_limits") / "srl"
    shutil.copytree(lisa_export[1], base / "1")
    versions = VersionManager(base, 1, 0.0, print).start()
    service = PredictionService("srl", versions)
    server = GrpcServer(service, port=0).start()
    yield service, server
    server.stop()
    versions.stop()


def test_rest_and_grpc_refuse_an_8_mb_text_before_splitting_it_and_still_answer(lisa_servers, no_split, monkeypatch):
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    service, server = lisa_servers
    limit = service.limits_for(service.versions.available()[1]).max_tokens_per_request * 64
    text = "Go. " * 2_097_000
    body = json.dumps({"signature_name": "text", "instances": [text]}).encode()
    assert len(body) < MAX_BODY
    with pytest.raises(LimitExceeded) as refused:
        service.predict("srl", None, body)
    assert str(refused.value) == (f"characters per request ('text' holds 8388000 characters, at most 64 per token of "
                                  f"--max_tokens_per_request {limit // 64}): 8388000 is over the limit of {limit} "
                                  "(--max_tokens_per_request)")
    request = predict_pb2.PredictRequest()
    request.model_spec.name, request.model_spec.signature_name = "srl", "text"
    request.inputs["text"].CopyFrom(tf.make_tensor_proto(np.array([text.encode()], dtype=object)))
    with grpc.insecure_channel(server.target) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as failed:
            stub.Predict(request, timeout=60)
        assert failed.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert failed.value.details() == str(refused.value)
    monkeypatch.undo()  # a good text is split, and answered
    good = service.predict("srl", None, json.dumps({"signature_name": "text", "instances": ["The cat sat."]}).encode())
    assert good["predictions"][0]["sentence_ends"] == [12]


def test_oversize_requests_benchmark_sends_text_bodies(lisa_export, tmp_path):
    """``benchmarks/oversize_requests.py`` on a model with a ``text`` signature, at small sizes: every
    ``text`` body over the limits is refused over REST and gRPC, and the good request sent meanwhile is
    answered (the timings and memory are the benchmark's to report, not asserted here)."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    base = tmp_path / "srl"
    shutil.copytree(lisa_export[1], base / "1")
    out = tmp_path / "oversize.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/oversize_requests.py", str(base), "--instances", "2000", "--declared", "100",
         "--text_bytes", "200000", "--inside_bytes", "60000", "--inside_tokens", "20x20",
         "--long_tokens", "1x4:2000", "--window_tokens", "1x4:8", "--inside_long_tokens", "1x4:8",
         "--out", str(out)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row["request"]: row for row in json.loads(out.read_text())["rows"]}
    text = {name: row for name, row in rows.items() if "_text_" in name}
    assert {name: row["status"] for name, row in text.items()} == {
        "rest_text_sentences": 400, "grpc_text_sentences": "RESOURCE_EXHAUSTED", "rest_text_padded": 400,
        "grpc_text_padded": "RESOURCE_EXHAUSTED", "rest_text_one_sentence": 400, "rest_text_padded_inside": 200,
        "rest_text_tokens_inside": 200, "rest_text_good": 200}
    assert all("per request ('text' holds" in row["answer"] for row in text.values() if row["status"] != 200)
    assert all(row["good_status"] == 200 and row["good_seconds"] > 0 for name, row in text.items()
               if name != "rest_text_good")
    assert "good meanwhile: 200" in done.stdout


def test_rest_text_answers_carry_the_senses_and_meanings_predict_gives(lisa_export, lisa_servers):
    """A ``text`` request over REST answers, for each frame, the roleset, its source and name, and per
    argument the description, function tag and VerbNet role that ``lisa_tf.load(run).predict`` gives for
    the same text (the export's in-graph tables against the frame index the predictor reads)."""
    import lisa_tf

    service, _ = lisa_servers
    text = "Guerrillas killed an engineer, Asi Ali, from Tikrit. His mother was also killed in the attack."
    answer = service.predict("srl", None, json.dumps({"signature_name": "text", "instances": [text]}).encode())
    [prediction] = answer["predictions"]
    by_rest = {position: (prediction["senses"][p], prediction["sense_sources"][p], prediction["sense_names"][p],
                          [(role, prediction["argument_descriptions"][p][k], prediction["argument_function_tags"][p][k],
                            prediction["argument_vn_roles"][p][k])
                           for k, role in enumerate(prediction["argument_roles"][p]) if role])
               for p, position in enumerate(prediction["predicate_positions"]) if position >= 0}
    by_predict, first = {}, 0
    for sentence in lisa_tf.load(lisa_export[0]).predict(text):
        for p in sentence["predicates"]:
            by_predict[first + p["token"]] = (p["sense"], p["sense_source"], p["sense_name"], [
                (a["role"], a.get("description", ""), a.get("function_tag", ""), a.get("vn_role", ""))
                for a in p["arguments"]])
        first += len(sentence["tokens"])
    assert by_rest == by_predict
    killed = [frame for frame in by_rest.values() if frame[0] == "kill.01"]
    assert killed and killed[0][2] == "cause to die, murder", by_rest
    assert ("killer", "PAG", "agent") in [argument[1:] for frame in killed for argument in frame[3]], by_rest


#: Words the export's tokeniser cuts in two (clitics and EWT's glued spellings, a number and its unit)
#: that a count of words and punctuation marks takes for one.
GLUED = ["lets", "cannot", "wanna", "gonna", "gotta", "dont", "Im", "5pm", "1said", "123abc", "isnt", "youre",
         "its not", "I'ma", "it's", "don't"]


def test_raw_text_is_limited_by_the_tokens_the_export_makes_of_it():
    """``"lets " * 158 + "."`` is 317 tokens in-graph (``let s`` each), over the 159-token sentence limit,
    though a count of words and punctuation marks finds 159. The count the limits check equals the
    in-graph tokeniser's on every glued form, alone and repeated."""
    import tensorflow as tf

    from data_pipeline.tokenizer import sentences_tf, tokenize_tf
    from export.request_limits import _raw_sentences

    with pytest.raises(LimitExceeded) as refused:
        check_request({"text": _strings("lets " * 158 + ".")}, _signature("text"), SHIPPED)
    assert str(refused.value) == ("tokens per sentence ('text' instance 0 has 317 tokens): 317 is over the "
                                  "limit of 159 (--max_tokens_per_sentence)").replace("instance 0", "instance 0 sentence 1")
    texts = [f"{word} " * repeat + "." for word in GLUED for repeat in (1, 3)] + ["Fine. " + " ".join(GLUED) + "."]
    sentences, rows, _, _ = sentences_tf(tf.constant(texts))
    tokens, _, _ = tokenize_tf(sentences)
    in_graph = [len(row) for row in tokens.to_list()]
    counted = [len(found) for _, found in _raw_sentences("text", texts)]
    assert counted == in_graph
    assert sum(in_graph) > sum(len(t.split()) + 1 for t in texts)  # the glued forms really are cut


def test_a_raw_text_token_over_the_character_limit_is_refused():
    limits = RequestLimits().resolve(TrainingSizes(2500, 159, 140))
    url = "http://example.com/" + "a" * 200  # one token of 219 characters for the tokeniser
    with pytest.raises(LimitExceeded, match=r"^characters per token \('text' instance 1 sentence 2 has a token of 219 "
                                            r"characters\): 219 is over the limit of 140"):
        check_request({"text": _strings("Fine.", f"Fine. See {url} now.")}, _signature("text"), limits)
    with pytest.raises(LimitExceeded, match=r"^characters per token \('sentences' instance 0 has a token of 141 "):
        check_request({"sentences": _strings("a\u00a0" * 70 + "b c")}, _signature("sentences"), limits)
    check_request({"sentences": _strings("a\u00a0" * 69 + "b c")}, _signature("sentences"), limits)  # 139: no split
