"""TensorFlow's native start-up lines a user cannot act on are not shown (:mod:`lisa_tf.native_logs`)."""

from __future__ import annotations


def test_other_error_lines_are_kept():
    from lisa_tf.native_logs import startup_lines

    note = ("E0000 00:00:1795728963.732634    3684 util.cc:131] oneDNN supports DT_INT32 only on platforms with "
            "AVX-512. Falling back to the default Eigen-based implementation if present.")
    other = "E0000 00:00:1795728963.732634    3684 kernel.cc:12] something the user must see"
    assert startup_lines(f"{note}\n{other}\n", gpus=0) == [other]
