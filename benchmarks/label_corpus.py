"""Corpus labelling throughput: ``label-corpus`` (Apache Beam, DirectRunner) against ``predict --input``.

On the raw text of PropBank-EWT test (the CoNLL-U ``# text`` line of each sentence, one per line,
split over ``--files`` files), in the same run and with the same model:

* **predict --input**: ``python -m lisa_tf predict --model MODEL --input FILE --format jsonl`` per file,
  one process after the other;
* **label-corpus, N workers** for each N of ``--workers``: ``python -m lisa_tf label-corpus`` over all
  files, ``--direct_num_workers N --direct_running_mode multi_processing`` (N = 1: one worker process).

Then, on a large file of ``--large-lines`` lines (default 1,200,000), every ``--real-every``-th one a
real sentence (the test text again, in order) and the others blank (a corpus that is mostly cheap to
read, so that its size, not the model, is what is measured): ``predict --input`` and ``label-corpus``
(one worker) on that same file, and ``label-corpus`` on its first tenth; the peak memory of the large
run against the tenth's says whether memory grows with the corpus.

Every rate is per second of wall time of the whole command, start-up and model loading included, as a
user waits for it: tokens written (the records' tokens) and input lines read. Each command's resident
memory (the process and its worker processes, ``/proc``) is sampled every ``--every`` seconds; the
series are plotted in ``benchmarks/out/label_corpus.png``. It also checks that ``label-corpus`` wrote
the same frames as ``predict`` (record for record, by file and line: tokens, predicates, roles, spans;
``predict`` writes an empty record for a blank line, ``label-corpus`` counts it), reports the largest
difference of an argument's score (a float32 mean, whose last digit can move with the batch a sentence
is in), and that one and two workers wrote the same bytes. Prints tables and writes
``benchmarks/out/label_corpus.json``.

Run: ``PYTHONPATH=. python benchmarks/label_corpus.py [--model srl] [--sentences N] [--workers 1 2]
[--large-lines 1200000] [--real-every 1000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.raw_text_srl import texts_of  # noqa: E402
from benchmarks.serving_soak import rss_mb  # noqa: E402

TEST = ROOT / "data" / "propbank-ewt" / "test.conllu.gz"


def tree_rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants in MB (Linux ``/proc``): a Beam
    job's worker processes count."""
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            total += rss_mb(current)
            for task in pathlib.Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError, RuntimeError):  # ended meanwhile
            continue
    return total


def _command(args: list[str], every: float = 0.5) -> tuple[float, subprocess.CompletedProcess, list]:
    """Run ``python -m lisa_tf ARGS``; its wall time, its result and ``[seconds, RSS MB]`` samples."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "lisa_tf", *args], cwd=ROOT, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    samples = []
    reader = threading.Thread(target=lambda: samples.append(process.communicate()), daemon=True)
    reader.start()
    series = []
    while process.poll() is None:
        series.append([round(time.perf_counter() - started, 2), round(tree_rss_mb(process.pid), 1)])
        time.sleep(every)
    reader.join()
    seconds = time.perf_counter() - started
    stdout, stderr = samples[0]
    done = subprocess.CompletedProcess(args, process.returncode, stdout, stderr)
    if done.returncode != 0:
        raise SystemExit(f"python -m lisa_tf {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done, series


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


def _frames_match(labelled: dict, predicted: dict, what: str) -> float:
    """Fail unless ``label-corpus`` wrote ``predict``'s frames (its empty records of blank lines aside);
    the largest score difference."""
    predicted = {key: [r for r in rows if r["tokens"]] for key, rows in predicted.items()}
    predicted = {key: rows for key, rows in predicted.items() if rows}
    frames, expected = without_scores(labelled), without_scores(predicted)
    if frames != expected:
        differ = sorted(set(frames) ^ set(expected)) or [k for k in expected if frames[k] != expected[k]]
        raise SystemExit(f"{what} differs from predict --input at {differ[:5]}")
    return round(score_difference(labelled, predicted), 5)


def _path_entry(seconds: float, tokens: int, lines: int, series: list) -> dict:
    return {"seconds": round(seconds, 2), "tokens": tokens, "tokens_per_s": round(tokens / seconds, 1),
            "lines": lines, "lines_per_s": round(lines / seconds, 1),
            "peak_rss_mb": max((r for _, r in series), default=0.0), "rss_series": series}


def _label_corpus(args, pattern: str, prefix: pathlib.Path, extra=()) -> tuple:
    took, done, series = _command(["label-corpus", "--model", args.model, "--input", pattern, "--output", str(prefix),
                                   *extra], args.every)
    shards = {p.name: p.read_bytes() for p in sorted(prefix.parent.glob(prefix.name + "-*.jsonl"))}
    labelled = read_records(sorted(prefix.parent.glob(prefix.name + "-0*-of-*.jsonl")))
    return took, done, series, shards, labelled


def plot(results: dict, path: pathlib.Path) -> None:
    """Resident memory over each command's run (the process and its workers)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(12, 4))
    for axis, (title, keys) in zip(axes, (("real text", [k for k in results["paths"]]),
                                          ("large file, mostly blank lines", list(results.get("large", {}).get("paths", {}))))):
        source = results["paths"] if title == "real text" else results["large"]["paths"]
        for key in keys:
            series = source[key]["rss_series"]
            axis.plot([t for t, _ in series], [r for _, r in series], label=f"{key} ({source[key]['lines']:,} lines)")
        axis.set_title(title)
        axis.set_xlabel("seconds")
        axis.set_ylabel("resident memory, process + workers (MB)")
        axis.set_ylim(bottom=0)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="srl")
    parser.add_argument("--sentences", type=int, default=0, help="the first N test sentences (0: all)")
    parser.add_argument("--files", type=int, default=1, help="split the text over N files (predict reads each in its own process)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--shard-bytes", type=int, default=32768, help="label-corpus --shard-bytes on the real text")
    parser.add_argument("--large-lines", type=int, default=1_200_000, help="lines of the large file (0: skip it)")
    parser.add_argument("--real-every", type=int, default=1000, help="every N-th line of the large file is a sentence")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between memory samples")
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
    seconds, series = 0.0, []
    for path in files:
        out = work / f"{path.stem}.predict.jsonl"
        took, _, samples = _command(["predict", "--model", args.model, "--input", str(path), "--format", "jsonl",
                                     "--out", str(out)], args.every)
        series += [[round(t + seconds, 2), r] for t, r in samples]
        seconds += took
        for (_, line), records in read_records([out]).items():
            predicted[(path.name, line)] = records
    tokens = sum(len(r["tokens"]) for records in predicted.values() for r in records)
    results["paths"]["predict_input"] = _path_entry(seconds, tokens, len(texts), series)
    rows.append(("predict --input (one process per file)", seconds, tokens, len(texts)))
    written = {}
    for workers in args.workers:
        prefix = work / f"workers{workers}" / "frames"
        took, done, series, written[workers], labelled = _label_corpus(
            args, str(work / "part*.txt"), prefix, ["--shard-bytes", str(args.shard_bytes), "--direct_num_workers",
                                                     str(workers), "--direct_running_mode", "multi_processing"])
        results[f"largest_score_difference_{workers}_workers"] = _frames_match(
            labelled, predicted, f"label-corpus with {workers} workers")
        tokens = sum(len(r["tokens"]) for records in labelled.values() for r in records)
        results["paths"][f"label_corpus_{workers}_workers"] = {
            **_path_entry(took, tokens, len(texts), series), "counters": done.stderr.strip().splitlines()[-9:]}
        rows.append((f"label-corpus, DirectRunner, {workers} worker{'s' * (workers > 1)}", took, tokens, len(texts)))
    results["same_frames_as_predict"] = True
    results["shards"] = len([name for name in written[args.workers[0]] if "dead" not in name])
    results["same_bytes_whatever_the_workers"] = all(w == written[args.workers[0]] for w in written.values())

    table = ["| path | wall time (s) | tokens | lines/s | tokens/s | × predict --input (lines/s) | peak RSS (MB) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    base = rows[0][3] / rows[0][1]
    for (name, took, tokens, lines), entry in zip(rows, results["paths"].values()):
        table.append(f"| {name} | {took:.1f} | {tokens:,} | {lines / took:.1f} | {tokens / took:.0f} | "
                     f"{lines / took / base:.2f} | {entry['peak_rss_mb']:.0f} |")
    print("\n".join(table))

    if args.large_lines:
        large = {"lines": args.large_lines, "real_every": args.real_every, "paths": {}}
        big, tenth = work / "large" / "large.txt", work / "tenth" / "tenth.txt"
        for path, count in ((big, args.large_lines), (tenth, args.large_lines // 10)):
            path.parent.mkdir()
            with path.open("w", encoding="utf-8") as handle:
                for k in range(count):
                    handle.write((texts[(k // args.real_every) % len(texts)] if k % args.real_every == 0 else "") + "\n")
        out = work / "large.predict.jsonl"
        took, _, series = _command(["predict", "--model", args.model, "--input", str(big), "--format", "jsonl",
                                    "--out", str(out)], args.every)
        predicted = {(big.name, line): rows for (_, line), rows in read_records([out]).items()}
        tokens = sum(len(r["tokens"]) for rows in predicted.values() for r in rows)
        large["paths"]["predict_input"] = _path_entry(took, tokens, args.large_lines, series)
        for name, path, count in (("label_corpus", big, args.large_lines),
                                  ("label_corpus_tenth", tenth, args.large_lines // 10)):
            took, done, series, _, labelled = _label_corpus(args, str(path), path.parent / "frames")
            if name == "label_corpus":
                large["largest_score_difference"] = _frames_match(labelled, predicted, "label-corpus on the large file")
            tokens = sum(len(r["tokens"]) for rows in labelled.values() for r in rows)
            large["paths"][name] = {**_path_entry(took, tokens, count, series),
                                    "counters": done.stderr.strip().splitlines()[-9:]}
        paths = large["paths"]
        large["lines_per_s_vs_predict"] = round(paths["label_corpus"]["lines_per_s"]
                                                / paths["predict_input"]["lines_per_s"], 2)
        large["peak_rss_vs_tenth"] = round(paths["label_corpus"]["peak_rss_mb"]
                                           / paths["label_corpus_tenth"]["peak_rss_mb"], 2)
        results["large"] = large
        print(f"\nlarge file: {args.large_lines:,} lines, one sentence every {args.real_every:,}")
        print("| path | lines | wall time (s) | lines/s | peak RSS (MB) |\n|---|---:|---:|---:|---:|")
        for name, entry in paths.items():
            print(f"| {name} | {entry['lines']:,} | {entry['seconds']:.1f} | {entry['lines_per_s']:,.0f} | "
                  f"{entry['peak_rss_mb']:.0f} |")
        print(f"label-corpus / predict --input, lines/s: {large['lines_per_s_vs_predict']:.2f}; label-corpus peak "
              f"RSS, all lines / a tenth: {large['peak_rss_vs_tenth']:.2f}")

    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    plot(results, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
