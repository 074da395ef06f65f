"""The REST request suite shared by the tests of this server and of ``tensorflow_model_server``.

Each :class:`Case` is one HTTP request against the tiny model of ``conftest.py`` (name ``tiny``,
versions 1 and 2) and what a TensorFlow-Serving-compatible server must answer. Expected values are
written out by hand from the tiny model's definition (upper-casing, byte lengths, ``length * scale``
with scale 0.25 in version 1 and 0.5 in version 2, heads' words ...), never produced by the code
under test.

This server is started serving the two latest versions. Where ``tensorflow_model_server`` (default
flags: only the latest version is loaded) answers
differently by design, a case says so: ``real_status`` is the reference server's status,
``own_only`` names why a case is not sent to the reference server at all, and checks receive the
``kind`` of server (``"own"`` or ``"real"``). Error message texts differ between the servers, so
``message_contains`` is checked against this server only.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import urllib.error
import urllib.request
from typing import Any, Callable, Optional

MODEL = "tiny"
LATEST = "2"
STRING_DIM2 = {"dim": [{"size": "-1", "name": ""}, {"size": "-1", "name": ""}], "unknown_rank": False}
# Never in this server's error messages: graph node names, assertion dumps, op names.
TF_INTERNALS = ("{{node", "[[{{", "assertion failed", "Condition x", "OpError", "Traceback")
TOKEN_OUTPUTS = {"upper", "first_byte", "token_bytes", "byte_lengths", "length", "scaled_length"}


def b64(text: str) -> dict:
    """``{"b64": ...}`` of the UTF-8 bytes of ``text`` (how ``*_bytes`` outputs are written)."""
    return {"b64": base64.b64encode(text.encode("utf-8")).decode("ascii")}


def token_row(tokens: list, scale: float) -> dict:
    """Expected ``serving_default`` outputs for one padded sentence of ASCII tokens."""
    length = sum(1 for t in tokens if t)
    return {
        "upper": [t.upper() for t in tokens],
        "first_byte": [t[:1] for t in tokens],
        "token_bytes": [b64(t) for t in tokens],
        "byte_lengths": [len(t) for t in tokens],
        "length": length,
        "scaled_length": length * scale,
    }


@dataclasses.dataclass
class Case:
    """One request and the answer it must get.

    Args:
        name: test id.
        method: ``GET`` or ``POST``.
        path: URL path.
        body: JSON-able object, or ``bytes`` sent as is (``None``: no body).
        status: expected HTTP status from this server.
        expect: the exact expected JSON answer, or ``None``.
        check: a further check ``check(answer, kind)``.
        message_contains: for errors, a substring of this server's message.
        real_status: the reference server's status when it differs.
        own_only: why the case is not sent to the reference server (``None``: it is).
    """

    name: str
    method: str
    path: str
    body: Any = None
    status: int = 200
    expect: Any = None
    check: Optional[Callable[[Any, str], None]] = None
    message_contains: Optional[str] = None
    real_status: Optional[int] = None
    own_only: Optional[str] = None

    @property
    def is_error(self) -> bool:
        """Whether this server must answer with an error."""
        return self.status >= 400


def request(base_url: str, method: str, path: str, body: Any = None, timeout: float = 30.0) -> tuple:
    """Send one request with urllib; returns ``(status, parsed JSON or raw text)``."""
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(base_url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    text = raw.decode("utf-8")
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


def run_case(base_url: str, case: Case, kind: str = "own") -> None:
    """Send ``case`` and assert the answer (``kind`` is ``"own"`` or ``"real"``)."""
    status, answer = request(base_url, case.method, case.path, case.body)
    expected_status = case.real_status if (kind == "real" and case.real_status is not None) else case.status
    assert status == expected_status, f"{case.name}: status {status}, expected {expected_status}; answer {answer!r}"
    if status >= 400:
        assert isinstance(answer, dict) and set(answer) == {"error"}, f"{case.name}: error body {answer!r}"
        assert isinstance(answer["error"], str) and answer["error"].strip(), f"{case.name}: empty error message"
        if kind == "own" and case.message_contains:
            assert case.message_contains in answer["error"], f"{case.name}: message {answer['error']!r}"
        if kind == "own":
            leaked = [f for f in TF_INTERNALS if f in answer["error"]]
            assert not leaked, f"{case.name}: TensorFlow internals {leaked} in {answer['error']!r}"
        return
    if case.expect is not None:
        assert answer == case.expect, f"{case.name}: answer {answer!r}\n expected {case.expect!r}"
    if case.check is not None:
        case.check(answer, kind)


# --------------------------------------------------------------------------------------------------
# Checks for answers that depend on the server kind or are large
# --------------------------------------------------------------------------------------------------


def _check_status_all(answer: Any, kind: str) -> None:
    versions = [entry["version"] for entry in answer["model_version_status"]]
    for entry in answer["model_version_status"]:
        assert entry["state"] == "AVAILABLE"
        assert entry["status"]["error_code"] == "OK"
    # The tests start this server with latest{num_versions: 2}; tensorflow_model_server's default serves
    # the latest only.
    assert sorted(versions) == (["1", "2"] if kind == "own" else ["2"])


def _check_metadata(version: str) -> Callable[[Any, str], None]:
    def check(answer: Any, kind: str) -> None:
        assert answer["model_spec"] == {"name": MODEL, "signature_name": "", "version": version}
        defs = answer["metadata"]["signature_def"]["signature_def"]
        assert {"serving_default", "with_parse", "sentences"} <= set(defs)
        default = defs["serving_default"]
        assert default["method_name"] == "tensorflow/serving/predict"
        assert set(default["inputs"]) == {"tokens"}
        assert default["inputs"]["tokens"]["dtype"] == "DT_STRING"
        assert default["inputs"]["tokens"]["tensor_shape"] == STRING_DIM2
        assert set(default["outputs"]) == TOKEN_OUTPUTS
        assert default["outputs"]["scaled_length"]["dtype"] == "DT_FLOAT"
        assert default["outputs"]["byte_lengths"]["dtype"] == "DT_INT64"
        assert default["outputs"]["length"]["dtype"] == "DT_INT32"
        assert default["outputs"]["length"]["tensor_shape"]["dim"] == [{"size": "-1", "name": ""}]
        parse = defs["with_parse"]
        assert set(parse["inputs"]) == {"tokens", "parse_heads"}
        assert parse["inputs"]["parse_heads"]["dtype"] == "DT_INT32"
        assert parse["inputs"]["parse_heads"]["tensor_shape"] == STRING_DIM2
        assert set(parse["outputs"]) == TOKEN_OUTPUTS | {"head_words", "num_roots"}
        assert defs["sentences"]["inputs"]["sentences"]["dtype"] == "DT_STRING"
        assert set(defs["sentences"]["outputs"]) == {"num_tokens"}
    return check


SENT_A = ["The", "cat", "sat", ""]
SENT_B = ["Dogs", "bark", "", ""]
HEADS_A = [2, 3, 0, -1]  # The <- cat <- sat (root)
HEADS_B = [2, 0, -1, -1]  # Dogs <- bark (root)


def _parse_row(tokens: list, heads: list, scale: float) -> dict:
    row = token_row(tokens, scale)
    row["head_words"] = ["" if h < 0 else "ROOT" if h == 0 else tokens[h - 1] for h in heads]
    row["num_roots"] = sum(1 for h in heads if h == 0)
    return row


def _columns(rows: list) -> dict:
    return {key: [row[key] for row in rows] for key in rows[0]}


PREDICT = f"/v1/models/{MODEL}:predict"
PREDICT_V1 = f"/v1/models/{MODEL}/versions/1:predict"
PREDICT_V2 = f"/v1/models/{MODEL}/versions/2:predict"
ALL_VERSIONS = ("tensorflow_model_server's default version policy serves only the latest version (this server is "
                "started with num_versions=2)")
UNCHECKED_INPUTS = ("tensorflow_model_server passes inputs to the model unchecked; the tiny model's own assertions "
                    "do not catch this")
LIMITS = "tensorflow_model_server has no per-request token limits"
RAW_BYTES = ("tensorflow_model_server base64-encodes only outputs named *_bytes; other bytes that are not "
             "UTF-8 are not guaranteed to come back as valid JSON")


def good_cases() -> list:
    """Requests that must succeed, with their exact answers."""
    two_rows = [token_row(SENT_A, 0.5), token_row(SENT_B, 0.5)]
    parse_rows = [_parse_row(SENT_A, HEADS_A, 0.5), _parse_row(SENT_B, HEADS_B, 0.5)]
    accent = {"upper": ["é", "X"], "first_byte": [{"b64": "ww=="}, "x"], "token_bytes": [b64("é"), b64("x")],
              "byte_lengths": [2, 1], "length": 2, "scaled_length": 1.0}
    return [
        Case("status", "GET", f"/v1/models/{MODEL}", check=_check_status_all),
        Case("status_version_2", "GET", f"/v1/models/{MODEL}/versions/2", expect={"model_version_status": [
            {"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]}),
        Case("status_version_1", "GET", f"/v1/models/{MODEL}/versions/1", expect={"model_version_status": [
            {"version": "1", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]},
            own_only=ALL_VERSIONS),
        Case("metadata", "GET", f"/v1/models/{MODEL}/metadata", check=_check_metadata("2")),
        Case("metadata_version_1", "GET", f"/v1/models/{MODEL}/versions/1/metadata", check=_check_metadata("1"),
             own_only=ALL_VERSIONS),
        Case("row_default_signature", "POST", PREDICT, {"instances": [SENT_A, SENT_B]},
             expect={"predictions": two_rows}),
        Case("row_named_objects", "POST", PREDICT,
             {"signature_name": "serving_default", "instances": [{"tokens": SENT_A}, {"tokens": SENT_B}]},
             expect={"predictions": two_rows}),
        Case("columnar_default_signature", "POST", PREDICT, {"inputs": {"tokens": [SENT_A, SENT_B]}},
             expect={"outputs": _columns(two_rows)}),
        Case("columnar_plain_value", "POST", PREDICT, {"inputs": [SENT_A]},
             expect={"outputs": _columns([token_row(SENT_A, 0.5)])}),
        Case("row_version_2_path", "POST", PREDICT_V2, {"instances": [SENT_B]},
             expect={"predictions": [token_row(SENT_B, 0.5)]}),
        Case("row_version_1_path", "POST", PREDICT_V1, {"instances": [SENT_A, SENT_B]},
             expect={"predictions": [token_row(SENT_A, 0.25), token_row(SENT_B, 0.25)]}, own_only=ALL_VERSIONS),
        Case("row_with_parse", "POST", PREDICT, {"signature_name": "with_parse", "instances": [
            {"tokens": SENT_A, "parse_heads": HEADS_A}, {"tokens": SENT_B, "parse_heads": HEADS_B}]},
            expect={"predictions": parse_rows}),
        Case("columnar_with_parse", "POST", PREDICT, {"signature_name": "with_parse", "inputs": {
            "tokens": [SENT_A, SENT_B], "parse_heads": [HEADS_A, HEADS_B]}},
            expect={"outputs": _columns(parse_rows)}),
        Case("row_single_output_is_plain_list", "POST", PREDICT,
             {"signature_name": "sentences", "instances": ["a b c", "hello", ""]},
             expect={"predictions": [3, 1, 0]}),
        Case("columnar_single_output_is_the_value", "POST", PREDICT,
             {"signature_name": "sentences", "inputs": {"sentences": ["a b c", "x  y"]}},
             expect={"outputs": [3, 2]}),
        Case("non_utf8_output_as_b64", "POST", PREDICT, {"instances": [["é", "x"]]},
             expect={"predictions": [accent]}, own_only=RAW_BYTES),
        Case("b64_string_input", "POST", PREDICT, {"instances": [[b64("cat"), "dog"]]},
             expect={"predictions": [token_row(["cat", "dog"], 0.5)]}),
        Case("empty_sentence", "POST", PREDICT, {"instances": [[]]}, expect={"predictions": [
            {"upper": [], "first_byte": [], "token_bytes": [], "byte_lengths": [], "length": 0,
             "scaled_length": 0.0}]}),
        Case("path_case_insensitive", "POST", f"/V1/Models/{MODEL}:PREDICT", {"instances": [SENT_B]},
             expect={"predictions": [token_row(SENT_B, 0.5)]}),
    ]


def bad_cases() -> list:
    """Requests that must be refused with 400 or 404 and ``{"error": message}``."""
    parse = {"signature_name": "with_parse"}
    return [
        # -- malformed bodies ---------------------------------------------------------------------
        Case("malformed_json", "POST", PREDICT, b'{"instances": [["a"]', 400, message_contains="JSON Parse error"),
        Case("empty_body", "POST", PREDICT, b"", 400, message_contains="empty"),
        Case("body_not_object", "POST", PREDICT, [["a", "b"]], 400, message_contains="Is not object"),
        Case("body_not_utf8", "POST", PREDICT, b'{"instances": [["\xff"]]}', 400, message_contains="UTF-8",
             own_only="tensorflow_model_server does not validate the UTF-8 of request strings"),
        Case("no_instances_or_inputs", "POST", PREDICT, {"signature_name": "serving_default"}, 400,
             message_contains="Missing 'inputs' or 'instances'"),
        Case("both_instances_and_inputs", "POST", PREDICT, {"instances": [SENT_A], "inputs": [SENT_A]}, 400,
             message_contains="only one of"),
        Case("empty_instances", "POST", PREDICT, {"instances": []}, 400, message_contains="No values"),
        Case("instances_not_list", "POST", PREDICT, {"instances": {"tokens": SENT_A}}, 400,
             message_contains="list/array"),
        Case("signature_name_not_string", "POST", PREDICT, {"signature_name": 3, "instances": [SENT_A]}, 400,
             message_contains="must be a string"),
        Case("unknown_signature", "POST", PREDICT, {"signature_name": "nope", "instances": [SENT_A]}, 400,
             message_contains='"nope" not found'),
        Case("unknown_top_level_key", "POST", PREDICT, {"signature": "with_parse", "instances": [SENT_A]}, 400,
             message_contains="'signature'", own_only="tensorflow_model_server ignores unknown request keys"),
        # -- missing / unknown inputs -------------------------------------------------------------
        Case("missing_input_row", "POST", PREDICT, {**parse, "instances": [{"tokens": SENT_A}]}, 400,
             message_contains="missing: parse_heads"),
        Case("missing_input_columnar", "POST", PREDICT, {**parse, "inputs": {"tokens": [SENT_A]}}, 400,
             message_contains="Missing named input: parse_heads"),
        Case("plain_instances_for_two_inputs", "POST", PREDICT, {**parse, "instances": [SENT_A]}, 400,
             message_contains="expecting list of objects"),
        Case("plain_inputs_for_two_inputs", "POST", PREDICT, {**parse, "inputs": [SENT_A]}, 400,
             message_contains="expecting an object"),
        Case("unknown_input_row", "POST", PREDICT, {"instances": [{"tokens": SENT_A, "words": SENT_A}]}, 400,
             message_contains="does not have named input: words"),
        Case("unknown_input_columnar", "POST", PREDICT, {"inputs": {"tokens": [SENT_A], "words": [SENT_A]}}, 400,
             message_contains="Unknown named input(s): words",
             own_only="tensorflow_model_server ignores unknown keys of a columnar 'inputs' object"),
        Case("instances_with_differing_keys", "POST", PREDICT, {**parse, "instances": [
            {"tokens": SENT_A, "parse_heads": HEADS_A}, {"tokens": SENT_B}]}, 400,
            message_contains="Failed to process element: 1"),
        Case("object_then_list_instances", "POST", PREDICT, {"instances": [{"tokens": SENT_A}, SENT_B]}, 400,
             message_contains="Expecting object"),
        # -- wrong types ------------------------------------------------------------------------------
        Case("number_for_string", "POST", PREDICT, {"instances": [["The", 7]]}, 400,
             message_contains="is not of expected type: string"),
        Case("null_for_string", "POST", PREDICT, {"instances": [["The", None]]}, 400,
             message_contains="Type: Null"),
        Case("string_for_int", "POST", PREDICT, {**parse, "instances": [{"tokens": ["a"], "parse_heads": ["0"]}]},
             400, message_contains="is not of expected type: int32"),
        Case("float_for_int", "POST", PREDICT, {**parse, "instances": [{"tokens": ["a"], "parse_heads": [0.5]}]},
             400, message_contains="is not of expected type: int32"),
        Case("bool_for_int", "POST", PREDICT, {**parse, "instances": [{"tokens": ["a"], "parse_heads": [True]}]},
             400, message_contains="Type: True"),
        Case("int32_overflow", "POST", PREDICT, {**parse, "instances": [{"tokens": ["a"], "parse_heads": [2**40]}]},
             400, message_contains="int32"),
        Case("lone_surrogate_string", "POST", PREDICT, b'{"instances": [["\\ud800"]]}', 400,
             message_contains="lone surrogate", own_only="how tensorflow_model_server treats lone surrogates varies"),
        Case("integer_too_long", "POST", PREDICT, b'{"signature_name": "with_parse", "instances": [{"tokens": ["a"], '
             b'"parse_heads": [1' + b"9" * 5000 + b']}]}', 400),
        Case("bad_b64", "POST", PREDICT, {"instances": [[{"b64": "not base64!"}]]}, 400,
             message_contains="base64"),
        # -- shapes ---------------------------------------------------------------------------------
        Case("ragged_columnar", "POST", PREDICT, {"inputs": {"tokens": [["a", "b"], ["c"]]}}, 400,
             message_contains="unexpected size"),
        Case("ragged_rows", "POST", PREDICT, {"instances": [["a", "b"], ["c"]]}, 400,
             message_contains="Expecting shape [2] but got: [1]"),
        Case("nested_too_deep", "POST", PREDICT, {"instances": [[["a"], ["b"]]]}, 400,
             message_contains="declared with shape [-1,-1]"),
        Case("wrong_rank", "POST", PREDICT, {"instances": ["a", "b"]}, 400,
             message_contains="declared with shape [-1,-1]"),
        Case("parse_heads_shorter_row", "POST", PREDICT,
             {**parse, "instances": [{"tokens": SENT_A, "parse_heads": [2, 3, 0]}]}, 400,
             message_contains="must agree in length"),
        Case("parse_heads_longer_columnar", "POST", PREDICT,
             {**parse, "inputs": {"tokens": [SENT_B], "parse_heads": [HEADS_B + [0]]}}, 400,
             message_contains="must agree in length"),
        # -- inputs that do not fit their sentences (the model's own checks on the reference server) ----
        Case("head_beyond_sentence", "POST", PREDICT,
             {**parse, "instances": [{"tokens": SENT_A, "parse_heads": [2, 3, 9, -1]}]}, 400,
             message_contains="parse_heads: instance 0 has head 9 at token 2 of its 3 tokens"),
        Case("head_below_minus_one", "POST", PREDICT,
             {**parse, "instances": [{"tokens": SENT_A, "parse_heads": [2, 3, 0, -5]}]}, 400,
             message_contains="parse_heads: instance 0 has head -5 at padding position 3"),
        Case("head_minus_one_inside_sentence", "POST", PREDICT,
             {**parse, "instances": [{"tokens": SENT_A, "parse_heads": HEADS_A}, {"tokens": SENT_B,
                                                                                  "parse_heads": [-1, 0, -1, -1]}]},
             400, message_contains="parse_heads: instance 1 has head -1 at token 0 of its 2 tokens",
             own_only=UNCHECKED_INPUTS),
        Case("head_below_minus_one_inside_sentence", "POST", PREDICT,
             {**parse, "inputs": {"tokens": [SENT_A], "parse_heads": [[2, -5, 0, -1]]}}, 400,
             message_contains="parse_heads: instance 0 has head -5 at token 1", own_only=UNCHECKED_INPUTS),
        Case("head_on_padding", "POST", PREDICT,
             {**parse, "instances": [{"tokens": SENT_B, "parse_heads": [2, 0, 0, -1]}]}, 400,
             message_contains="-1 only on padding", own_only=UNCHECKED_INPUTS),
        Case("empty_token_inside_sentence", "POST", PREDICT, {"instances": [SENT_A, ["Dogs", "", "bark", ""]]}, 400,
             message_contains="tokens: instance 1 has an empty token at index 1", own_only=UNCHECKED_INPUTS),
        # -- request limits (this server's defaults for a model without a run config) -----------------
        Case("sentence_over_the_limit", "POST", PREDICT, {"instances": [["w"] * 513]}, 400,
             message_contains="tokens per sentence ('tokens' is 513 tokens wide): 513 is over the limit of 512",
             own_only=LIMITS),
        Case("padding_over_the_sentence_limit", "POST", PREDICT, {"instances": [["w"] + [""] * 600]}, 400,
             message_contains="over the limit of 512 (--max_tokens_per_sentence)", own_only=LIMITS),
        Case("request_over_the_token_limit", "POST", PREDICT, {"inputs": [["w"] * 100] * 90}, 400,
             message_contains="tokens per request ('tokens': 90 sentences x 100 tokens): 9000 is over the limit "
                              "of 8192 (--max_tokens_per_request)", own_only=LIMITS),
        Case("request_over_the_sentence_count", "POST", PREDICT,
             {"signature_name": "sentences", "instances": ["a b"] * 257}, 400,
             message_contains="sentences per request: 257 is over the limit of 256", own_only=LIMITS),
        Case("request_over_the_token_pairs", "POST", PREDICT, {"inputs": [["w"] * 512] * 2}, 400,
             message_contains="token pairs per request ('tokens': 2 sentences x 512 x 512 tokens, the per-predicate "
                              "outputs if every token is a predicate): 524288 is over the limit of 393216 "
                              "(--max_token_pairs_per_request)", own_only=LIMITS),
        Case("raw_sentence_over_the_limit", "POST", PREDICT,
             {"signature_name": "sentences", "instances": ["a " * 300 + ", " * 300]}, 400,
             message_contains="'sentences' instance 0 has 600 tokens", own_only=LIMITS),
        # -- unknown model / version / path ---------------------------------------------------------
        Case("unknown_model_predict", "POST", "/v1/models/nope:predict", {"instances": [SENT_A]}, 404,
             message_contains="Servable not found"),
        Case("unknown_model_status", "GET", "/v1/models/nope", None, 404, message_contains="nope"),
        Case("unknown_model_metadata", "GET", "/v1/models/nope/metadata", None, 404, message_contains="nope"),
        Case("unknown_version_predict", "POST", f"/v1/models/{MODEL}/versions/7:predict", {"instances": [SENT_A]},
             404, message_contains="Specific(tiny, 7)"),
        Case("unknown_version_status", "GET", f"/v1/models/{MODEL}/versions/7", None, 404,
             message_contains="version 7"),
        Case("unknown_version_metadata", "GET", f"/v1/models/{MODEL}/versions/7/metadata", None, 404,
             message_contains="Specific(tiny, 7)"),
        Case("post_without_verb", "POST", f"/v1/models/{MODEL}", {"instances": [SENT_A]}, 404,
             message_contains="Malformed request", real_status=400),
        Case("get_on_predict", "GET", PREDICT, None, 404, message_contains="Malformed request", real_status=400),
        Case("path_names_no_api", "GET", f"/v1/models/{MODEL}/bogus", None, 404, real_status=400),
        Case("classify_on_predict_signature", "POST", f"/v1/models/{MODEL}:classify",
             {"examples": [{"tokens": "a"}]}, 400, message_contains="classify"),
        Case("missing_model_name", "GET", "/v1/models", None, 400, message_contains="Missing model name"),
    ]


def all_cases() -> list:
    """Every case, good first."""
    return good_cases() + bad_cases()
