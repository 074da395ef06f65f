"""What the text-reading commands (``predict``, ``parse``, ``label-corpus``) share: flag types (lines are
read by :func:`data_pipeline.text_lines.text_lines`)."""

from __future__ import annotations


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
