"""What the text-reading commands (``predict``, ``parse``, ``label-corpus``) share: flag types (lines are
read by :func:`data_pipeline.text_lines.text_lines`), and the checks of their paths that run before
TensorFlow is imported (``check(args)`` of a command: :func:`lisa_tf_cli.main.main`), so a mistyped path is
reported at once rather than after the model has loaded."""

from __future__ import annotations

import errno
import os
import pathlib
from typing import Optional

from data_pipeline.errors import UserError


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1 (argparse prints the message and exits with status 2)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, found {text!r}")
    return value


def check_readable(path: Optional[str], flag: str) -> None:
    """A UserError naming ``flag`` unless ``path`` (None: not given; ``-``: standard input) can be
    opened for reading as a file."""
    if path is None or path == "-":
        return
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise UserError(f"{flag} {path}: {error.strerror}; expected a readable text file") from None


def check_creatable(path: Optional[str], flag: str) -> None:
    """A UserError naming ``flag`` unless the file ``path`` (None: not given) can be written: its
    directory exists and is writable, and it is not a directory. Nothing is created."""
    if path is None:
        return
    parent = os.path.dirname(path) or "."
    code = 0
    if os.path.isdir(path):
        code = errno.EISDIR
    elif not os.path.exists(parent):
        code = errno.ENOENT
    elif not os.path.isdir(parent):
        code = errno.ENOTDIR
    elif not os.access(path if os.path.exists(path) else parent, os.W_OK):
        code = errno.EACCES
    if code:
        raise UserError(f"{flag} {path}: {os.strerror(code)}; expected a writable text file")


def check_model(model: Optional[str], kind: str = "srl", flag: Optional[str] = None) -> pathlib.Path:
    """The model a ``[MODEL]`` argument or ``--model`` names (None: the shipped one of ``kind``; ``flag``
    names the argument when that is missing), once it is known to be a packaged model, a ``.keras``
    file, a run directory or a SavedModel export: else a UserError naming the path, or the shipped
    models when it is no name of theirs."""
    from lisa_tf.packages.export_cache import latest_version
    from lisa_tf.packages.finding import KERAS_FILE, is_package, model_path

    try:
        path = model_path(model, kind, flag)
        if not (is_package(path) or path.suffix == ".keras" and path.is_file() or (path / KERAS_FILE).is_file()):
            latest_version(path)
    except FileNotFoundError as error:
        raise UserError(str(error)) from None
    return path
