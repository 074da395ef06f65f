"""Import TensorFlow without its start-up lines that a user cannot act on.

TensorFlow's C++ runtime logs through absl before absl's logging is initialised, so
``TF_CPP_MIN_LOG_LEVEL`` does not reach these lines: the oneDNN and CPU-instruction notes, "Could not
find cuda drivers" and, on a machine without a GPU, ``failed call to cuInit``. Nor does it reach
oneDNN's error-level note on a CPU without AVX-512 (``E0000 … oneDNN supports DT_INT32 only on
platforms with AVX-512. Falling back to the default Eigen-based implementation``), logged once per
process when the first graph holds an op oneDNN lacks a kernel for: a user reads it as a failure.
:func:`import_tensorflow` imports TensorFlow (not Keras: a command that labels through a SavedModel
never needs it, and it costs a second to import), probes the devices (where the cuInit line comes
from) and runs a one-op int32 graph (where the oneDNN note comes from, so it is not logged again)
with the process's stderr (file descriptor 2) sent to a temporary file, then writes back every
captured line except those: any other error still reaches the user. ``import lisa_tf`` sets
``TF_CPP_MIN_LOG_LEVEL`` to 2 (info and warning lines off) unless it is set.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

#: start-up lines dropped: absl info/warning lines (``I0000 …``, ``W0000 …``), absl's own notice, the
#: second line of the CPU-instruction note, oneDNN's note on kernels it lacks (int32, bool)
_NOISE = re.compile(
    r"^([IW]\d{4} [\d:.]+ +\d+ \S+:\d+\] "
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\."
    r"|E\d{4} [\d:.]+ +\d+ util\.cc:\d+\] oneDNN supports DT_\w+ only)"
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


#: Beam's warnings on import a user cannot act on: BigQuery's client libraries being absent (not used
#: here), and memory use not being read (Beam disables its ``resource`` import when its optional model
#: manager cannot be imported). Filtered in this process's log records and in its local workers' lines.
BEAM_IMPORT_NOISE = ("apitools not found", "Resource module is not available")
#: The DirectRunner's own flags, which its workers do not parse (in either order; quoted with a backslash
#: where the job service relays a worker's line).
_RUNNER_FLAGS = r"\[(\\?'--(direct_runner_use_stacked_bundle|pipeline_type_check)\\?'(, )?)+\]"
#: Lines of Beam's local worker processes a user cannot act on: their start-up notes (INFO lines, the
#: optional BigQuery client, the cache directory DirectRunner workers do not have, the runner's own flags
#: passed on to the workers), those notes relayed by the job service, TensorFlow's start-up lines in
#: each worker (:data:`_NOISE`: oneDNN's notes on kernels it lacks among them; the GPU probe).
BEAM_WORKER_NOISE = re.compile(
    r"^(INFO:"
    r"|WARNING:root:(" + "|".join(re.escape(m) for m in BEAM_IMPORT_NOISE) + ")"
    r"|WARNING:__main__:No semi_persistent_directory found"
    r"|WARNING:apache_beam\.options\.pipeline_options:Discarding unparseable args: " + _RUNNER_FLAGS +
    r"|WARNING:apache_beam\.runners\.portability\.local_job_service:Worker: severity: WARN .*"
    r"(semi_persistent_directory|Discarding unparseable args: " + _RUNNER_FLAGS + "))"
)


class filtered_stderr:
    """Within the block, this process's standard error (file descriptor 2, which child processes
    inherit) passes through a thread that drops the lines ``noise`` matches, start-up lines of
    :func:`startup_lines` included; every other line reaches the user as it comes."""

    def __init__(self, noise: "re.Pattern[str]"):
        self.noise = noise

    def __enter__(self):
        import threading

        sys.stderr.flush()
        self.saved = os.dup(2)
        read, write = os.pipe()
        os.dup2(write, 2)
        os.close(write)
        self.thread = threading.Thread(target=self._pass, args=(read,), name="stderr-filter", daemon=True)
        self.thread.start()
        return self

    def _pass(self, read: int) -> None:
        with os.fdopen(read, "rb") as lines, os.fdopen(os.dup(self.saved), "wb", buffering=0) as out:
            for raw in lines:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if not (self.noise.match(line) or _NOISE.match(line) or _NO_GPU.match(line)):
                    out.write(raw)

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)  # the pipe's last writer here closes: the thread reads to its end
        os.close(self.saved)
        self.thread.join(timeout=5)
        return False
