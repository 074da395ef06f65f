"""How ``python -m lisa_tf`` ends (:func:`lisa_tf_cli.main.finish`): at once after a TensorFlow command, with
its output flushed and its exit handlers run first; the normal way while a thread of its own still runs."""

from __future__ import annotations

import sys
import threading

import pytest

from lisa_tf_cli.main import finish


class Stream:
    def __init__(self, events: list, name: str, closed: bool = False):
        self.events, self.name, self.closed = events, name, closed

    def flush(self):
        if self.closed:
            raise ValueError("I/O operation on closed file")
        self.events.append(f"flush {self.name}")


@pytest.fixture
def events(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", sys.modules.get("tensorflow", sys))
    return []


def ending(events: list, code: int, closed: bool = False) -> int:
    return finish(code, run_exit_handlers=lambda: events.append("handlers"),
                  exit_process=lambda code: events.append(f"exit {code}"),
                  streams=[Stream(events, "stdout", closed), Stream(events, "stderr")])


def test_a_tensorflow_command_flushes_runs_its_exit_handlers_then_ends(events):
    ending(events, 3)
    assert events == ["flush stdout", "flush stderr", "handlers", "exit 3"]


def test_a_closed_output_does_not_stop_the_exit_handlers(events):
    ending(events, 0, closed=True)
    assert events == ["flush stderr", "handlers", "exit 0"]


def test_a_running_thread_of_its_own_gets_the_normal_exit(events):
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        code = ending(events, 2)
    finally:
        release.set()
        worker.join()
    assert (code, events) == (2, [])


def test_a_command_without_tensorflow_gets_the_normal_exit(events, monkeypatch):
    monkeypatch.delitem(sys.modules, "tensorflow")
    assert ending(events, 0) == 0
    assert events == []
