"""TensorFlow's native start-up lines a user cannot act on are not shown (:mod:`lisa_tf.util.native_logs`)."""

from __future__ import annotations


def test_other_error_lines_are_kept():
    from lisa_tf.util.native_logs import startup_lines

    note = ("E0000 00:00:1795728963.732634    3684 util.cc:131] oneDNN supports DT_INT32 only on platforms with "
            "AVX-512. Falling back to the default Eigen-based implementation if present.")
    other = "E0000 00:00:1795728963.732634    3684 kernel.cc:12] something the user must see"
    assert startup_lines(f"{note}\n{other}\n", gpus=0) == [other]


# oneDNN's note as TensorFlow 2.21 logs it on a CPU without AVX-512 (copied from a run's stderr)
ONEDNN_LINE = ("E0000 00:00:1795743689.890665   19092 util.cc:131] oneDNN supports DT_INT32 only on platforms with "
               "AVX-512. Falling back to the default Eigen-based implementation if present.")
NATIVE_ERROR = "E0000 00:00:1795743689.890700   19092 kernel.cc:12] something the user must see"


def test_the_filter_drops_only_the_onednn_line_and_passes_a_line_start_that_waits():
    import os
    import threading
    import time

    from lisa_tf.util.native_logs import ONEDNN_NOTE, filter_lines

    source, writer = os.pipe()
    reader, sink = os.pipe()
    filtering = threading.Thread(target=filter_lines, args=(ONEDNN_NOTE, source, sink))
    filtering.start()
    os.write(writer, f"{ONEDNN_LINE}\n{NATIVE_ERROR}\n{ONEDNN_LINE} and more\nprompt> ".encode())
    started = time.monotonic()
    shown = b""
    while not shown.endswith(b"prompt> ") and time.monotonic() - started < 5:
        shown += os.read(reader, 4096)  # the unended line comes without waiting for its end
    os.write(writer, ONEDNN_LINE.encode() + b"\n")  # the rest of a line already let through is not matched
    os.close(writer)
    filtering.join(5)
    os.close(sink)
    while chunk := os.read(reader, 4096):
        shown += chunk
    os.close(reader)
    os.close(source)
    assert shown.decode() == f"{NATIVE_ERROR}\n{ONEDNN_LINE} and more\nprompt> {ONEDNN_LINE}\n"


_SCRIPT = """
import importlib.util, os, sys, warnings
spec = importlib.util.spec_from_file_location("native_logs", {path!r})  # without importing TensorFlow
native_logs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(native_logs)
with native_logs.filtered_stderr(native_logs.ONEDNN_NOTE):
    os.write(2, {note!r}.encode() + b"\\n" + {error!r}.encode() + b"\\n")
    print("error: a line of ours", file=sys.stderr, flush=True)
    warnings.warn("a Python warning")
    if sys.argv[1] == "abort":
        os.abort()
    if sys.argv[1] == "raise":
        raise RuntimeError("a traceback")
    sys.exit(3)
"""


def test_errors_tracebacks_and_exit_codes_come_through_the_filter_process():
    import pathlib
    import subprocess
    import sys

    import lisa_tf.util.native_logs

    script = _SCRIPT.format(path=lisa_tf.util.native_logs.__file__, note=ONEDNN_LINE, error=NATIVE_ERROR)
    shown = {}
    for how in ("exit", "raise", "abort"):
        result = subprocess.run([sys.executable, "-c", script, how], capture_output=True, text=True, timeout=60,
                                cwd=pathlib.Path(lisa_tf.util.native_logs.__file__).parent)
        shown[how] = (result.returncode, result.stderr)
        assert "oneDNN" not in result.stderr, how
        assert NATIVE_ERROR in result.stderr and "error: a line of ours" in result.stderr, how
    assert shown["exit"][0] == 3 and "UserWarning: a Python warning" in shown["exit"][1]
    assert shown["raise"][0] == 1 and "RuntimeError: a traceback" in shown["raise"][1]
    assert shown["abort"][0] < 0  # what was written before the abort still reached stderr (above)


def test_a_command_does_not_show_onednns_note(lisa_run, tmp_path):
    """``python -m lisa_tf predict`` runs int32 graphs (where TensorFlow logs the note); a sentence over
    --max-sentence-tokens is still reported on stderr, and the exit code is the command's (2: a line skipped)."""
    import os
    import pathlib
    import subprocess
    import sys

    text = tmp_path / "in.txt"
    text.write_text("The cat sat on the mat.\nThe dog that the cat saw barked at the mailman loudly today.\n")
    root = pathlib.Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-m", "lisa_tf", "predict", "--model", str(lisa_run), "--input", str(text), "--format", "jsonl",
         "--max-sentence-tokens", "8"],
        capture_output=True, text=True, timeout=600, cwd=root, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert result.returncode == 2, result.stderr[-3000:]
    assert "oneDNN" not in result.stderr and "E0000" not in result.stderr
    assert "in.txt:2: 13 tokens, over the model's limit of 8" in result.stderr
    assert "labelled 1 sentences (7 tokens" in result.stderr
    assert '"text": "The cat sat on the mat."' in result.stdout


def test_the_librarys_first_model_call_drops_the_onednn_note_and_keeps_the_rest(capfd, monkeypatch):
    """A user's own script (``lisa_tf.load(...).predict``) has no command-line filter: its first model
    call, where TensorFlow logs the note, is captured at file descriptor 2 and written back without it."""
    import os

    from lisa_tf.util import native_logs

    monkeypatch.setattr(native_logs, "_first_calls_done", set())
    with native_logs.without_onednn_note("label"):
        os.write(2, f"{ONEDNN_LINE}\n{NATIVE_ERROR}\n".encode())
    assert capfd.readouterr().err.splitlines() == [NATIVE_ERROR]
    with native_logs.without_onednn_note("label"):  # captured the first time only
        os.write(2, f"{ONEDNN_LINE}\n".encode())
    assert capfd.readouterr().err.splitlines() == [ONEDNN_LINE]


def test_loading_a_keras_model_drops_the_onednn_note(capfd, monkeypatch, tmp_path):
    """Building ``srl`` (its MiniLM encoder) runs int32 ops and logs the note while ``lisa_tf.load`` reads the
    ``.keras`` model, before any label call: that read is captured too, and other lines are kept."""
    import os

    import pytest

    from lisa_tf.labelling.predictor import load
    from lisa_tf.models import runs
    from lisa_tf.util import native_logs

    class Read(Exception):
        pass

    def load_model_file(path):
        os.write(2, f"{ONEDNN_LINE}\n{NATIVE_ERROR}\n".encode())
        raise Read(path)

    monkeypatch.setattr(native_logs, "_first_calls_done", set())
    monkeypatch.setattr(runs, "load_model_file", load_model_file)
    (tmp_path / "model.keras").write_bytes(b"")
    with pytest.raises(Read):
        load(tmp_path / "model.keras", max_sentence_tokens=100)
    assert capfd.readouterr().err.splitlines() == [NATIVE_ERROR]
