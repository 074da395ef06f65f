"""TensorFlow's native start-up lines a user cannot act on are not shown (:mod:`lisa_tf.native_logs`)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT

#: a graph with an op oneDNN has no int32 kernel for, run after ``import lisa_tf`` as any command does
_SCRIPT = """
import os
import lisa_tf
import tensorflow as tf
print(os.environ["TF_CPP_MIN_LOG_LEVEL"])
print(int(tf.function(lambda a: tf.reduce_sum(tf.transpose(a)))(tf.ones([2, 3], tf.int32))))
"""


def test_no_error_level_onednn_note_after_import_lisa_tf():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2", "6"]
    assert "oneDNN" not in done.stderr and not any(line.startswith("E0") for line in done.stderr.splitlines()), \
        done.stderr


def test_other_error_lines_are_kept():
    from lisa_tf.native_logs import startup_lines

    note = ("E0000 00:00:1795728963.732634    3684 util.cc:131] oneDNN supports DT_INT32 only on platforms with "
            "AVX-512. Falling back to the default Eigen-based implementation if present.")
    other = "E0000 00:00:1795728963.732634    3684 kernel.cc:12] something the user must see"
    assert startup_lines(f"{note}\n{other}\n", gpus=0) == [other]
