"""Training progress as steps of ``train.max_steps`` with the loss, speed and time left.

Keras' progress bar counts "epochs", which here are evaluation intervals, and writes terminal
control codes into redirected logs. :class:`StepProgress` counts optimiser steps of the whole run
instead: on a terminal one line is redrawn in place; otherwise (a log file, a pipe) a plain line is
printed every ``every_seconds``. Evaluation and warning lines go through :meth:`StepProgress.line`
so they never land in the middle of the redrawn line.
"""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

import keras


def duration(seconds: float) -> str:
    """``1h02m``, ``3m05s`` or ``12s``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


class StepProgress(keras.callbacks.Callback):
    """``step 120/400 (30%)  loss 1.2345  4.1 steps/s  ETA 1m08s``.

    Args:
        max_steps: the run's last step.
        stream: where to write (stdout by default).
        live: redraw one line in place (a terminal); None = when ``stream`` is a terminal.
        every_seconds: how often a plain line is printed when not live.
        enabled: False prints evaluation lines only (``verbose=0``).
    """

    def __init__(self, max_steps: int, stream: Optional[TextIO] = None, live: Optional[bool] = None,
                 every_seconds: float = 30.0, enabled: bool = True):
        super().__init__()
        self.max_steps = max_steps
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.every_seconds = every_seconds
        self.enabled = enabled
        self._open = False  # a live line is on screen without its newline
        self._first_step = None
        self._started = None
        self._shown = 0.0

    def line(self, text: str) -> None:
        """Print a whole line (ends the live progress line first)."""
        if self._open:
            self.stream.write("\n")
            self._open = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def on_train_begin(self, logs=None):
        self._first_step = int(self.model.optimizer.iterations.numpy())
        self._started = time.time()
        self._shown = float("-inf") if self.live else self._started  # a live line shows at once

    def on_train_batch_end(self, batch, logs=None):
        if not self.enabled:
            return
        now = time.time()
        step = int(self.model.optimizer.iterations.numpy())
        if self.live:
            if now - self._shown < 0.2 and step < self.max_steps:
                return
        elif now - self._shown < self.every_seconds:
            return
        self._shown = now
        text = self._status(step, now, logs or {})
        if self.live:
            self.stream.write("\r" + text + "\x1b[K")
            self._open = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _status(self, step: int, now: float, logs: dict) -> str:
        done = step - self._first_step
        rate = done / max(now - self._started, 1e-9)
        text = f"step {step}/{self.max_steps} ({100.0 * step / self.max_steps:.0f}%)"
        if "loss" in logs:
            text += f"  loss {float(logs['loss']):.4f}"
        if done:
            text += f"  {rate:.2f} steps/s  ETA {duration(max(self.max_steps - step, 0) / rate)}"
        return text

    def on_train_end(self, logs=None):
        if self._open:
            self.stream.write("\n")
            self._open = False
            self.stream.flush()
