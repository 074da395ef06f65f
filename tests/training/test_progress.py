"""Progress is counted in steps of ``max_steps``; plain lines off a terminal; the train command's
output is what a user can act on: no TensorFlow start-up noise, no Keras epoch bars, a closing line
naming the run."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import types

from lisa_tf.training.progress import StepProgress, duration
from tests.conftest import ROOT
from tests.models.conftest import tiny_overrides


class _Step:
    def __init__(self, value):
        self.value = value

    def numpy(self):
        return self.value


def _progress(live, every_seconds=0.0):
    stream = io.StringIO()
    progress = StepProgress(100, stream=stream, live=live, every_seconds=every_seconds)
    model = types.SimpleNamespace(optimizer=types.SimpleNamespace(iterations=_Step(40)))
    progress.set_model(model)
    progress.on_train_begin()
    progress._started -= 10.0  # 10 s ago
    model.optimizer.iterations = _Step(60)
    progress.on_train_batch_end(0, {"loss": 1.5})
    progress.line("step 60: loss 1.5000  dev F1 50.00")
    progress.on_train_end()
    return stream.getvalue()


def test_plain_lines_off_a_terminal_count_steps_of_max_steps_with_an_eta():
    text = _progress(live=False)
    assert "\r" not in text and "\x1b" not in text
    first, second = text.splitlines()
    # 20 steps in 10 s: 2 steps/s, 40 steps left: 20 s
    assert first == "step 60/100 (60%)  loss 1.5000  2.00 steps/s  ETA 20s"
    assert second == "step 60: loss 1.5000  dev F1 50.00"


def test_a_terminal_line_is_redrawn_and_ended_before_other_lines():
    text = _progress(live=True)
    assert text.startswith("\rstep 60/100 (60%)")
    assert "\x1b[K\nstep 60: loss" in text  # the progress line is ended before the evaluation line


def test_duration():
    assert [duration(s) for s in (12, 185, 3720)] == ["12s", "3m05s", "1h02m"]


def test_train_command_output_is_quiet_and_ends_with_a_summary(tmp_path):
    run = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_CPP", "PYTHONWARNINGS"))}
    env["PYTHONPATH"] = str(ROOT)
    (tmp_path / "empty.json").write_text("{}")
    overrides = tiny_overrides(**{"model.kind": "lisa", "model.pos_layer": 0, "model.parse_layer": 0,
                                  "model.parse_attention_layer": 1, "train.max_steps": 4, "train.eval_every": 2})
    done = subprocess.run([sys.executable, "-m", "lisa_tf", "train", "--config", str(tmp_path / "empty.json"),
                           "--out", str(run), *overrides], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr == ""  # no GPU probe, oneDNN or CPU-instruction lines, no library warnings
    assert "Epoch" not in done.stdout and "\x1b" not in done.stdout
    assert "{" not in done.stdout  # no dict of nested-span counts, no JSON summary
    best = json.loads((run / "best" / "step.json").read_text())
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(f"finished {run}: step 4 of 4; best dev F1 {best['dev_f1']:.2f} at step {best['step']}")
    assert "wall time" in last
