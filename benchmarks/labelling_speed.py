"""Labelling speed of every path from text to frames, in one run, on the same UD English-EWT test sentences.

For each model given (``--model``: a run directory, a ``.keras`` file or a packaged model such as
``models/srl``; several may be given, e.g. the GloVe LISA and a LISA + MiniLM run), on the first
``--sentences`` sentences of PropBank-EWT test (gold tokens, and the CoNLL-U ``# text`` line of each as
raw text), it measures in this order:

* **network**: the model alone on pre-built batches (:func:`data_pipeline.dataset.inference_batches`,
  token budget 4096), the compiled preprocessor + scores + decoding of ``label_sentences``; the
  reference every other path is divided by;
* **keras tokens / keras text**: ``lisa_tf.load(MODEL).predict(tokens=...)`` and ``.predict(texts)``;
* **export tokens / export text**: the same through the model's SavedModel export, written here from
  the loaded model (with the warm-up records of :mod:`export.warmup`);
* **one sentence**: p50/p95 of ``predict(text)`` on one sentence at a time (``--single`` sentences),
  through the ``.keras`` model and the export;
* **predict --input**: ``python -m lisa_tf predict --model MODEL --input FILE --format jsonl`` on the raw
  text (one sentence per line), as a new process: the wall time, and the rate with its start-up taken
  out (the same command on the first sentence only, subtracted);
* **cold start**: ``python -m lisa_tf predict --model MODEL "sentence"`` against ``python -c "import
  tensorflow"`` (median of ``--repeats`` runs each);
* **server**: ``lisa_tf serve`` on the export with ``--enable_batching`` and gRPC: the first request to
  each signature against the median of the next five (other sentences), with the warm-up records
  replayed at load and, on a copy of the export without them, without; then ``--clients`` clients each
  sending one sentence per request: REST ``text`` (raw), REST ``serving_default`` (tokens, joined by the
  batcher) and gRPC ``serving_default``; and REST ``text`` with 8 sentences a request.

Every rate counts the sentences' gold tokens, so all paths are divided by the same number (the raw
text's own tokenisation differs from gold on ~0.6 % of tokens). Rates are the best of ``--repeats``
passes after a warm-up pass. Prints a table per model and writes ``benchmarks/out/labelling_speed.json``.

Run: ``PYTHONPATH=. python benchmarks/labelling_speed.py --model models/srl [--model RUN ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import shutil
import tempfile
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.raw_text_srl import texts_of  # noqa: E402
from benchmarks.serving_rest import _Client, _in_threads, _start_server, _stop  # noqa: E402
from data_pipeline.splits import read_split  # noqa: E402
from export.warmup import WARMUP_FILE  # noqa: E402

DATA = ROOT / "data" / "propbank-ewt"
ONE_SENTENCE = "The company said it would buy the remaining shares by the end of next year."


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def _best_rate(run, tokens: int, repeats: int) -> float:
    """Tokens/s of the fastest of ``repeats`` timed calls of ``run()``, after one untimed call."""
    run()
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return tokens / best


def network_rate(model, sentences, tokens: int, repeats: int) -> float:
    """The compiled labelling step of :func:`lisa_tf.labelling.batches.label_sentences` on pre-built batches."""
    from data_pipeline.dataset import inference_batches
    from lisa_tf.labelling.batches import _label_batch
    from lisa_tf.labelling.compiled import compiled

    options = {}
    if getattr(model, "uses_syntax", False):
        options["inject_parse"] = False
    if getattr(model, "predicts_predicates", False):
        options["gold_predicates"] = False
    batches = list(inference_batches(sentences, model.vocabularies(), model.layout, 4096))
    label = compiled(_label_batch, [model], **options)

    def run():
        for batch in batches:
            _, decoded = label(batch)
            {k: v.numpy() for k, v in decoded.items()}

    return _best_rate(run, tokens, repeats)


def single_sentence_ms(predictor, texts) -> dict:
    predictor.predict(texts[0])
    seconds = []
    for text in texts:
        started = time.perf_counter()
        predictor.predict(text)
        seconds.append(time.perf_counter() - started)
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2)}


def _wall(command: list) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=_env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def cli_rates(model: str, texts, tokens: int, first_tokens: int, repeats: int, scratch: pathlib.Path) -> dict:
    whole, first = scratch / "texts.txt", scratch / "first.txt"
    whole.write_text("\n".join(texts) + "\n", encoding="utf-8")
    first.write_text(texts[0] + "\n", encoding="utf-8")
    predict = [sys.executable, "-m", "lisa_tf", "predict", "--model", model, "--format", "jsonl", "--input"]
    full = min(_wall(predict + [str(whole)]) for _ in range(repeats))
    start_up = min(_wall(predict + [str(first)]) for _ in range(repeats))
    cold = statistics.median(_wall([sys.executable, "-m", "lisa_tf", "predict", "--model", model, ONE_SENTENCE])
                             for _ in range(repeats))
    tensorflow = statistics.median(_wall([sys.executable, "-c", "import tensorflow"]) for _ in range(repeats))
    labelling = full - start_up  # too small to divide by on a tiny input: then the wall-clock rate stands
    return {"predict_input_wall_s": round(full, 2), "predict_input_tokens_per_s_wall": round(tokens / full),
            "predict_input_tokens_per_s": round((tokens - first_tokens) / labelling if labelling > 0.5 else tokens / full),
            "cold_start_s": round(cold, 2), "import_tensorflow_s": round(tensorflow, 2),
            "cold_start_minus_import_s": round(cold - tensorflow, 2)}


def _post(client: _Client, path: str, body: dict) -> float:
    status, seconds, payload = client.post(path, json.dumps(body).encode())
    if status != 200:
        raise SystemExit(f"the server answered {status}: {payload[:300]!r}")
    return seconds


def _instance(name: str, words: list, text: str) -> dict:
    return {"serving_default": {"tokens": words}, "sentences": {"sentences": " ".join(words)}, "text": {"text": text},
            "with_parse": {"tokens": words, "parse_heads": [0] * len(words)}, "find_predicates": {"tokens": words}}[name]


def first_requests(host: str, port: int, words, texts) -> dict:
    """Per signature: the first request's time, and the median of the next five, each with another
    sentence (a new sentence length costs a little once per shape; the same request repeated would hide that)."""
    path = "/v1/models/srl:predict"
    client = _Client(host, port)
    signatures = client.get("/v1/models/srl/metadata")["metadata"]["signature_def"]["signature_def"]
    first = {}
    for name in sorted(n for n in signatures if n in ("serving_default", "sentences", "text", "with_parse",
                                                        "find_predicates")):
        times = [_post(client, path, {"signature_name": name, "instances": [_instance(name, words[k], texts[k])]})
                 for k in range(6)]
        later = statistics.median(times[1:])
        first[name] = {"first_ms": round(times[0] * 1000, 1), "later_ms": round(later * 1000, 1),
                       "ratio": round(times[0] / later, 2)}
    client.close()
    return first


def server_rates(base: pathlib.Path, words, texts, tokens: int, clients: int) -> dict:
    """First requests without and with the warm-up records, then throughput with ``clients`` clients."""
    bare = base.parent.parent / "without_warmup" / base.name
    shutil.copytree(base, bare, ignore=shutil.ignore_patterns(WARMUP_FILE.parent.name))
    process, host, port, _ = _start_server("srl", bare, 600, "--enable_batching")
    try:
        without = first_requests(host, port, words, texts)
    finally:
        _stop(process)
    process, host, port, grpc_target = _start_server("srl", base, 600, "--enable_batching", "--port", "0")
    path = "/v1/models/srl:predict"
    try:
        rates = {"first_request": first_requests(host, port, words, texts), "first_request_without_warmup": without}
        per_request = 8
        rest_bodies = {
            "rest_text": [json.dumps({"signature_name": "text", "instances": [{"text": t}]}).encode() for t in texts],
            "rest_tokens": [json.dumps({"instances": [{"tokens": w}]}).encode() for w in words],
            "rest_text_8_per_request": [
                json.dumps({"signature_name": "text", "instances": [{"text": " ".join(texts[i:i + per_request])}]}).encode()
                for i in range(0, len(texts), per_request)],
        }
        for key, bodies in rest_bodies.items():
            rates[key] = round(tokens / _spread(bodies, clients, lambda: _rest_send(host, port, path)))
        rates["grpc_tokens"] = round(tokens / _spread(words, clients, lambda: _grpc_send(grpc_target)))
        return rates
    finally:
        _stop(process)


def _rest_send(host, port, path):
    client = _Client(host, port)

    def send(body):
        status, _, payload = client.post(path, body)
        if status != 200:
            raise SystemExit(f"the server answered {status}: {payload[:300]!r}")
    return send, client.close


def _grpc_send(target):
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    channel = grpc.insecure_channel(target)
    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)

    def send(words):
        request = predict_pb2.PredictRequest()
        request.model_spec.name = "srl"
        request.inputs["tokens"].CopyFrom(tf.make_tensor_proto([words], dtype=tf.string))
        stub.Predict(request, timeout=120)
    return send, channel.close


def _spread(items, clients: int, make_sender) -> float:
    """Wall seconds for ``clients`` threads to send every item once (each item one request)."""
    queue, lock = list(reversed(items)), threading.Lock()

    def worker():
        send, close = make_sender()
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    item = queue.pop()
                send(item)
        finally:
            close()

    return _in_threads(worker, clients)


def measure(model_path: str, count: int, single: int, clients: int, repeats: int) -> dict:
    import lisa_tf
    from export.saved_model import export_model, export_run

    gold = read_split(str(DATA / "test.gold_conll.gz"), "conll12", str(DATA / "test.conllu.gz"), count)
    texts = texts_of(DATA / "test.conllu.gz")[: len(gold)]
    words = [list(s.words) for s in gold]
    tokens = sum(map(len, words))
    keras_predictor = lisa_tf.load(model_path, prefer_export=False)
    record = {"model": model_path, "sentences": len(gold), "tokens": tokens,
              "contextual": getattr(keras_predictor.model, "contextual", None) is not None}
    print(f"{model_path}: {len(gold)} sentences, {tokens} tokens", flush=True)
    record["network"] = round(network_rate(keras_predictor.model, gold, tokens, repeats))
    record["keras_tokens"] = round(_best_rate(lambda: keras_predictor.predict(tokens=words), tokens, repeats))
    record["keras_text"] = round(_best_rate(lambda: keras_predictor.predict(texts), tokens, repeats))
    record["keras_one_sentence"] = single_sentence_ms(keras_predictor, texts[:single])
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        path, base = pathlib.Path(model_path), scratch / "export" / "srl"
        if (path / "config.json").exists():  # a run
            export_run(path, base / "1", model=keras_predictor.model)
        else:  # its limits from a packaged model's assets, if any
            assets = {name: path / "assets" / name for name in ("config.json", "vocab_info.json")
                      if (path / "assets" / name).exists()}
            export_model(keras_predictor.model, base / "1", assets)
        export_predictor = lisa_tf.load(base)
        record["export_tokens"] = round(_best_rate(lambda: export_predictor.predict(tokens=words), tokens, repeats))
        record["export_text"] = round(_best_rate(lambda: export_predictor.predict(texts), tokens, repeats))
        record["export_one_sentence"] = single_sentence_ms(export_predictor, texts[:single])
        print(f"  in-process paths done; command line and server next", flush=True)
        record.update(cli_rates(model_path, texts, tokens, len(words[0]), repeats, scratch))
        record["server"] = server_rates(base, words, texts, tokens, clients)
    rates = {k: record[k] for k in ("keras_tokens", "keras_text", "export_tokens", "export_text")}
    rates["predict_input"] = record["predict_input_tokens_per_s"]
    rates.update({k: record["server"][k] for k in ("rest_text", "rest_tokens", "grpc_tokens", "rest_text_8_per_request")})
    record["ratios_to_network"] = {k: round(v / record["network"], 2) for k, v in rates.items()}
    return record


def print_table(record: dict) -> None:
    print(f"\n{record['model']} ({record['sentences']} sentences, {record['tokens']} tokens)")
    print("| path | tokens/s | × network |\n|---|---:|---:|")
    print(f"| network alone (pre-built batches, compiled) | {record['network']:,} | 1.00 |")
    names = {"keras_tokens": "load(.keras).predict(tokens=)", "keras_text": "load(.keras).predict(texts)",
             "export_tokens": "load(export).predict(tokens=)", "export_text": "load(export).predict(texts)",
             "predict_input": "predict --input (start-up taken out)", "rest_text": "REST text, 8 clients",
             "rest_tokens": "REST tokens, 8 clients, batching", "grpc_tokens": "gRPC tokens, 8 clients, batching",
             "rest_text_8_per_request": "REST text, 8 clients, 8 sentences a request"}
    for key, name in names.items():
        value = record[key] if key in record else record["server"].get(key, record.get(f"{key}_tokens_per_s"))
        print(f"| {name} | {value:,} | {record['ratios_to_network'][key]:.2f} |")
    print(f"one sentence p50: .keras {record['keras_one_sentence']['p50_ms']} ms, export "
          f"{record['export_one_sentence']['p50_ms']} ms; cold start {record['cold_start_s']} s vs import tensorflow "
          f"{record['import_tensorflow_s']} s (+{record['cold_start_minus_import_s']} s); predict --input wall "
          f"{record['predict_input_wall_s']} s")
    for name, first in record["server"]["first_request"].items():
        bare = record["server"]["first_request_without_warmup"][name]
        print(f"first {name} request {first['first_ms']} ms, next five (other sentences) {first['later_ms']} ms "
              f"(× {first['ratio']}); without warm-up records {bare['first_ms']} ms (× {bare['ratio']})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="run directory, .keras file or packaged model "
                        "(repeatable; default models/srl)")
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--single", type=int, default=100, help="sentences labelled one at a time")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "labelling_speed.json"))
    args = parser.parse_args(argv)
    records = [measure(m, args.sentences, args.single, args.clients, args.repeats) for m in args.model or ["models/srl"]]
    for record in records:
        print_table(record)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
                               "models": records}, indent=2) + "\n")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
