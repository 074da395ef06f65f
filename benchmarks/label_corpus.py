"""Corpus labelling throughput: ``label-corpus`` (Apache Beam, DirectRunner) against ``predict --input``.

On the raw text of PropBank-EWT test (the CoNLL-U ``# text`` line of each sentence, one per line,
split over ``--files`` files), in the same run and with the same model:

* **predict --input**: ``python -m lisa_tf predict --model MODEL --input FILE --format jsonl`` per file,
  one process after the other;
* **label-corpus, N workers** for each N of ``--workers``: ``python -m lisa_tf label-corpus`` over all
  files, ``--direct_num_workers N --direct_running_mode multi_processing`` (N = 1: one worker process).

Every rate is the tokens written (the records' tokens) per second of wall time of the whole command,
start-up and model loading included, as a user waits for it. It also checks that ``label-corpus``
wrote the same frames as ``predict`` (record for record, by file and line: tokens, predicates, roles,
spans), and reports the largest difference of an argument's score (a float32 mean, whose last digit can
move with the batch a sentence is in). Prints a table and writes
``benchmarks/out/label_corpus.json``.

Run: ``PYTHONPATH=. python benchmarks/label_corpus.py [--model srl] [--sentences N] [--workers 1 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.raw_text_srl import texts_of  # noqa: E402

TEST = ROOT / "data" / "propbank-ewt" / "test.conllu.gz"


def _command(args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "lisa_tf", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"python -m lisa_tf {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done


def without_scores(records: dict) -> dict:
    """The records with each argument's score taken out (:func:`score_difference` compares those): a
    score is a mean of float32 probabilities, whose last digit can move with the other sentences of a
    batch; the frames (tokens, predicates, roles, spans, tags, heads) do not."""
    stripped = {}
    for key, rows in records.items():
        stripped[key] = [{**r, "predicates": [{**p, "arguments": [{k: v for k, v in a.items() if k != "score"}
                                                                  for a in p["arguments"]]}
                                              for p in r["predicates"]]} for r in rows]
    return stripped


def score_difference(first: dict, second: dict) -> float:
    """The largest difference between the two records' argument scores, position by position."""
    return max([abs(a["score"] - b["score"]) for key in first for r, q in zip(first[key], second[key])
                for p, o in zip(r["predicates"], q["predicates"]) for a, b in zip(p["arguments"], o["arguments"])],
               default=0.0)


def read_records(paths) -> dict:
    """``{(file name, line): [record without "source", ...]}`` from JSONL files."""
    records: dict = {}
    for path in paths:
        for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            source = pathlib.Path(record.pop("source")).name if "source" in record else None
            records.setdefault((source, record["line"]), []).append(record)
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="srl")
    parser.add_argument("--sentences", type=int, default=0, help="the first N test sentences (0: all)")
    parser.add_argument("--files", type=int, default=1, help="split the text over N files (predict reads each in its own process)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "label_corpus.json"))
    args = parser.parse_args(argv)

    texts = texts_of(TEST)[: args.sentences or None]
    work = pathlib.Path(tempfile.mkdtemp(prefix="label_corpus_"))
    files = []
    per_file = -(-len(texts) // args.files)
    for k in range(args.files):
        path = work / f"part{k}.txt"
        path.write_text("".join(t + "\n" for t in texts[k * per_file:(k + 1) * per_file]), encoding="utf-8")
        files.append(path)

    rows, results = [], {"model": args.model, "sentences": len(texts), "files": args.files, "paths": {}}
    predicted = {}
    seconds = 0.0
    for path in files:
        out = work / f"{path.stem}.predict.jsonl"
        took, _ = _command(["predict", "--model", args.model, "--input", str(path), "--format", "jsonl",
                            "--out", str(out)])
        seconds += took
        for (_, line), records in read_records([out]).items():
            predicted[(path.name, line)] = records
    tokens = sum(len(r["tokens"]) for records in predicted.values() for r in records)
    results["paths"]["predict_input"] = {"seconds": round(seconds, 2), "tokens": tokens,
                                         "tokens_per_s": round(tokens / seconds, 1)}
    rows.append(("predict --input (one process per file)", seconds, tokens))
    for workers in args.workers:
        prefix = work / f"workers{workers}" / "frames"
        took, done = _command(["label-corpus", "--model", args.model, "--input", str(work / "part*.txt"),
                               "--output", str(prefix), "--direct_num_workers", str(workers),
                               "--direct_running_mode", "multi_processing"])
        labelled = read_records(sorted(prefix.parent.glob("frames-0*-of-*.jsonl")))
        frames, expected = without_scores(labelled), without_scores(predicted)
        if frames != expected:
            differ = sorted(set(frames) ^ set(expected)) or [k for k in expected if frames[k] != expected[k]]
            raise SystemExit(f"label-corpus with {workers} workers differs from predict --input at {differ[:5]}")
        results[f"largest_score_difference_{workers}_workers"] = round(score_difference(labelled, predicted), 5)
        tokens = sum(len(r["tokens"]) for records in labelled.values() for r in records)
        results["paths"][f"label_corpus_{workers}_workers"] = {
            "seconds": round(took, 2), "tokens": tokens, "tokens_per_s": round(tokens / took, 1),
            "counters": done.stderr.strip().splitlines()[-8:]}
        rows.append((f"label-corpus, DirectRunner, {workers} worker{'s' * (workers > 1)}", took, tokens))
    results["same_frames_as_predict"] = True

    base = rows[0][2] / rows[0][1]
    table = ["| path | wall time (s) | tokens | tokens/s | × predict --input |", "|---|---:|---:|---:|---:|"]
    table += [f"| {name} | {took:.1f} | {tokens:,} | {tokens / took:.0f} | {tokens / took / base:.2f} |"
              for name, took, tokens in rows]
    print("\n".join(table))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
