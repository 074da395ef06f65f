"""Import TensorFlow without its start-up lines that a user cannot act on.

TensorFlow's C++ runtime logs through absl before absl's logging is initialised, so
``TF_CPP_MIN_LOG_LEVEL`` does not reach these lines: the oneDNN and CPU-instruction notes, "Could not
find cuda drivers" and, on a machine without a GPU, ``failed call to cuInit``.
:func:`import_tensorflow` imports TensorFlow (not Keras: a command that labels through a SavedModel
never needs it, and it costs a second to import) and probes the devices (where the cuInit
line comes from) with the process's stderr (file descriptor 2) sent to a temporary file, then writes
back every captured line except those: any other error still reaches the user.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

#: start-up lines dropped: absl info/warning lines (``I0000 …``, ``W0000 …``), absl's own notice, the
#: second line of the CPU-instruction note
_NOISE = re.compile(
    r"^([IW]\d{4} [\d:.]+ +\d+ \S+:\d+\] "
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\.)"
)
#: the GPU probe's error on a machine without a GPU driver
_NO_GPU = re.compile(r"^E\d{4} .*(cuInit|cuda_platform|CUDA error)")

_imported = False


def startup_lines(text: str, gpus: int) -> list[str]:
    """The lines of captured start-up output worth showing (``gpus``: GPUs TensorFlow found)."""
    keep = []
    for line in text.splitlines():
        if _NOISE.match(line) or (gpus == 0 and _NO_GPU.match(line)):
            continue
        keep.append(line)
    return keep


def import_tensorflow() -> None:
    """Import TensorFlow and find the devices, showing only start-up lines worth reading
    (once per process; a no-op when TensorFlow was imported before)."""
    global _imported
    if _imported or "tensorflow" in sys.modules:
        _imported = True
        return
    _imported = True
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        gpus = 0
        try:
            import tensorflow as tf

            gpus = len(tf.config.list_physical_devices("GPU"))
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            lines = startup_lines(captured.read().decode("utf-8", "replace"), gpus)
            if lines:
                sys.stderr.write("\n".join(lines) + "\n")
                sys.stderr.flush()
