"""Server-side batching (:mod:`export.batching`): joined answers equal lone answers, and joining happens."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from export.batching import BatchingParameters, read_batching_parameters
from export.model_versions import VersionManager
from export.rest_server import PredictionService
from tests.export.conftest import MODEL_NAME

# A long timeout so that every request of a round joins the first one's batch.
JOIN_ALL = BatchingParameters(max_batch_size=64, batch_timeout_micros=300_000, max_batch_tokens=10_000,
                              num_batch_threads=1)


def _service(base, batching=None) -> PredictionService:
    versions = VersionManager(base, 1, 0.0, print).start()
    return PredictionService(base.name, versions, batching=batching)


def _concurrently(service: PredictionService, bodies: list) -> list:
    """``:predict`` each body from its own thread, all released at once; answers (or error texts) in order.

    With a batching service, no model call starts before every request is inside the batcher or answered
    without it (a request refused while being read): on a busy machine the threads could otherwise arrive
    one by one, each alone in the server and so run at once, and the joining under test would not happen.
    """
    answers = [None] * len(bodies)
    answered = []
    start = threading.Barrier(len(bodies))
    batcher = service.batcher
    run = batcher._run if batcher is not None else None
    all_inside = threading.Event()

    def gated(signature, arrays):
        deadline = time.monotonic() + 60
        while not all_inside.is_set() and time.monotonic() < deadline:
            if batcher._in_flight + len(answered) >= len(bodies):
                all_inside.set()
            time.sleep(0.005)
        return run(signature, arrays)

    def call(index: int) -> None:
        start.wait()
        try:
            answers[index] = service.predict(service.model_name, None, json.dumps(bodies[index]).encode())
        except Exception as error:  # compared as text: the same error must come back either way
            answers[index] = f"{type(error).__name__}: {error}"
        answered.append(index)

    if batcher is not None:
        batcher._run = gated
    try:
        threads = [threading.Thread(target=call, args=(i,)) for i in range(len(bodies))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        if batcher is not None:
            batcher._run = run
    return answers


def _assert_same(batched, alone, path="answer") -> None:
    """Equal JSON answers; floats to 1e-5 (a joined call may sum in another order)."""
    assert type(batched) is type(alone), f"{path}: {batched!r} != {alone!r}"
    if isinstance(alone, dict):
        assert batched.keys() == alone.keys(), path
        for key in alone:
            _assert_same(batched[key], alone[key], f"{path}.{key}")
    elif isinstance(alone, list):
        assert len(batched) == len(alone), f"{path}: length {len(batched)} != {len(alone)}"
        for i, (b, a) in enumerate(zip(batched, alone)):
            _assert_same(b, a, f"{path}[{i}]")
    elif isinstance(alone, float):
        assert batched == pytest.approx(alone, rel=1e-5, abs=1e-5), path
    else:
        assert batched == alone, path


def _compare(base, bodies: list, warm: dict) -> PredictionService:
    """Answers of a batching service equal a plain one's; returns the batching service (for its counts)."""
    plain, batching = _service(base), _service(base, JOIN_ALL)
    try:
        # the first request of each signature is the probe that decides whether it can be batched
        batching.predict(batching.model_name, None, json.dumps(warm).encode())
        alone = _concurrently(plain, bodies)
        joined = _concurrently(batching, bodies)
    finally:
        plain.versions.stop()
        batching.versions.stop()
    for index, (b, a) in enumerate(zip(joined, alone)):
        _assert_same(b, a, f"request {index}")
    return batching


def _tiny_bodies() -> list:
    words = "the cat sat on a warm mat near an old door".split()
    bodies = []
    for i in range(12):
        rows = [words[: 1 + (i + r) % len(words)] for r in range(1 + i % 3)]
        width = max(map(len, rows))
        bodies.append({"instances": [r + [""] * (width - len(r)) for r in rows]})
    bodies.append({"instances": [["x", "", "y"]]})  # an empty token inside a sentence: a 400 either way
    bodies.append({"signature_name": "with_parse",
                   "instances": [{"tokens": ["a", "b"], "parse_heads": [0, 1]}]})
    bodies.append({"inputs": [["columnar", "runs", "alone"]]})
    return bodies


def test_joined_answers_equal_lone_answers_on_the_tiny_model(tiny_model_base):
    bodies = _tiny_bodies()
    service = _compare(tiny_model_base, bodies, {"instances": [["warm", "up"]]})
    batcher = service.batcher
    # run alone, the 12 good row requests would be 12 calls: joined they are a few (after the probe's
    # two), beside with_parse's probe (two) and the columnar request (one)
    assert batcher.joined_calls >= 1
    assert batcher.model_calls <= 2 + 3 + 2 + 1, batcher.model_calls


def test_joined_answers_equal_lone_answers_on_a_real_deepatt_export(deepatt_run, deepatt_export):
    from tests.export.test_saved_model import _requests

    _, requests, _ = _requests(deepatt_run)
    bodies = []
    for i in range(16):
        tokens = [t for t in requests["tokens"][i] if t]
        bodies.append({"instances": [{"tokens": tokens, "predicate_index": requests["predicate_index"][i]}]})
    service = _compare(deepatt_export.parent, bodies, bodies[0])
    assert service.batcher.joined_calls >= 1
    assert service.batcher.model_calls <= 2 + 4, service.batcher.model_calls  # probe x2, then a few joins


def test_lisa_requests_join_across_their_predicate_axis(tmp_path):
    """The shipped LISA model finds its own predicates: requests with different numbers of them (none
    included) are joined, and each answer's predicate axis is cut back to what it is alone."""
    from data_pipeline.splits import read_split
    from tests.conftest import ROOT, shipped_export

    base = tmp_path / "srl"
    base.mkdir()
    (base / "1").symlink_to(shipped_export("srl") / "1", target_is_directory=True)
    sentences = read_split(str(ROOT / "data/propbank-ewt/dev.gold_conll.gz"), "conll12", None, 40)
    rows = [list(s.words) for s in sentences if len(s.words) <= 30][:16]
    bodies = []
    for i in range(0, 16, 2):  # one and two sentences per request
        batch = rows[i: i + 1 + (i // 2) % 2]
        width = max(map(len, batch))
        bodies.append({"instances": [r + [""] * (width - len(r)) for r in batch]})
    bodies.append({"instances": [["Hello", "!"]]})  # finds no predicate: an empty predicate axis
    service = _compare(base, bodies, {"instances": [["Thanks", "for", "the", "help", "."]]})
    assert service.batcher.joined_calls >= 1
    assert service.batcher.model_calls <= 2 + 6, service.batcher.model_calls  # probe x2, then a few joins
    # the property checked is only meaningful when the predicate axes differ between requests
    plain = _service(base)
    try:
        counts = {len(plain.predict(plain.model_name, None, json.dumps(b).encode())["predictions"][0]["srl_tags"])
                  for b in bodies}
    finally:
        plain.versions.stop()
    assert len(counts) >= 3 and 0 in counts, counts


def test_signatures_with_data_dependent_sizes_run_alone_with_the_same_answers(lisa_export):
    """``text`` answers argument spans (an axis per argument found) and splits words in-graph: never joined."""
    run, export = lisa_export
    bodies = [{"signature_name": "text", "instances": [t]}
              for t in ("The cat sat.", "He said she left and came back.", "Hello!", "It rained.")]
    service = _compare(export.parent, bodies, bodies[0])
    assert service.batcher.joined_calls == 0 and service.batcher.model_calls == 1 + len(bodies)


def test_token_budget_and_batch_size_bound_each_call(tiny_model_base):
    parameters = BatchingParameters(max_batch_size=4, batch_timeout_micros=300_000, max_batch_tokens=12,
                                    num_batch_threads=1)
    service = _service(tiny_model_base, parameters)
    widths = []
    run = service.batcher._run
    service.batcher._run = lambda signature, arrays: widths.append(arrays["tokens"].shape) or run(signature, arrays)
    try:
        service.predict(MODEL_NAME, None, json.dumps({"instances": [["a", "b"]]}).encode())
        bodies = [{"instances": [["w"] * (1 + i % 5)]} for i in range(10)]
        answers = _concurrently(service, bodies)
    finally:
        service.versions.stop()
    assert [a["predictions"][0]["length"] for a in answers] == [1 + i % 5 for i in range(10)]
    joined = widths[2:]
    assert all(rows <= 4 and rows * width <= 12 for rows, width in joined), joined
    assert len(joined) < 10


def test_a_lone_request_does_not_wait_for_company(tiny_model_base):
    """With no other request in the server, a batch runs at once instead of waiting out the timeout;
    concurrent requests still wait for each other and are joined."""
    parameters = BatchingParameters(max_batch_size=8, batch_timeout_micros=5_000_000, max_batch_tokens=1024,
                                    num_batch_threads=1)
    service = _service(tiny_model_base, parameters)
    waits = []
    wait = service.batcher._lock.wait
    service.batcher._lock.wait = lambda timeout=None: waits.append(timeout) or wait(timeout)
    try:
        body = json.dumps({"instances": [["a", "b"]]}).encode()
        service.predict(MODEL_NAME, None, body)  # the probe
        for _ in range(3):
            service.predict(MODEL_NAME, None, body)
        assert waits == []
        joined_before = service.batcher.joined_calls
        _concurrently(service, [{"instances": [["w"] * (1 + i)]} for i in range(4)])
    finally:
        service.versions.stop()
    assert waits and service.batcher.joined_calls > joined_before


def test_batching_parameters_file(tmp_path):
    path = tmp_path / "batching.txt"
    path.write_text("max_batch_size { value: 16 }\nbatch_timeout_micros { value: 500 }\n"
                    "num_batch_threads { value: 2 }\nmax_batch_tokens { value: 2048 }\n")
    assert read_batching_parameters(path) == BatchingParameters(16, 500, 2048, 2)
    path.write_text("max_batch_sizes { value: 16 }\n")
    with pytest.raises(ValueError, match="max_batch_sizes"):
        read_batching_parameters(path)
    path.write_text("max_batch_size { value: 0 }\n")
    with pytest.raises(ValueError, match="max_batch_size is 0"):
        read_batching_parameters(path)


def test_pad_to_width_pads_heads_with_minus_one():
    from export.batching import pad_to_width

    padded = pad_to_width({"tokens": np.array([[b"a"]], dtype=object), "parse_heads": np.array([[0]], np.int32),
                           "predicate_index": np.array([0], np.int32)}, 3)
    assert padded["tokens"].tolist() == [[b"a", b"", b""]]
    assert padded["parse_heads"].tolist() == [[0, -1, -1]]
    assert padded["predicate_index"].tolist() == [0]


def _refusing(service: PredictionService, release: threading.Event = None) -> PredictionService:
    """``service`` with a model that refuses, as the SRL exports do, a request without tokens (and any
    holding the token ``refused``); a sentence holding ``hold`` waits for ``release`` in the model."""
    from export.serving_codec import BadRequest

    run = service.batcher._run

    def model(signature, arrays):
        tokens = arrays["tokens"].ravel().tolist()
        if arrays["tokens"].shape[1] == 0 or b"refused" in tokens:
            raise BadRequest("signature 'serving_default' refused the inputs: no tokens")
        if b"hold" in tokens:
            release.wait(30)
        return run(signature, arrays)

    service.batcher._run = model
    return service


def test_a_first_request_the_model_refuses_does_not_stop_batching(tiny_model_base):
    """The probe that decides whether a signature can be batched failed on a refused first request and
    stayed "probing": every later request ran alone until restart."""
    for first in ({"instances": [{"tokens": []}]}, {"instances": [["refused"]]}):
        service = _refusing(_service(tiny_model_base, JOIN_ALL))
        try:
            with pytest.raises(Exception, match="refused the inputs"):
                service.predict(MODEL_NAME, None, json.dumps(first).encode())
            service.predict(MODEL_NAME, None, json.dumps({"instances": [["warm", "up"]]}).encode())  # the probe
            answers = _concurrently(service, [{"instances": [["w"] * (1 + i)]} for i in range(6)])
        finally:
            service.versions.stop()
        assert [a["predictions"][0]["length"] for a in answers] == [1, 2, 3, 4, 5, 6], first
        assert service.batcher.joined_calls >= 1, first


def test_a_request_without_tokens_gets_the_same_error_joined_or_alone(tiny_model_base):
    """Padded into a joined batch, a zero-width request ran on padding and was answered 200 with empty
    outputs; alone the model refuses it. A request held in the model (the one model call allowed at a
    time) makes the others wait in one batch, so the zero-width one is offered to it for sure."""
    bodies = [{"instances": [["w"] * (1 + i % 3)]} for i in range(5)] + [{"instances": [{"tokens": []}]}]
    release = threading.Event()
    service = _refusing(_service(tiny_model_base, JOIN_ALL), release)
    calls = []
    model = service.batcher._run
    service.batcher._run = lambda signature, arrays: calls.append(arrays["tokens"].shape) or model(signature, arrays)
    try:
        service.predict(MODEL_NAME, None, json.dumps({"instances": [["warm", "up"]]}).encode())  # the probe
        alone = [_concurrently(service, [body])[0] for body in bodies]
        held = threading.Thread(target=service.predict, args=(MODEL_NAME, None, b'{"instances": [["hold"]]}'))
        held.start()
        while service.batcher._in_flight < 1:
            time.sleep(0.01)
        before = len(calls)
        joined = [None] * len(bodies)
        waiting = threading.Thread(target=lambda: joined.__setitem__(slice(None), _concurrently(service, bodies)))
        waiting.start()
        while service.batcher._in_flight < 1 + len(bodies):
            time.sleep(0.01)
        time.sleep(2 * JOIN_ALL.batch_timeout_micros / 1e6)  # the batch closes while the model is held
        release.set()
        held.join(30)
        waiting.join(60)
    finally:
        release.set()
        service.versions.stop()
    assert alone[-1] == "BadRequest: signature 'serving_default' refused the inputs: no tokens"
    assert joined == alone
    assert (len(bodies) - 1, 3) in calls[before:]  # the five others were joined in one call
