"""Keep TensorFlow's native log lines that a user cannot act on out of the command line's output.

TensorFlow's C++ runtime logs through absl before absl's logging is initialised, so
``TF_CPP_MIN_LOG_LEVEL`` does not reach these lines: the oneDNN and CPU-instruction notes, "Could not
find cuda drivers" and, on a machine without a GPU, ``failed call to cuInit``. :func:`import_tensorflow`
imports TensorFlow (not Keras: a command that labels through a SavedModel never needs it, and it costs a
second to import) and probes the devices (where the cuInit line comes from) with the process's stderr
(file descriptor 2) sent to a temporary file, then writes back every captured line except those: any
other error still reaches the user. ``import lisa_tf`` sets ``TF_CPP_MIN_LOG_LEVEL`` to 2 (info and
warning lines off) unless it is set.

One error-level line comes later: on a CPU without AVX-512, oneDNN's note ``E0000 … oneDNN supports
DT_INT32 only on platforms with AVX-512. Falling back to the default Eigen-based implementation if
present.`` (:data:`ONEDNN_NOTE`), logged once per process when the first graph holding an int32 op runs,
which a user reads as a failure. Running such a graph at start-up to capture it would initialise
TensorFlow's devices before a command can split the CPU into logical replicas, and level 3 would hide
real errors, so the command line runs each TensorFlow command inside :class:`filtered_stderr`, and the
library its first model calls inside :func:`without_onednn_note`. For a command: file
descriptor 2 (which child processes inherit) becomes a pipe to a small filter process that drops
exactly that line and writes every other byte to the real stderr as it comes. The filter is a process,
not a thread, so what the command wrote before an abort or a crash still reaches the user after it.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from typing import Callable, Iterator

#: oneDNN's note on a CPU without AVX-512 that it lacks a kernel for a type (int32, bool), the whole line
ONEDNN_NOTE = re.compile(
    r"E\d{4} [\d:.]+ +\d+ util\.cc:\d+\] oneDNN supports DT_[A-Z0-9]+ only on platforms with AVX-512\. "
    r"Falling back to the default Eigen-based implementation if present\.$"
)
#: start-up lines dropped: absl info/warning lines (``I0000 …``, ``W0000 …``), absl's own notice, the
#: second line of the CPU-instruction note, oneDNN's note on kernels it lacks (int32, bool)
_NOISE = re.compile(
    r"^([IW]\d{4} [\d:.]+ +\d+ \S+:\d+\] "
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\."
    r"|" + ONEDNN_NOTE.pattern + ")"
)
#: the GPU probe's error on a machine without a GPU driver
_NO_GPU = re.compile(r"^E\d{4} .*(cuInit|cuda_platform|CUDA error)")

_imported = False
_first_calls_done: set = set()


def startup_lines(text: str, gpus: int) -> list[str]:
    """The lines of captured start-up output worth showing (``gpus``: GPUs TensorFlow found)."""
    keep = []
    for line in text.splitlines():
        if _NOISE.match(line) or (gpus == 0 and _NO_GPU.match(line)):
            continue
        keep.append(line)
    return keep


@contextlib.contextmanager
def _captured(keep: Callable[[str], list[str]]) -> Iterator[None]:
    """Within the block, file descriptor 2 goes to a temporary file; after it, the lines ``keep`` returns
    of what was written there go to stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            lines = keep(captured.read().decode("utf-8", "replace"))
            if lines:
                sys.stderr.write("\n".join(lines) + "\n")
                sys.stderr.flush()


def import_tensorflow() -> None:
    """Import TensorFlow and find the devices, showing only start-up lines worth reading
    (once per process; a no-op when TensorFlow was imported before)."""
    global _imported
    if _imported or "tensorflow" in sys.modules:
        _imported = True
        return
    _imported = True
    found = {"gpus": 0}
    with _captured(lambda text: startup_lines(text, found["gpus"])):
        import tensorflow as tf

        found["gpus"] = len(tf.config.list_physical_devices("GPU"))


def without_onednn_note(call: str):
    """A context for the library's first model calls of the process, where oneDNN logs :data:`ONEDNN_NOTE`
    (the first graph with an int32 op: restoring an export in ``lisa_tf.load``, or a predictor's first
    ``label``): the note is dropped and every other line written there is shown after it. ``call`` names
    the call; it is captured the first time only. The command line filters the note for the whole
    command (:class:`filtered_stderr`); a user's own script has only this."""
    if call in _first_calls_done:
        return contextlib.nullcontext()
    _first_calls_done.add(call)
    return _captured(lambda text: [line for line in text.splitlines() if not ONEDNN_NOTE.match(line)])


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
    r"|" + _NOISE.pattern + "|" + _NO_GPU.pattern
)


class filtered_stderr:
    """Within the block, this process's standard error (file descriptor 2, which child processes
    inherit; ``sys.stderr`` writes to it) passes through a filter process that drops the lines ``noise``
    matches (``re.match`` on the line without its newline) and writes every other byte to the real
    stderr as it comes; a line not ended within 0.1 s (a prompt, a progress line) is written as it is.

    The filter ignores SIGINT and SIGTERM and ends when the last writer closes the pipe, so a
    traceback written on Ctrl-C, and whatever was written before an abort or a crash, still reach the
    user. On leaving the block, file descriptor 2 is the real stderr again and the filter is given up to
    5 s to write out what it holds (longer only while a child process that inherited the pipe still
    runs). Blocks nest. :func:`stderr_is_terminal` answers for the real stderr.

    Args:
        noise: the lines to drop; its pattern is compiled again in the filter process.
    """

    def __init__(self, noise: "re.Pattern[str]"):
        self.noise = noise

    def __enter__(self):
        import subprocess

        global _terminal
        sys.stderr.flush()
        self.saved = os.dup(2)
        self.outer_terminal = _terminal
        _terminal = os.isatty(self.saved) if _terminal is None else _terminal
        read, write = os.pipe()
        try:
            self.filter = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__), self.noise.pattern],
                stdin=read, stdout=self.saved, stderr=self.saved, close_fds=True)
        finally:
            os.close(read)
        os.dup2(write, 2)
        os.close(write)
        return self

    def __exit__(self, *exc):
        import subprocess

        global _terminal
        sys.stderr.flush()
        os.dup2(self.saved, 2)  # this process's last end of the pipe closes: the filter reads to its end
        os.close(self.saved)
        _terminal = self.outer_terminal
        try:
            self.filter.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass  # a child process still holds the pipe: the filter ends with it
        return False


#: whether the real stderr behind :class:`filtered_stderr` is a terminal (None outside the block)
_terminal = None


def stderr_is_terminal() -> bool:
    """Whether ``sys.stderr`` reaches a terminal (inside :class:`filtered_stderr`: whether the real
    stderr is one)."""
    try:
        on_descriptor_2 = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):  # replaced by an object without a descriptor
        on_descriptor_2 = False
    return _terminal if on_descriptor_2 and _terminal is not None else sys.stderr.isatty()


def filter_lines(noise: "re.Pattern[str]", source: int = 0, sink: int = 1, wait: float = 0.1) -> None:
    """Copy ``source`` to ``sink`` until its end, dropping the lines ``noise`` matches; the start of a
    line that has not ended after ``wait`` seconds is written as it is, and the rest of that line after
    it unmatched. The loop of :class:`filtered_stderr`'s filter process."""
    import select

    pending = b""  # the start of a line not yet ended
    passing = False  # that line's start was already written: the rest follows unmatched
    broken = False  # the sink is closed: read on to the end, so writers are never blocked

    def write(data: bytes) -> None:
        nonlocal broken
        while data and not broken:
            try:
                data = data[os.write(sink, data):]
            except OSError:
                broken = True

    while True:
        if pending and not select.select([source], [], [], wait)[0]:
            write(pending)
            pending, passing = b"", True
            continue
        chunk = os.read(source, 65536)
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        kept = []
        for line in lines:
            if passing or not noise.match(line.decode("utf-8", "replace")):
                kept.append(line + b"\n")
            passing = False
        write(b"".join(kept))
    write(pending)


if __name__ == "__main__":  # filtered_stderr's filter process: python native_logs.py PATTERN
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    filter_lines(re.compile(sys.argv[1]))
