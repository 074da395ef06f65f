"""Where a warm ``predict`` spends its time, against the compiled network alone, on the same sentences.

For each model (``--model``: a packaged model such as ``models/srl``, a run directory or a ``.keras``
file; several may be given), on the first ``--sentences`` sentences of PropBank-EWT test (gold tokens,
and the CoNLL-U ``# text`` line of each as raw text), after one untimed call of each:

* **network**: the compiled labelling step alone on pre-built batches (the method of
  :func:`benchmarks.labelling_speed.network_rate`, token budget 4096): the reference;
* **predict(tokens=)** and **predict(texts)** through ``lisa_tf.load(MODEL)`` as a user gets it (a
  package with a built export labels through it: :class:`~lisa_tf.labelling.predictor.ExportPredictor`),
  and through the ``.keras`` model (``prefer_export=False``);

each call split into its phases by timing the library's functions as it runs:

* *prepare*: splitting and tokenising the text, or checking the given tokens
  (:func:`lisa_tf.labelling.predictor.prepare`);
* *network*: the model's part: for an export, its signatures' calls with the packing of rows into
  padded batches and the copy of each output to numpy (:meth:`ExportPredictor._run`); for the ``.keras``
  model, :func:`lisa_tf.labelling.batches.label_sentences` (batching, the compiled step, decoding);
* *frames*: each sentence's frames with their senses, meanings and descriptions
  (:func:`lisa_tf.labelling.predictor.frame`);
* *other*: what is left (the tags back to spans, the rows cut to their sentences).

Every rate counts the gold tokens. A timed figure is the fastest of ``--repeats`` passes; its phases
are those of that pass. Prints a table per model and writes ``benchmarks/out/warm_path.json``.

Run: ``PYTHONPATH=. python benchmarks/warm_path.py --model models/srl --model models/srl-fast``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import json
import os
import pathlib
import platform
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.labelling_speed import DATA, network_rate  # noqa: E402
from benchmarks.raw_text_srl import texts_of  # noqa: E402
from data_pipeline.splits import read_split  # noqa: E402

OUT = ROOT / "benchmarks" / "out" / "warm_path.json"
PHASES = ("prepare", "network", "frames", "other")


class PhaseClock:
    """Seconds spent in wrapped functions, by phase, while :meth:`wrapping` is active."""

    def __init__(self):
        self.seconds = collections.Counter()

    def _timed(self, function, phase: str):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - started
        return wrapper

    def _timed_generator(self, function, phase: str):
        """A generator function whose every step (not the consumer's work between steps) counts."""
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            items = function(*args, **kwargs)
            while True:
                started = time.perf_counter()
                try:
                    item = next(items)
                except StopIteration:
                    return
                finally:
                    self.seconds[phase] += time.perf_counter() - started
                yield item
        return wrapper

    @contextlib.contextmanager
    def wrapping(self):
        from lisa_tf.labelling import batches, predictor

        originals = [(predictor, "prepare", predictor.prepare), (predictor, "frame", predictor.frame),
                     (predictor.ExportPredictor, "_run", predictor.ExportPredictor._run),
                     (batches, "label_sentences", batches.label_sentences)]
        predictor.prepare = self._timed(predictor.prepare, "prepare")
        predictor.frame = self._timed(predictor.frame, "frames")
        predictor.ExportPredictor._run = self._timed_generator(predictor.ExportPredictor._run, "network")
        batches.label_sentences = self._timed(batches.label_sentences, "network")
        try:
            yield self
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)


def profile(run, tokens: int, repeats: int) -> dict:
    """The fastest of ``repeats`` timed ``run()`` calls (after an untimed one), with its phases."""
    run()
    best = None
    for _ in range(repeats):
        clock = PhaseClock()
        with clock.wrapping():
            started = time.perf_counter()
            run()
            total = time.perf_counter() - started
        if best is None or total < best["seconds"]:
            phases = {k: clock.seconds[k] for k in PHASES[:-1]}
            phases["other"] = max(total - sum(phases.values()), 0.0)
            best = {"seconds": total, "phases": phases}
    return {"tokens_per_s": round(tokens / best["seconds"]), "seconds": round(best["seconds"], 6),
            "phases_s": {k: round(v, 6) for k, v in best["phases"].items()}}


def measure(model_path: str, count: int, repeats: int) -> dict:
    import lisa_tf

    gold = read_split(str(DATA / "test.gold_conll.gz"), "conll12", str(DATA / "test.conllu.gz"), count)
    texts = texts_of(DATA / "test.conllu.gz")[: len(gold)]
    words = [list(s.words) for s in gold]
    tokens = sum(map(len, words))
    keras_predictor = lisa_tf.load(model_path, prefer_export=False)
    user_predictor = lisa_tf.load(model_path)
    record = {"model": model_path, "sentences": len(gold), "tokens": tokens,
              "user_path": type(user_predictor).__name__}
    print(f"{model_path}: {len(gold)} sentences, {tokens} tokens; load() gives {record['user_path']}", flush=True)
    record["network"] = round(network_rate(keras_predictor.model, gold, tokens, repeats))
    paths = {"load().predict(tokens=)": lambda: user_predictor.predict(tokens=words),
             "load().predict(texts)": lambda: user_predictor.predict(texts),
             ".keras predict(tokens=)": lambda: keras_predictor.predict(tokens=words),
             ".keras predict(texts)": lambda: keras_predictor.predict(texts)}
    record["paths"] = {}
    for name, run in paths.items():
        result = profile(run, tokens, repeats)
        result["ratio_to_network"] = round(result["tokens_per_s"] / record["network"], 2)
        record["paths"][name] = result
        print(f"  {name}: {result['tokens_per_s']:,} tokens/s (x {result['ratio_to_network']})", flush=True)
    return record


def print_table(record: dict) -> None:
    print(f"\n{record['model']} ({record['sentences']} sentences, {record['tokens']} tokens; "
          f"load() labels through {record['user_path']})")
    print("| path | tokens/s | × network | " + " | ".join(f"{p} (s)" for p in PHASES) + " |")
    print("|---|---:|---:|" + "---:|" * len(PHASES))
    print(f"| network alone (pre-built batches, compiled) | {record['network']:,} | 1.00 |" + " |" * len(PHASES))
    for name, result in record["paths"].items():
        phases = " | ".join(f"{result['phases_s'][p]:.3f}" for p in PHASES)
        print(f"| {name} | {result['tokens_per_s']:,} | {result['ratio_to_network']:.2f} | {phases} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="packaged model, run directory or .keras file "
                        "(default: models/srl and models/srl-fast)")
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    records = [measure(model, args.sentences, args.repeats)
               for model in args.model or [str(ROOT / "models" / "srl"), str(ROOT / "models" / "srl-fast")]]
    for record in records:
        print_table(record)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                           "load_average": os.getloadavg()},
                               "models": records}, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
