"""``predict --input`` on a large file streams: resident memory stays flat and output grows as it goes.

Writes ``--lines`` lines of raw text (the PropBank-EWT test ``# text`` lines, repeated in order), runs
``python -m lisa_tf predict --model MODEL --input FILE --format jsonl --out OUT`` as a new process and
samples, every ``--every`` seconds, its resident memory (``VmRSS``) and the size of the output so far.
Lines over the model's sentence limit are skipped and counted by ``predict`` (its last line, kept).
Reports the RSS when the first output appears (start-up over), at 50 % and 90 % of the run, its peak,
its growth after the first output and within the second half of the run (a leak grows with the input;
a stream does not), the first time output appeared (a run that wrote
only at the end would show it at 100 %), and sentences/s. Prints a table, writes
``benchmarks/out/predict_stream_memory.json`` and a PNG of RSS and output size over time.

Run: ``PYTHONPATH=. python benchmarks/predict_stream_memory.py [--model models/srl] [--lines 100000]``.
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

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.raw_text_srl import texts_of  # noqa: E402
from benchmarks.serving_soak import rss_mb  # noqa: E402


def _lines(count: int) -> list[str]:
    texts = texts_of(ROOT / "data" / "propbank-ewt" / "test.conllu.gz")
    return [texts[i % len(texts)] for i in range(count)]


def run(model: str, lines: int, every: float, scratch: pathlib.Path) -> dict:
    source, out = scratch / "input.txt", scratch / "frames.jsonl"
    source.write_text("\n".join(_lines(lines)) + "\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TF_CPP_MIN_LOG_LEVEL="2")
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "lisa_tf", "predict", "--model", model, "--input", str(source),
                                "--format", "jsonl", "--out", str(out)],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples = []  # (seconds, RSS MB, output bytes)
    while process.poll() is None:
        try:
            samples.append((time.perf_counter() - started, rss_mb(process.pid), out.stat().st_size if out.exists() else 0))
        except (FileNotFoundError, RuntimeError):  # the process ended between poll and read
            break
        time.sleep(every)
    stderr = process.communicate()[1]
    seconds = time.perf_counter() - started
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if process.returncode not in (0, 2) or not last.startswith("labelled"):  # 2: some lines skipped, counted
        raise SystemExit(f"predict failed ({process.returncode}): {stderr[-2000:]}")
    written = sum(1 for _ in out.open(encoding="utf-8"))

    def at(share: float) -> float:
        return samples[min(int(share * len(samples)), len(samples) - 1)][1]

    first = next((i for i, (_, _, size) in enumerate(samples) if size > 0), len(samples) - 1)
    first_output = samples[first][0]
    labelling = samples[first:]  # start-up (imports, model load) over: memory from here on is the stream's
    return {"model": model, "lines": lines, "sentences_written": written, "seconds": round(seconds, 1),
            "sentences_per_second": round(written / seconds, 1), "samples": len(samples),
            "rss_mb_at_50": round(at(0.5), 1), "rss_mb_at_90": round(at(0.9), 1),
            "rss_mb_peak": round(max(s[1] for s in samples), 1),
            "rss_mb_at_first_output": round(samples[first][1], 1),
            "rss_growth_after_first_output_mb": round(max(s[1] for s in labelling) - samples[first][1], 1),
            "rss_growth_second_half_mb": round(max(s[1] for s in labelling[len(labelling) // 2:])
                                               - labelling[len(labelling) // 2][1], 1),
            "first_output_at_share_of_run": round(first_output / seconds, 3),
            "output_bytes": out.stat().st_size, "last_stderr_line": last,
            "skipped": int(last.rsplit(";", 1)[1].split()[0]),
            "series": [[round(t, 2), round(r, 1), size] for t, r, size in samples]}


def plot(record: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seconds = [s[0] for s in record["series"]]
    figure, memory = plt.subplots(figsize=(7, 3.5))
    memory.plot(seconds, [s[1] for s in record["series"]], color="tab:blue")
    memory.set_xlabel("seconds")
    memory.set_ylabel("resident memory (MB)", color="tab:blue")
    memory.set_ylim(bottom=0)
    output = memory.twinx()
    output.plot(seconds, [s[2] / 1e6 for s in record["series"]], color="tab:orange")
    output.set_ylabel("output written (MB)", color="tab:orange")
    memory.set_title(f"predict --input, {record['lines']:,} lines")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="models/srl")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "predict_stream_memory.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        record = run(args.model, args.lines, args.every, pathlib.Path(scratch))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot(record, out.with_suffix(".png"))
    out.write_text(json.dumps(record, indent=2) + "\n")
    print("| lines | sentences/s | RSS at first output | RSS 50 % | RSS 90 % | peak | growth after first output | "
          "growth in the second half | first output |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {record['lines']:,} | {record['sentences_per_second']} | {record['rss_mb_at_first_output']} MB | "
          f"{record['rss_mb_at_50']} MB | {record['rss_mb_at_90']} MB | {record['rss_mb_peak']} MB | "
          f"{record['rss_growth_after_first_output_mb']} MB | {record['rss_growth_second_half_mb']} MB | "
          f"{100 * record['first_output_at_share_of_run']:.1f} % of the run |")
    print(record["last_stderr_line"])
    print(f"written: {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
