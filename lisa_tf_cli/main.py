"""Command-line entry point: ``python -m lisa_tf <command> [options]``.

Commands are discovered from :mod:`lisa_tf_cli.commands` (see its docstring), so adding a command is
adding one module.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import pkgutil
import sys
import threading
from typing import Callable, Optional, Sequence

from data_pipeline.errors import UserError

from lisa_tf.util.native_logs import ONEDNN_NOTE, filtered_stderr, import_tensorflow
from lisa_tf_cli import commands as _commands


def _command_modules() -> dict[str, str]:
    return {
        info.name.replace("_", "-"): f"{_commands.__name__}.{info.name}"
        for info in pkgutil.iter_modules(_commands.__path__)
        if not info.name.startswith("_")
    }


def build_parser() -> argparse.ArgumentParser:
    # no abbreviated flags: a flag renamed later must not keep matching a prefix of its new name
    parser = argparse.ArgumentParser(prog="python -m lisa_tf", description=__doc__.splitlines()[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in sorted(_command_modules().items()):
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=module.HELP, description=module.HELP, allow_abbrev=False)
        module.add_arguments(command)
        command.set_defaults(_run=module.run, _check=getattr(module, "check", None),
                             _tensorflow=getattr(module, "TENSORFLOW", True),
                             _intermixed=getattr(module, "INTERMIXED", None),
                             _passthrough=getattr(module, "PASSTHROUGH", None))
    return parser


def parse_arguments(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line's arguments as :func:`main` reads them (argparse exits with status 2 on an
    unknown command or flag); the documentation's tests check every command the docs show with it."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # Options may come between a command's words (``predict MODEL --format jsonl TEXT``): the words
    # after them belong to the command's word list (its INTERMIXED argument), in order.
    intermixed = getattr(args, "_intermixed", None)
    if extra and intermixed:
        options = [word for word in extra if word.startswith("-") and word != "-"]
        if options:
            parser.error(f"unrecognized arguments: {' '.join(options)}")
        setattr(args, intermixed, list(getattr(args, intermixed) or []) + extra)
    elif extra and getattr(args, "_passthrough", None):
        setattr(args, args._passthrough, extra)  # another program's options (Beam's), checked there
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_arguments(argv)
    try:
        if args._check is not None:  # paths, names and formats: before TensorFlow and the model load
            args._check(args)
        if not args._tensorflow:
            return int(args._run(args) or 0)
        # oneDNN's error-level note, logged by the first int32 graph, is not shown (lisa_tf.util.native_logs)
        with filtered_stderr(ONEDNN_NOTE):
            import_tensorflow()
            return int(args._run(args) or 0)
    except UserError as error:
        # Bad input, config, flag or run directory is the user's to fix: one clear line, no traceback.
        print(f"error: {error}", file=sys.stderr)
        return 2


def finish(code: int, run_exit_handlers: Callable[[], None] = atexit._run_exitfuncs,
           exit_process: Callable[[int], None] = os._exit, streams: Optional[Sequence] = None) -> int:
    """End ``python -m lisa_tf`` with ``code`` once TensorFlow is loaded, without tearing its modules down.

    A normal interpreter exit spends about 0.7 s freeing TensorFlow's and Keras' modules, which no one
    reads after a command. Once the command is done, its output is flushed, the exit handlers registered
    with :mod:`atexit` run (log handlers, temporary directories, caches), and the process ends at once.
    A process that still runs a thread of its own (a non-daemon thread), or never imported TensorFlow,
    exits the normal way: ``code`` is returned for ``sys.exit``. ``streams``: what is flushed (standard
    output and error).
    """
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if "tensorflow" not in sys.modules or others:
        return code
    for stream in (sys.stdout, sys.stderr) if streams is None else streams:
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be written to it
            pass
    run_exit_handlers()
    exit_process(code)
    return code
