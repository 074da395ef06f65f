"""What an oversize request costs the server before it is refused: seconds to the answer and the
server's RSS growth, for requests that are small on the wire but large once decoded.

Starts ``python -m lisa_tf serve`` (REST and gRPC on free ports, with ``--enable_batching`` when asked)
over ``MODEL_BASE_PATH`` as a separate process and sends, one at a time on fresh connections:

- ``rest_instances``: ``{"instances": [["a"]] x N}`` (N = ``--instances``, 1,048,551 by default: a
  6.3 MB body under the 8 MiB size limit, each instance a one-token sentence, far over the
  sentences-per-request limit);
- ``grpc_declared_shape``: an 82-byte ``PredictRequest`` to ``with_parse`` whose ``parse_heads``
  ``TensorProto`` declares shape ``[D, D]`` (D = ``--declared``, 20,000 by default) and holds one value
  (``tf.make_ndarray`` would make it D² int32s);
- ``grpc_huge_shape``: the same with ``[5 D, 5 D]``;
- ``grpc_declared_strings``: ``tokens`` declared ``[D, D]`` with one string (D² Python objects);
- ``grpc_bad_dtype``: a ``TensorProto`` with dtype enum 999;
- ``rest_all_predicates`` (``--predicates``): ``S`` sentences each of ``W`` copies of ``said`` (every
  token a predicate: ``[S, W, W]`` outputs), with ``S x W`` inside the tokens-per-request limit;
- ``rest_ordinary``: one ordinary sentence, for comparison;
- when the model has a ``text`` signature, raw texts of about ``--text_bytes`` (default just under the
  8 MiB body and message limits) over REST and gRPC: ``*_text_sentences`` (``"Go. "`` repeated: two
  million sentences at the default size), ``*_text_padded`` (256 sentences, each padded with spaces to
  fill the size), ``rest_text_one_sentence`` (``"a "`` repeated over an eighth of the size, one
  sentence), ``rest_text_padded_inside`` (256 padded sentences in ``--inside_bytes``, default inside
  the shipped models' limits: a request that is answered, and whose padding the in-graph split once
  copied per sentence and per token), ``rest_text_tokens_inside`` (one paragraph of ``--inside_tokens``
  sentences x tokens, 52 x 48 by default, as many as the shipped models' limits allow, padded to
  ``--inside_bytes``: the earlier split copied the paragraph once per token), and ``rest_text_good``,
  one short paragraph alone;
- ``rest_long_tokens`` and ``grpc_long_tokens`` (``--long_tokens``, ``SxW:C``, default ``1x159:50000``):
  ``S`` sentences of ``W`` tokens of ``"x." * (C / 2)`` (7.95 MB at the default, inside the byte,
  sentence and token limits): a contextual encoder cut each such token into ``C`` word pieces before
  any limit counted them (8 million pieces, gigabytes, at the default); ``rest_long_window_tokens``
  (``--window_tokens``, default ``52x48:140``): as many tokens as the token and token-pair limits allow,
  each as long as the longest training token and each character a word piece, 52 full 512-piece windows
  of the encoder; and ``rest_long_tokens_inside`` (``--inside_long_tokens``, default ``14x4:140``), the
  costliest such request the shipped ``srl``'s limits accept (14 full windows, within its 7,500 word
  pieces per request).

For each: the status, seconds from sending to the answer, and the server's RSS growth (its peak
resident set during the request, ``VmHWM`` reset through ``/proc/PID/clear_refs`` before each
request, minus its resident set before). While each ``text`` request is under way a good one (the
short paragraph, over REST; for the long-token requests, one ordinary sentence to ``serving_default``)
is sent 20 ms after it: ``good_seconds`` is how long that one waited, and
``good_overlapped`` whether it was sent before the big one was answered. The run stops by itself and
stops the server at the end.

Prints a table and writes ``benchmarks/out/oversize_requests.json``.
Run: ``PYTHONPATH=. python benchmarks/oversize_requests.py [MODEL_BASE_PATH] [--predicates 15x159]``
(``MODEL_BASE_PATH``: a directory of numeric SavedModel versions, or a packaged model such as
``models/srl-fast``, which ``serve`` serves through its export cache; default: the shipped model,
``models/srl``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import platform
import sys
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.serving_rest import _start_server, _stop  # noqa: E402

ORDINARY = "The company said it would buy the remaining shares by the end of next year .".split()
GOOD_TEXT = "The company said it would buy the shares. It rained."
#: JSON and protobuf framing around a text, kept free under the size limits.
_FRAMING = 4096


def _status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/{pid}/status has no {field}")


def _reset_peak(pid: int) -> bool:
    """Reset the process's peak RSS (``VmHWM``) to its current RSS; False where Linux does not allow it."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _measured(pid: int, send, good=None) -> dict:
    """Run ``send() -> (status, answer bytes)``; its status, seconds and the server's RSS growth, and
    with ``good`` (a sender too) the status and seconds of that request sent 20 ms after ``send``'s."""
    time.sleep(0.2)  # let the previous request's memory settle
    exact = _reset_peak(pid)
    before = _status_kb(pid, "VmRSS")
    meanwhile: dict = {}

    def send_good() -> None:
        time.sleep(0.02)
        meanwhile["sent"] = time.perf_counter()
        status, _ = good()
        meanwhile.update(status=status, seconds=time.perf_counter() - meanwhile["sent"])

    helper = threading.Thread(target=send_good, daemon=True) if good is not None else None
    started = time.perf_counter()
    if helper is not None:
        helper.start()
    status, answer = send()
    finished = time.perf_counter()
    if helper is not None:
        helper.join()
    peak = _status_kb(pid, "VmHWM")
    message = answer[:300].decode("utf-8", "replace")
    row = {"status": status, "seconds": round(finished - started, 3),
           "rss_growth_mb": round(max(peak - before, 0) / 1024, 1), "peak_exact": exact, "answer_bytes": len(answer),
           "answer": message}
    if good is not None:
        row.update(good_status=meanwhile["status"], good_seconds=round(meanwhile["seconds"], 3),
                   good_overlapped=meanwhile["sent"] < finished)
    return row


def _rest(host: str, port: int, path: str, body: bytes):
    def send() -> tuple:
        connection = http.client.HTTPConnection(host, port, timeout=600)
        try:
            connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()
    return send


def _grpc(target: str, model_name: str, inputs: dict, signature_name: str = ""):
    """A sender of one ``PredictRequest`` with ``inputs`` (name -> ``TensorProto``) and its size in bytes."""
    from tensorflow_serving.apis import predict_pb2

    request = predict_pb2.PredictRequest()
    request.model_spec.name = model_name
    request.model_spec.signature_name = signature_name
    for name, tensor in inputs.items():
        request.inputs[name].CopyFrom(tensor)

    def send() -> tuple:
        import grpc
        from tensorflow_serving.apis import prediction_service_pb2_grpc

        with grpc.insecure_channel(target) as channel:
            stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
            try:
                stub.Predict(request, timeout=600)
                return "OK", b""
            except grpc.RpcError as error:
                return error.code().name, (error.details() or "").encode("utf-8")
    return send, len(request.SerializeToString())


def _tensor(dtype: int, shape: list, strings=(), ints=()):
    """A ``TensorProto`` built field by field: nothing makes its values agree with its shape."""
    from tensorflow.core.framework import tensor_pb2, tensor_shape_pb2

    tensor = tensor_pb2.TensorProto(dtype=dtype, tensor_shape=tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in shape]))
    tensor.string_val.extend(strings)
    tensor.int_val.extend(ints)
    return tensor


def _padded(size: int) -> str:
    """256 short sentences, each padded with spaces: about ``size`` characters."""
    return ("Hello there." + " " * max(size // 256 - len("Hello there."), 1)) * 256


def _texts(size: int, inside: int, inside_tokens: str) -> dict:
    """The raw texts of the ``text`` requests, each of about ``size`` bytes of UTF-8 (``inside`` for the
    padded ones inside the limits; ``inside_tokens``: ``SxW``, sentences x tokens of the last)."""
    sentences, width = (int(v) for v in inside_tokens.split("x"))
    paragraph = " ".join([" ".join(["word"] * (width - 1)) + "."] * sentences)
    return {"text_sentences": "Go. " * (size // 4), "text_padded": _padded(size), "text_one_sentence": "a " * (size // 16),
            "text_padded_inside": _padded(inside), "text_tokens_inside": paragraph.ljust(inside)}


def _text_sends(host: str, port: int, path: str, target: str, model_name: str, args: argparse.Namespace) -> list:
    """``(name, bytes, sender)`` of the ``text`` requests over REST and gRPC."""
    import numpy as np
    import tensorflow as tf

    sends = []
    for name, text in _texts(args.text_bytes, args.inside_bytes, args.inside_tokens).items():
        body = json.dumps({"signature_name": "text", "instances": [text]}, separators=(",", ":")).encode()
        sends.append((f"rest_{name}", len(body), _rest(host, port, path, body)))
        if name in ("text_sentences", "text_padded"):
            proto = tf.make_tensor_proto(np.array([text.encode()], dtype=object))
            send, request_bytes = _grpc(target, model_name, {"text": proto}, "text")
            sends.append((f"grpc_{name}", request_bytes, send))
    return sends


def _long_token_sends(host: str, port: int, path: str, target: str, model_name: str,
                      args: argparse.Namespace) -> list:
    """``(name, bytes, sender)`` of the requests whose tokens are long runs of one-character word pieces."""
    import numpy as np
    import tensorflow as tf

    sends = []
    for name, shape in (("long_tokens", args.long_tokens), ("long_window_tokens", args.window_tokens),
                        ("long_tokens_inside", args.inside_long_tokens)):
        sentences, rest = shape.split("x")
        width, characters = (int(v) for v in rest.split(":"))
        token = "x." * (int(characters) // 2)
        rows = [[token] * width] * int(sentences)
        body = json.dumps({"instances": rows}, separators=(",", ":")).encode()
        sends.append((f"rest_{name}", len(body), _rest(host, port, path, body)))
        if name == "long_tokens":
            send, request_bytes = _grpc(target, model_name, {"tokens": tf.make_tensor_proto(
                np.array(rows, dtype=object).astype(bytes))})
            sends.append((f"grpc_{name}", request_bytes, send))
    return sends


def run(args: argparse.Namespace) -> dict:
    """Start the server, send each request and measure it; returns the result record."""
    base_path = pathlib.Path(args.model_base_path).resolve()
    model_name = args.model_name or base_path.name
    path = f"/v1/models/{model_name}:predict"
    flags = ["--port", "0"] + (["--enable_batching"] if args.enable_batching else [])
    process, host, port, target = _start_server(model_name, base_path, args.start_timeout, *flags)
    rows = []
    try:
        from tensorflow.core.framework import types_pb2

        sends = []
        body = json.dumps({"instances": [["a"]] * args.instances}, separators=(",", ":")).encode()
        sends.append(("rest_instances", len(body), _rest(host, port, path, body)))
        one_token = _tensor(types_pb2.DT_STRING, [1, 1], [b"a"])
        for name, side in (("grpc_declared_shape", args.declared), ("grpc_huge_shape", 5 * args.declared)):
            heads = _tensor(types_pb2.DT_INT32, [side, side], ints=[0])
            send, size = _grpc(target, model_name, {"tokens": one_token, "parse_heads": heads}, "with_parse")
            sends.append((name, size, send))
        strings = _tensor(types_pb2.DT_STRING, [args.declared, args.declared], [b"a"])
        send, size = _grpc(target, model_name, {"tokens": strings})
        sends.append(("grpc_declared_strings", size, send))
        send, size = _grpc(target, model_name, {"tokens": _tensor(999, [1, 1], [b"a"])})
        sends.append(("grpc_bad_dtype", size, send))
        if args.predicates:
            sentences, width = (int(v) for v in args.predicates.split("x"))
            body = json.dumps({"instances": [["said"] * width] * sentences}).encode()
            sends.append(("rest_all_predicates", len(body), _rest(host, port, path, body)))
        body = json.dumps({"instances": [ORDINARY]}).encode()
        ordinary = _rest(host, port, path, body)
        ordinary()  # warm up the model's first call
        sends.append(("rest_ordinary", len(body), ordinary))
        sends += _long_token_sends(host, port, path, target, model_name, args)
        good = None
        with urllib.request.urlopen(f"http://{host}:{port}/v1/models/{model_name}/metadata", timeout=60) as answer:
            signatures = json.load(answer)["metadata"]["signature_def"]["signature_def"]
        if "text" in signatures:
            body = json.dumps({"signature_name": "text", "instances": [GOOD_TEXT]}).encode()
            good = _rest(host, port, path, body)
            good()  # warm up the signature's first call
            sends += _text_sends(host, port, path, target, model_name, args)
            sends.append(("rest_text_good", len(body), good))
        for name, size, send in sends:
            text = "_text_" in name and name != "rest_text_good"
            meanwhile_sender = good if text else ordinary if "_long_tokens" in name else None
            row = {"request": name, "request_bytes": size, **_measured(process.pid, send, meanwhile_sender)}
            rows.append(row)
            meanwhile = (f"  good meanwhile: {row['good_status']} in {row['good_seconds']:.3f} s"
                         f"{'' if row['good_overlapped'] else ' (after)'}") if meanwhile_sender else ""
            print(f"{name:22} {size:>10} B  {str(row['status']):>18}  {row['seconds']:>8.3f} s  "
                  f"{row['rss_growth_mb']:>8.1f} MB{meanwhile}", flush=True)
    finally:
        _stop(process)
    return {"model_base_path": str(base_path), "model_name": model_name,
            "enable_batching": args.enable_batching, "text_bytes": args.text_bytes, "inside_bytes": args.inside_bytes,
            "inside_tokens": args.inside_tokens, "long_tokens": args.long_tokens,
            "window_tokens": args.window_tokens, "inside_long_tokens": args.inside_long_tokens, "rows": rows,
            "cpu_count": os.cpu_count(), "python": platform.python_version()}


def main(argv=None) -> int:
    """Parse arguments, run, print the table and write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_base_path", nargs="?", default=str(ROOT / "models" / "srl"),
                        help="directory of numeric SavedModel version directories, or a packaged model (default: "
                             "the shipped model)")
    parser.add_argument("--model_name", default=None, help="model name (default: the base path's folder name)")
    parser.add_argument("--instances", type=int, default=1_048_551, help="one-token instances in the REST body")
    parser.add_argument("--declared", type=int, default=20_000, help="side D of the declared [D, D] gRPC tensor")
    parser.add_argument("--predicates", default=None,
                        help="SxW: also send S sentences of W predicates each (e.g. 15x159)")
    parser.add_argument("--text_bytes", type=int, default=8 * 1024 * 1024 - _FRAMING,
                        help="size of the raw texts sent to the text signature (default: just under 8 MiB)")
    parser.add_argument("--inside_bytes", type=int, default=150_000,
                        help="size of the padded text inside the limits (default: under the shipped models' 160,000 "
                             "characters)")
    parser.add_argument("--inside_tokens", default="52x48",
                        help="SxW: sentences x tokens of the paragraph inside the limits (default: as many tokens as "
                             "the shipped models' token and token-pair limits allow)")
    parser.add_argument("--long_tokens", default="1x159:50000",
                        help="SxW:C: sentences x tokens of C characters each, the long-token request (default: "
                             "159 tokens of 50,000 characters, 7.95 MB)")
    parser.add_argument("--window_tokens", default="52x48:140",
                        help="SxW:C: the long-token request inside the token and character limits (default: as "
                             "many tokens as the shipped models' limits allow, each of 140 characters, their "
                             "longest training token: 52 full windows of the encoder)")
    parser.add_argument("--inside_long_tokens", default="14x4:140",
                        help="SxW:C: the long-token request inside every limit (default: 14 full windows, the "
                             "most the shipped srl's word-pieces limit accepts)")
    parser.add_argument("--enable_batching", action="store_true", help="start the server with --enable_batching")
    parser.add_argument("--start_timeout", type=float, default=300.0, help="seconds to wait for the server")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "oversize_requests.json"))
    args = parser.parse_args(argv)

    print(f"{'request':22} {'size':>12}  {'answer':>18}  {'time':>10}  {'RSS growth':>11}", flush=True)
    result = run(args)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
