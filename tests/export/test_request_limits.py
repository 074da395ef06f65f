"""Request limits are checked before a request's cost is paid (:mod:`export.request_limits`).

A REST body is counted before ``json.loads`` and its parsed shapes checked before any value is
converted; the cost limit counts what the model will produce (sentences x width x width when every
token is a predicate). Conversions are replaced by functions that fail the test when called, so each
refusal is shown to come before the work it saves. The tiny model of ``conftest.py`` has no run
config: its limits are the fallbacks (512 tokens per sentence, 8192 per request, 256 sentences).
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

from data_pipeline.input_limits import MAX_WORD_CHARACTERS, TrainingSizes
from export.request_limits import LimitExceeded, RequestLimits, check_request
from export.serving_codec import BadRequest

# Functions and defaults these limits added are imported inside the tests, so that each test fails on
# its own where they are missing.


@pytest.fixture(scope="module")
def service(tiny_model_base):
    from export.model_versions import VersionManager
    from export.rest_server import PredictionService

    versions = VersionManager(tiny_model_base, 1, 0.0, print).start()
    yield PredictionService(tiny_model_base.name, versions)
    versions.stop()


def _forbid(monkeypatch, target: str, name: str) -> None:
    def called(*args, **kwargs):
        raise AssertionError(f"{name} was called before the request was refused")

    monkeypatch.setattr(target, called)


def _predict(service, body) -> dict:
    data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
    return service.predict(service.model_name, None, data)


def test_a_million_instances_are_refused_before_the_body_is_parsed(service, monkeypatch):
    """The 6.3 MB body of 1,048,551 one-word instances: parsing alone would build a million lists."""
    from export.request_limits import json_values_limit

    body = json.dumps({"instances": [["a"]] * 1_048_551}, separators=(",", ":")).encode()
    assert len(body) < 8 * 1024 * 1024  # under the body-size limit: only the value count can refuse it
    monkeypatch.setattr("export.serving_codec.json", types.SimpleNamespace(
        loads=lambda *a, **k: pytest.fail("json.loads ran on the body"), JSONDecodeError=json.JSONDecodeError))
    limit = json_values_limit(service.versions.available()[2].signatures.values(), service.limits_for(
        service.versions.available()[2]))
    with pytest.raises(LimitExceeded) as refused:
        _predict(service, body)
    assert str(refused.value) == (f"JSON values in the request body: more than {limit}, the most a request within "
                                  "--max_sentences_per_request (256) and --max_tokens_per_request (8192) can hold")


@pytest.mark.parametrize("body, message", [
    ({"instances": [["a"]] * 300}, "sentences per request: 300 is over the limit of 256 (--max_sentences_per_request)"),
    ({"inputs": {"tokens": [["a"]] * 300}}, "sentences per request: 300 is over the limit of 256"),
    ({"instances": [["w"] * 600]}, "tokens per sentence ('tokens' is 600 tokens wide): 600 is over the limit of 512"),
    ({"inputs": [["w"] * 100] * 90}, "tokens per request ('tokens': 90 sentences x 100 tokens): 9000 is over"),
    ({"signature_name": "with_parse", "instances": [{"tokens": ["a"], "parse_heads": [0] * 600}]},
     "must agree in length"),
])
def test_parsed_shapes_are_checked_before_any_value_is_converted(service, monkeypatch, body, message):
    _forbid(monkeypatch, "export.serving_codec.json_to_array", "json_to_array")
    with pytest.raises(BadRequest) as refused:
        _predict(service, body)
    assert message in str(refused.value)


def test_a_later_instance_of_another_shape_is_refused_before_its_values_are_converted(service, monkeypatch):
    from export import serving_codec

    converted = []
    convert = serving_codec.json_to_array
    monkeypatch.setattr(serving_codec, "json_to_array", lambda value, spec: converted.append(value) or convert(value, spec))
    with pytest.raises(BadRequest, match=r"Expecting shape \[1\] but got: \[500\]"):
        _predict(service, {"instances": [["a"], ["b"] * 500]})
    assert converted == [["a"]]


def test_json_value_counts_skip_strings_and_bound_every_value():
    from export.serving_codec import count_json_values

    document = b'{"a": [1, 2, {"b": "x,[{\\","}], "c": []}'
    values = 8  # the object, [1, 2, {...}], 1, 2, {"b": ...}, "x,[{\",", [], and nothing else
    assert count_json_values(document, 0) > 0
    assert count_json_values(document, values) == values
    assert count_json_values(document, 10**6) >= values  # under the bound, the cheap count is enough
    assert count_json_values(b"[]", 10) == 2 and count_json_values(b'"a,b"', 0) == 1


def test_every_request_inside_the_limits_fits_the_json_value_limit(service):
    """The largest requests the token and sentence limits accept, in both formats and with base64 strings."""
    from export.request_limits import json_values_limit
    from export.serving_codec import count_json_values

    loaded = service.versions.available()[2]
    limits = service.limits_for(loaded)
    limit = json_values_limit(loaded.signatures.values(), limits)
    b64 = {"b64": "YQ=="}
    bodies = [
        {"instances": [[b64] * 32] * 256},
        {"inputs": {"tokens": [[b64] * 48] * 170}},
        {"inputs": {"tokens": [[b64] * 512]}},
        {"signature_name": "with_parse", "instances": [{"tokens": [b64] * 32, "parse_heads": [0] * 32}] * 256},
        {"signature_name": "sentences", "instances": ["a, [b] {c}"] * 256},
    ]
    for body in bodies:
        data = json.dumps(body).encode()
        assert count_json_values(data, limit) <= limit, body
        _predict(service, data)  # and the server answers it


def test_token_pairs_count_what_the_model_produces(service):
    """Inside every token limit, sentences x width x width (the [B, P, T] outputs when every token is a
    predicate) is bounded too; the default lets a lone sentence of the longest length through."""
    from export.request_limits import DEFAULT_TOKEN_PAIRS_WIDTH

    limits = service.limits.resolve(None)
    assert limits.max_token_pairs_per_request == max(512 ** 2, 8192 * DEFAULT_TOKEN_PAIRS_WIDTH)
    with pytest.raises(LimitExceeded) as refused:
        _predict(service, {"inputs": [["said"] * 512] * 15})
    assert str(refused.value) == (
        "token pairs per request ('tokens': 15 sentences x 512 x 512 tokens, the per-predicate outputs if every "
        "token is a predicate): 3932160 is over the limit of 393216 (--max_token_pairs_per_request)")
    assert len(_predict(service, {"inputs": [["said"] * 512]})["outputs"]["length"]) == 1
    with pytest.raises(LimitExceeded, match=r"'sentences': 3 sentences x 400 x 400 tokens"):
        _predict(service, {"signature_name": "sentences", "instances": ["said " * 400] * 3})


def test_the_shipped_models_limits_refuse_a_request_of_predicates_only():
    """15 sentences of 159 x "said" fit the shipped model's token limits (2,500 per request, 159 per
    sentence) but make 159 predicates each; ordinary requests of that size are accepted."""
    from export.request_limits import DEFAULT_TOKEN_PAIRS_WIDTH
    from export.serving_codec import InputSpec, Signature

    limits = RequestLimits().resolve(TrainingSizes(2500, 159))
    assert limits == RequestLimits(159, 2500, 256, 2500 * DEFAULT_TOKEN_PAIRS_WIDTH, MAX_WORD_CHARACTERS, 3 * 2500)
    signature = Signature("serving_default", {"tokens": InputSpec("tokens", "DT_STRING", (None, None))}, [], "", None)
    said = np.full((15, 159), b"said", dtype=object)
    with pytest.raises(LimitExceeded, match="--max_token_pairs_per_request"):
        check_request({"tokens": said}, signature, limits)
    check_request({"tokens": np.full((1, 159), b"w", dtype=object)}, signature, limits)
    check_request({"tokens": np.full((50, 48), b"w", dtype=object)}, signature, limits)
    assert RequestLimits(max_token_pairs_per_request=10).resolve(TrainingSizes(2500, 159)).max_token_pairs_per_request == 10


def test_a_text_instance_is_limited_sentence_by_sentence_as_the_export_splits_it():
    """``text`` instances are paragraphs, split in-graph: the per-sentence limit applies to each of their
    sentences, and the per-request limits to all of them together."""
    from export.serving_codec import InputSpec, Signature

    limits = RequestLimits().resolve(TrainingSizes(2500, 159))
    signature = Signature("text", {"text": InputSpec("text", "DT_STRING", (None,))}, [], "", None)
    sentence = " ".join(["word"] * 99) + "."  # 100 tokens
    def text(*values):
        return {"text": np.array([v.encode() for v in values], dtype=object)}

    check_request(text(" ".join([sentence] * 3)), signature, limits)
    long = " ".join(["word"] * 169) + "."
    with pytest.raises(LimitExceeded) as refused:
        check_request(text("Short one.", f"Fine. {long} Fine."), signature, limits)
    assert str(refused.value).startswith("tokens per sentence ('text' instance 1 sentence 2 has 170 tokens): 170 is over the limit of 159")
    with pytest.raises(LimitExceeded, match=r"'text' holds more than 2500 words and punctuation marks"):
        check_request(text(" ".join([sentence] * 26)), signature, limits)  # counted before it is split
    long = " ".join(["word"] * 149) + "."  # 198 tokens in all, padded to 17 x 150 for the model
    with pytest.raises(LimitExceeded, match=r"'text': 17 sentences x 150 tokens\): 2550 is over the limit of 2500"):
        check_request(text(" ".join([long] + ["Go now."] * 16)), signature, limits)
    with pytest.raises(LimitExceeded, match=r"sentences per request \('text' splits into 257\)"):
        check_request(text("Hi. " * 257), signature, limits)


def test_oversize_requests_benchmark_runs_on_the_tiny_model(tiny_model_base, tmp_path):
    """``benchmarks/oversize_requests.py`` on small sizes: every oversize request is refused with a 4xx
    (its timings and memory are the benchmark's to report, not asserted here)."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    out = tmp_path / "oversize.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/oversize_requests.py", str(tiny_model_base), "--instances", "20000",
         "--declared", "100", "--predicates", "5x300", "--long_tokens", "1x20:2000", "--window_tokens", "2x8:100",
         "--inside_long_tokens", "2x8:10", "--out", str(out)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row["request"]: row for row in json.loads(out.read_text())["rows"]}
    assert {name: row["status"] for name, row in rows.items()} == {
        "rest_instances": 400, "grpc_declared_shape": "INVALID_ARGUMENT", "grpc_huge_shape": "INVALID_ARGUMENT",
        "grpc_declared_strings": "RESOURCE_EXHAUSTED", "grpc_bad_dtype": "INVALID_ARGUMENT",
        "rest_all_predicates": 400, "rest_ordinary": 200, "rest_long_tokens": 400,
        "grpc_long_tokens": "RESOURCE_EXHAUSTED", "rest_long_window_tokens": 200, "rest_long_tokens_inside": 200}
    assert all("--max_characters_per_token" in rows[name]["answer"] for name in ("rest_long_tokens", "grpc_long_tokens"))
    assert all(rows[name]["good_status"] == 200 for name in rows if "_long_tokens" in name)
    assert "JSON values in the request body" in rows["rest_instances"]["answer"]
    assert "--max_token_pairs_per_request" in rows["rest_all_predicates"]["answer"]
    assert all(row["seconds"] > 0 and row["rss_growth_mb"] >= 0 for row in rows.values())
    assert "rest_instances" in done.stdout and "RSS growth" in done.stdout


def test_a_token_longer_than_the_character_limit_is_refused_before_the_model_runs(service, monkeypatch):
    """159 tokens of ``"x." * 25000`` (7.95 MB, inside the byte, token and sentence limits) were cut into
    8 million word pieces by a contextual encoder; the characters of each token are bounded first."""
    limits = service.limits_for(service.versions.available()[2])
    assert limits.max_characters_per_token == MAX_WORD_CHARACTERS  # the tiny export records no longest token
    body = json.dumps({"instances": [["x." * 25_000] * 159]}).encode()
    assert len(body) < 8 * 1024 * 1024
    _forbid(monkeypatch, "export.rest_server.run_signature", "the model")
    with pytest.raises(LimitExceeded) as refused:
        _predict(service, body)
    assert str(refused.value) == ("characters per token ('tokens' instance 0 token 0 has 50000 characters): 50000 is "
                                  f"over the limit of {MAX_WORD_CHARACTERS} (--max_characters_per_token)")


def test_the_character_limit_counts_characters_of_every_token_input():
    from export.serving_codec import InputSpec, Signature

    limits = RequestLimits().resolve(TrainingSizes(2500, 159, 140))
    assert limits.max_characters_per_token == 140
    signature = Signature("with_parse", {"tokens": InputSpec("tokens", "DT_STRING", (None, None)),
                                         "parse_heads": InputSpec("parse_heads", "DT_INT32", (None, None))}, [], "", None)
    heads = np.zeros((2, 2), dtype=np.int32)
    accepted = np.array([["é" * 140, "a"], ["b", "c"]], dtype=object)  # 280 bytes, 140 characters
    check_request({"tokens": np.vectorize(str.encode, otypes=[object])(accepted), "parse_heads": heads}, signature, limits)
    refused = np.array([[b"a", b"b"], [b"c", ("\u20ac" * 141).encode()]], dtype=object)
    with pytest.raises(LimitExceeded, match=r"^characters per token \('tokens' instance 1 token 1 has 141 characters\): "
                                            r"141 is over the limit of 140 \(--max_characters_per_token\)$"):
        check_request({"tokens": refused, "parse_heads": heads}, signature, limits)
    assert RequestLimits(max_characters_per_token=1000).resolve(TrainingSizes(2500, 159, 140)).max_characters_per_token == 1000


def test_word_pieces_are_counted_with_the_encoders_own_pieces_before_the_model_runs():
    """52 sentences of 48 tokens of ``"x." * 70`` pass every token and character limit of the shipped
    ``srl`` but are 52 full 512-piece windows of its encoder; 52 x 48 ordinary words are ~60 pieces each."""
    from data_pipeline.word_pieces import WordPieceCounter
    from export.request_limits import WORD_PIECES_PER_TOKEN
    from export.serving_codec import InputSpec, Signature
    from lisa_tf.models.contextual import _lowercases, _read_vocabulary, preset_directory

    preset = preset_directory("minilm")
    counter = WordPieceCounter(_read_vocabulary(preset), _lowercases(preset))
    limits = RequestLimits().resolve(TrainingSizes(2500, 159, 140), counter)
    assert limits.max_word_pieces_per_request == WORD_PIECES_PER_TOKEN * 2500 == 7500
    signature = Signature("serving_default", {"tokens": InputSpec("tokens", "DT_STRING", (None, None))}, [], "", None)
    with pytest.raises(LimitExceeded) as refused:
        check_request({"tokens": np.full((52, 48), ("x." * 70).encode(), dtype=object)}, signature, limits)
    assert str(refused.value) == ("word pieces per request ('tokens': 52 sentences x 512 pieces, the contextual "
                                  "encoder's input): 26624 is over the limit of 7500 (--max_word_pieces_per_request)")
    words = np.array([(["The", "government", "announced", "unprecedented", "measures"] * 10)[:48]] * 52, dtype=object)
    check_request({"tokens": np.vectorize(str.encode, otypes=[object])(words)}, signature, limits)
    assert RequestLimits().resolve(TrainingSizes(2500, 159, 140)).word_pieces is None  # no encoder: nothing counted
