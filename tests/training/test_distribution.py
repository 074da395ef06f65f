"""The GPU code path on CPU: MirroredStrategy over two logical CPU devices with the mixed_float16
policy and loss scaling; MultiWorkerMirroredStrategy with two processes on 127.0.0.1; kill and resume.

Each run is a subprocess: logical devices and the dtype policy are process-wide settings.
"""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import pytest

from lisa_tf.training.checkpoints import step_files


ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "training" / "run_tiny.py"


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2", PYTHONWARNINGS="ignore")
    env.update(extra)
    return env


def _summary(output: str) -> dict:
    lines = [l for l in output.splitlines() if l.startswith("SUMMARY ")]
    assert lines, output[-3000:]
    return json.loads(lines[-1][len("SUMMARY "):])


def test_mirrored_two_cpu_replicas_with_float16_loss_scaling(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "run"), "--cpus", "2",
         "train.strategy=mirrored", "train.mixed_precision=mixed_float16", "train.max_steps=20", "train.eval_every=10"],
        capture_output=True, text=True, env=_env(), timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = _summary(result.stdout)
    assert summary["replicas"] == 2 and summary["policy"] == "mixed_float16"
    assert summary["steps"] == 20
    records = [json.loads(l) for l in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert all(r["loss"] == r["loss"] and r["loss"] < 10 for r in records)  # finite, not diverged
    # Keras wrapped the optimiser for fp16 loss scaling, and the checkpoint holds its state
    assert summary["optimizer"] == "LossScaleOptimizer"
    import h5py

    with h5py.File(tmp_path / "run" / "checkpoints" / "step-20.weights.h5") as weights:
        names = []
        weights.visit(names.append)
    assert "optimizer/inner_optimizer/vars" in names


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_multiworker_two_processes_on_localhost(tmp_path):
    ports = [_free_port(), _free_port()]
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    processes = []
    for index in range(2):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        processes.append(subprocess.Popen(
            [sys.executable, str(SCRIPT), str(tmp_path / f"worker{index}"),
             "train.strategy=multiworker", "train.mixed_precision=float32", "train.max_steps=10", "train.eval_every=5"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(TF_CONFIG=tf_config),
        ))
    outputs = [p.communicate(timeout=600) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        assert p.returncode == 0, err[-3000:]
    summaries = [_summary(out) for out, _ in outputs]
    assert [s["replicas"] for s in summaries] == [2, 2]
    assert summaries[0]["steps"] == summaries[1]["steps"] == 10
    assert (tmp_path / "worker0" / "done.json").exists()      # the chief writes the run
    assert not (tmp_path / "worker1" / "done.json").exists()  # the other worker does not


@pytest.mark.slow(minutes=0.9)
def test_sigkill_then_resume_continues_from_the_checkpoint(tmp_path):
    run = tmp_path / "run"
    args = [sys.executable, str(SCRIPT), str(run), "train.max_steps=60", "train.eval_every=20"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env())
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None:
        if step_files(run / "checkpoints"):
            break
        time.sleep(0.2)
    assert process.poll() is None, "training ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    saved = int(step_files(run / "checkpoints")[-1].name.split("-")[1].split(".")[0])
    assert not (run / "done.json").exists()

    result = subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"resumed from checkpoint at step {saved}" in result.stdout
    assert _summary(result.stdout)["steps"] == 60
    steps = [json.loads(l)["step"] for l in (run / "metrics.jsonl").read_text().splitlines()]
    assert steps == [20, 40, 60]  # each evaluation once, including one the kill may have interrupted
