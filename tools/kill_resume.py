"""``kill -9`` a tiny training run at random moments, resume it each time, and check nothing is lost.

The run (DeepAtt, 2 layers, 20 EWT sentences; ``tests/training/run_tiny.py``) has ``--max-steps``
steps with an evaluation every ``--eval-every``. Each round starts ``train`` on the same run directory
and sends SIGKILL at a random moment: a quarter of them in start-up (before training), the others
after 0-2 further evaluations plus a random fraction of the time an interval takes, so they fall in
training, evaluation and checkpoint writing alike. After ``--kills`` kills the
run is resumed once more and left to finish. Checked at the end:

- every evaluation step appears exactly once in ``metrics.jsonl``, and they are all the interval ends
  up to ``max_steps``;
- no checkpointed interval was trained twice: each round resumed from the newest checkpoint that was
  on disk when it started;
- the run finished at ``max_steps`` and ``best/`` holds the weights of the evaluation with the
  highest dev F1 of all of them (compared tensor by tensor with ``weights/step-N.weights.h5``);
- the killed run trained as a run that was never killed (run once more beside it): the same loss at
  every evaluation and the same final weights and optimiser state, to the last bit (resuming reads
  the training data on from the checkpoint's position).

Prints a table and writes ``benchmarks/out/kill_resume.json``.
Run: ``PYTHONPATH=. python tools/kill_resume.py [--kills 20] [--seed 0] [--out DIR]``.

``--target package-model|export|evaluate`` does the same to a command that writes outputs (on the
runs of a quick open-data experiment, ``--results``, made with ``experiments open --quick --models
lisa`` when missing). One uninterrupted run first gives the command's duration and its outputs; then
each round starts the command and sends SIGKILL at a random moment (half of them in its last third,
where the writing happens). After every kill, and after a last uninterrupted run, each output must be
whole: every package in ``--out`` with all its files and a card whose recorded sizes match them; every
export version with its SavedModel, variables and the run's ``config.json`` and ``vocab_info.json``;
the evaluation JSON and Markdown readable and equal to the uninterrupted run's. At the end no scratch
(``.partial-*``) may remain. Writes ``benchmarks/out/kill_resume_TARGET.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lisa_tf.training.checkpoints import step_files  # noqa: E402

SCRIPT = ROOT / "tests" / "training" / "run_tiny.py"


def _newest_checkpoint(run: pathlib.Path) -> int:
    files = step_files(run / "checkpoints")
    return int(files[-1].name[len("step-"):-len(".weights.h5")]) if files else 0


def _same_weights(a: pathlib.Path, b: pathlib.Path, optimizer: bool = False) -> bool:
    import h5py
    import numpy as np

    def tensors(path):
        found = {}
        with h5py.File(path) as handle:
            handle.visititems(lambda name, item: found.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
        return found

    left, right = tensors(a), tensors(b)
    keys = [k for k in left if optimizer or not k.startswith("optimizer")]
    return bool(keys) and left.keys() == right.keys() and all(np.array_equal(left[k], right[k]) for k in keys)


def _evaluations(log: pathlib.Path) -> int:
    return len(re.findall(r"^step \d+: (loss|evaluating)", log.read_text(), re.M))


def _kill_at_random(process, log: pathlib.Path, rng: random.Random, gaps: list) -> str | None:
    """SIGKILL ``process`` at a random moment: a quarter of the time during start-up, otherwise after
    0-2 further evaluations plus a random fraction of the time between evaluations (``gaps``, seconds,
    measured so far), so kills land in training, evaluation and checkpoint writing alike."""
    if rng.random() < 0.25:
        phase, delay = "start-up", rng.uniform(0.5, 8.0)
        time.sleep(delay)
    else:
        wait_for = rng.randint(0, 2)
        seen, last = 0, None
        while process.poll() is None and not re.search(r"^(starting at|resumed from)", log.read_text(), re.M):
            time.sleep(0.05)
        last = time.time()
        while process.poll() is None and seen < wait_for:
            count = _evaluations(log)
            if count > seen:
                now = time.time()
                gaps.append(now - last)
                seen, last = count, now
            time.sleep(0.05)
        gap = sorted(gaps)[len(gaps) // 2] if gaps else 4.0
        delay = rng.uniform(0.0, 1.2 * gap)
        phase = f"after {seen} evaluation(s)"
        time.sleep(delay)
    if process.poll() is not None:
        return None
    process.send_signal(signal.SIGKILL)
    return f"{phase} +{delay:.2f}s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="train", choices=("train", *OUTPUT_TARGETS))
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--eval-every", type=int, default=4)
    parser.add_argument("--out", default=None, help="run or output directory (default: a new temporary one)")
    parser.add_argument("--results", default=None,
                        help="a quick open-data experiment (made when missing; default: under --out)")
    parser.add_argument("--json", default=None, help="default benchmarks/out/kill_resume[_TARGET].json")
    args = parser.parse_args(argv)
    suffix = "" if args.target == "train" else "_" + args.target.replace("-", "_")
    args.json = args.json or str(ROOT / "benchmarks" / "out" / f"kill_resume{suffix}.json")
    if args.target != "train":
        return output_rounds(args)

    rng = random.Random(args.seed)
    run = pathlib.Path(args.out or tempfile.mkdtemp(prefix="kill_resume_")) / "run"
    run.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(SCRIPT), str(run), f"train.max_steps={args.max_steps}",
               f"train.eval_every={args.eval_every}", f"train.keep_weights={args.max_steps}"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rounds, retrained, gaps = [], 0, []
    started = time.time()
    for number in range(args.kills + 1):
        newest = _newest_checkpoint(run)
        log = run.parent / f"round-{number}.log"
        with open(log, "w") as handle:
            process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
            killed_at = None
            if number < args.kills:
                killed_at = _kill_at_random(process, log, rng, gaps)
            process.wait()
        text = log.read_text()
        resumed = re.search(r"resumed from checkpoint at step (\d+)", text)
        start_step = int(resumed.group(1)) if resumed else (0 if "starting at step 0" in text else None)
        if start_step is not None and start_step != newest:
            retrained += 1
        rounds.append({"round": number, "killed": killed_at, "returncode": process.returncode,
                       "newest_checkpoint_before": newest, "started_at_step": start_step,
                       "evaluations_printed": [int(s) for s in re.findall(r"^step (\d+): loss", text, re.M)],
                       "redone": [int(s) for s in re.findall(r"^step (\d+): evaluating the checkpoint", text, re.M)]})
        print(f"round {number:2d}: {'killed at ' + killed_at if killed_at else 'ran to the end':<28} "
              f"checkpoint before {newest:3d}  started at {start_step if start_step is not None else '-':>3}  "
              f"evaluations {rounds[-1]['evaluations_printed']}", flush=True)
        if (run / "done.json").exists() and number < args.kills:
            # finished before all kills were spent: start a longer run in the same directory
            break

    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in records]
    expected = sorted(set(range(args.eval_every, args.max_steps + 1, args.eval_every)) | {args.max_steps})
    done = json.loads((run / "done.json").read_text())
    best = max(records, key=lambda r: r["dev_f1"])
    best_marker = json.loads((run / "best" / "step.json").read_text())
    whole = run.parent / "uninterrupted"
    with open(run.parent / "uninterrupted.log", "w") as handle:
        subprocess.run(command[:2] + [str(whole)] + command[3:], stdout=handle, stderr=subprocess.STDOUT, env=env,
                       check=True)
    whole_losses = [json.loads(line)["loss"] for line in (whole / "metrics.jsonl").read_text().splitlines()]
    result = {
        "kills": sum(1 for r in rounds if r["killed"]),
        "rounds": rounds,
        "metrics_steps": steps,
        "each_evaluation_once": steps == expected,
        "checkpointed_intervals_trained_again": retrained,
        "finished_at_step": done["steps"],
        "finished_at_max_steps": done["steps"] == args.max_steps,
        "best_step": best_marker["step"],
        "best_is_best_of_all": best_marker["step"] == best["step"],
        "best_weights_match": _same_weights(run / "best" / "model.weights.h5",
                                            run / "weights" / f"step-{best['step']}.weights.h5"),
        "losses_as_uninterrupted": [r["loss"] for r in records] == whole_losses,
        "final_weights_as_uninterrupted": _same_weights(run / "final.weights.h5", whole / "final.weights.h5",
                                                        optimizer=True),
        "wall_seconds": round(time.time() - started, 1),
        "run": str(run),
    }
    ok = (result["each_evaluation_once"] and not retrained and result["finished_at_max_steps"]
          and result["best_is_best_of_all"] and result["best_weights_match"] and result["losses_as_uninterrupted"]
          and result["final_weights_as_uninterrupted"])
    print()
    print("| check | result |\n|---|---|")
    for key in ("kills", "each_evaluation_once", "checkpointed_intervals_trained_again", "finished_at_step",
                "best_step", "best_is_best_of_all", "best_weights_match", "losses_as_uninterrupted",
                "final_weights_as_uninterrupted", "wall_seconds"):
        print(f"| {key} | {result[key]} |")
    print(f"metrics.jsonl steps: {steps}")
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.json}; {'all checks hold' if ok else 'A CHECK FAILED'}")
    return 0 if ok else 1


OUTPUT_TARGETS = ("package-model", "export", "evaluate")


def _scratch(directory: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob(".partial-*"))


def _check_package(package: pathlib.Path) -> str | None:
    """Why ``package`` is not a whole package, or None."""
    import zipfile

    files = ("card.json", "MODEL_CARD.md", "model.keras", "assets/config.json", "assets/vocab_info.json")
    missing = [name for name in files if not (package / name).is_file()]
    if missing:
        return f"{package.name}: missing {', '.join(missing)}"
    card = json.loads((package / "card.json").read_text())
    if not zipfile.is_zipfile(package / "model.keras") or zipfile.ZipFile(package / "model.keras").testzip():
        return f"{package.name}: model.keras is not a whole zip file"
    if card["files"]["keras_bytes"] != (package / "model.keras").stat().st_size:
        return f"{package.name}: model.keras is not the file its card describes"
    json.loads((package / "assets" / "config.json").read_text())
    json.loads((package / "assets" / "vocab_info.json").read_text())
    return None


def _check_export(version: pathlib.Path) -> str | None:
    for name in ("saved_model.pb", "variables/variables.index", "assets/config.json", "assets/vocab_info.json"):
        if not (version / name).is_file():
            return f"version {version.name}: missing {name}"
    json.loads((version / "assets" / "config.json").read_text())
    json.loads((version / "assets" / "vocab_info.json").read_text())
    return None


def _command(args, results: pathlib.Path, out: pathlib.Path) -> list[str]:
    base = [sys.executable, "-W", "ignore", "-m", "lisa_tf"]
    run = results / "runs" / "lisa"
    if args.target == "package-model":
        return base + ["package-model", "--results", str(results), "--out", str(out)]
    if args.target == "export":
        versions = [p for p in out.iterdir() if p.name.isdigit()] if out.exists() else []
        return base + ["export", "--run", str(run), "--out", str(out / str(len(versions) + 1))]
    dev = json.loads((run / "config.json").read_text())["data"]["dev"]
    return base + ["evaluate", "--run", str(run), "--data", dev, "--limit", "200", "--out", str(out / "dev.json")]


def _problems(args, out: pathlib.Path, reference: dict) -> list[str]:
    """What is not whole in ``out`` after a round."""
    if not out.exists():
        return []
    if args.target == "package-model":
        return [p for p in (_check_package(out / kind) for kind in ("srl", "parser") if (out / kind).exists()) if p]
    if args.target == "export":
        return [p for p in (_check_export(v) for v in out.iterdir() if v.name.isdigit()) if p]
    found = {name: (out / name).read_text() for name in ("dev.json", "dev.md") if (out / name).exists()}
    return [f"{name} differs from the uninterrupted run's" for name, text in found.items() if text != reference[name]]


def output_rounds(args) -> int:
    rng = random.Random(args.seed)
    work = pathlib.Path(args.out or tempfile.mkdtemp(prefix="kill_resume_"))
    results = pathlib.Path(args.results) if args.results else work / "experiment"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not (results / "results.json").exists():
        print(f"making the quick experiment {results} ...", flush=True)
        subprocess.run([sys.executable, "-W", "ignore", "-m", "lisa_tf", "experiments", "open", "--quick",
                        "--models", "lisa", "--out", str(results)], env=env, check=True, stdout=subprocess.DEVNULL)
    out = work / args.target
    shutil.rmtree(out, ignore_errors=True)
    started = time.time()
    subprocess.run(_command(args, results, out), env=env, check=True, capture_output=True)
    duration = time.time() - started
    reference = {name: (out / name).read_text() for name in ("dev.json", "dev.md")} if args.target == "evaluate" else {}
    print(f"{args.target}: an uninterrupted run takes {duration:.1f} s", flush=True)
    rounds, problems = [], []
    for number in range(args.kills):
        delay = rng.uniform(0, duration) if rng.random() < 0.5 else rng.uniform(0.67 * duration, 1.05 * duration)
        process = subprocess.Popen(_command(args, results, out), env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=delay)
            killed = False
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            killed = True
        found = _problems(args, out, reference)
        problems += [f"round {number}: {p}" for p in found]
        rounds.append({"round": number, "delay_seconds": round(delay, 2), "killed": killed,
                       "returncode": process.returncode, "scratch_left": len(_scratch(out)), "problems": found})
        print(f"round {number:2d}: {'killed' if killed else 'finished'} at {delay:5.1f} s  scratch left "
              f"{len(_scratch(out))}  {'; '.join(found) or 'outputs whole'}", flush=True)
    final = subprocess.run(_command(args, results, out), env=env, capture_output=True, text=True)
    problems += [f"final run: {p}" for p in _problems(args, out, reference)]
    if final.returncode != 0:
        problems.append(f"final run exited {final.returncode}: {final.stderr.strip().splitlines()[-1:]}")
    left = _scratch(out)
    if left:
        problems.append(f"scratch left after the final run: {left}")
    result = {"target": args.target, "kills": sum(r["killed"] for r in rounds), "rounds": rounds,
              "uninterrupted_seconds": round(duration, 1), "problems": problems,
              "outputs": sorted(str(p.relative_to(out)) for p in out.iterdir()),
              "wall_seconds": round(time.time() - started, 1)}
    print()
    print("| check | result |\n|---|---|")
    print(f"| target | {args.target} |\n| kills | {result['kills']} of {args.kills} rounds |\n"
          f"| outputs after every round whole | {not [p for p in problems if p.startswith('round')]} |\n"
          f"| final run whole, no scratch left | {not [p for p in problems if not p.startswith('round')]} |\n"
          f"| outputs | {', '.join(result['outputs'])} |\n| wall seconds | {result['wall_seconds']} |")
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.json}; {'all checks hold' if not problems else 'A CHECK FAILED: ' + '; '.join(problems)}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
