"""The longest sentence a model is asked to label, and the longest paragraph the tokeniser is given.

One policy for every entry point: ``lisa_tf.load(...).predict``, ``python -m lisa_tf predict`` and
the server (``export/request_limits.py`` resolves its ``--max_tokens_per_sentence`` with
:func:`max_tokens_per_sentence`). Without it one 5,000-token line made a ``[1, 540000, 5000]`` tensor
(10.8 GB) and one 50 MB line exhausted memory in the tokeniser, before anything was written.

- **Tokens per sentence**: the longest sentence of the model's training data (it never saw a longer
  one, and attention and the biaffine scorers hold ``[T, T, ...]`` tensors), else the training token
  budget (``train.batch_tokens``: no training batch held more), else
  :data:`FALLBACK_MAX_TOKENS_PER_SENTENCE`. Exports carry both figures in ``assets/`` (``vocab_info.json``,
  ``config.json``); run directories in ``vocab/vocab_info.json`` and ``config.json``.
- **Characters per paragraph**: :data:`MAX_PARAGRAPH_CHARACTERS` (spaCy's ``nlp.max_length`` is the
  same million characters): a paragraph is split into sentences by the Python tokeniser, which holds
  several copies of it.

A caller may raise either limit (``load(..., max_sentence_tokens=N)``, ``predict
--max-sentence-tokens N``, ``serve --max_tokens_per_sentence N``), knowing the cost grows with the
square of a sentence's length.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Optional

from data_pipeline.errors import UserError
from data_pipeline.version_names import parse_version

#: Used when the model carries neither its longest training sentence nor its token budget.
FALLBACK_MAX_TOKENS_PER_SENTENCE = 512
#: The longest paragraph (in characters) given to the sentence splitter and tokeniser.
MAX_PARAGRAPH_CHARACTERS = 1_000_000


class InputTooLong(UserError):
    """A sentence or paragraph over its limit: names it, its size, the limit and how to raise it."""


def max_tokens_per_sentence(longest_training_sentence: Optional[int] = None,
                            training_token_budget: Optional[int] = None) -> int:
    """The policy above: the longest training sentence, else the token budget, else the fallback."""
    return longest_training_sentence or training_token_budget or FALLBACK_MAX_TOKENS_PER_SENTENCE


def _read_json_key(path: pathlib.Path, *keys: str) -> Optional[int]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
        for key in keys:
            value = value[key]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _assets(directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """``(config.json, vocab_info.json)`` of an export version directory or a packaged model (in
    ``assets/``), or of a run directory."""
    if (directory / "assets").is_dir():
        return directory / "assets" / "config.json", directory / "assets" / "vocab_info.json"
    return directory / "config.json", directory / "vocab" / "vocab_info.json"


def training_token_budget(directory: str | os.PathLike) -> Optional[int]:
    """``train.batch_tokens`` of the run behind an export (``assets/config.json``) or of a run
    directory (``config.json``); ``None`` when it records none."""
    return _read_json_key(_assets(pathlib.Path(directory))[0], "train", "batch_tokens")


def longest_training_sentence(directory: str | os.PathLike) -> Optional[int]:
    """``longest_sentence`` of the training data behind an export (``assets/vocab_info.json``) or a
    run directory (``vocab/vocab_info.json``); ``None`` when it records none."""
    return _read_json_key(_assets(pathlib.Path(directory))[1], "longest_sentence")


def sizes_directory(model_path: str | os.PathLike) -> Optional[pathlib.Path]:
    """Where the training data sizes of a model path are recorded: an export version directory (a
    base directory's highest version), a packaged model, a run directory (also for its ``model.keras``);
    ``None`` for a ``.keras`` file outside a run, which records neither."""
    path = pathlib.Path(model_path)
    if path.is_file():
        return path.parent if (path.parent / "config.json").exists() else None
    if (path / "saved_model.pb").exists() or (path / "config.json").exists() or (path / "assets" / "config.json").exists():
        return path  # an export, a run, or a package (its assets/ as an export's)
    versions = [p for p in path.iterdir() if parse_version(p.name) is not None] if path.is_dir() else []
    return max(versions, key=lambda p: parse_version(p.name)) if versions else None


def model_max_tokens_per_sentence(model_path: str | os.PathLike | None) -> int:
    """:func:`max_tokens_per_sentence` for the model at ``model_path`` (a run, ``.keras`` file, export
    or package; :func:`sizes_directory`); the fallback when it records no sizes or is ``None``."""
    directory = None if model_path is None else sizes_directory(model_path)
    if directory is None:
        return max_tokens_per_sentence()
    return max_tokens_per_sentence(longest_training_sentence(directory), training_token_budget(directory))


def paragraph_too_long(characters: int, limit: int = MAX_PARAGRAPH_CHARACTERS) -> Optional[str]:
    """Why a paragraph of ``characters`` is refused before it is split and tokenised, or ``None``."""
    if characters <= limit:
        return None
    return (f"{characters:,} characters, over the limit of {limit:,} characters per paragraph; split the text into "
            "paragraphs (a line each with --input)")


def sentence_too_long(length: int, limit: int) -> Optional[str]:
    """Why a sentence of ``length`` tokens is refused, or ``None`` when it is within ``limit``."""
    if length <= limit:
        return None
    return (f"{length:,} tokens, over the model's limit of {limit:,} tokens per sentence; split it, or raise the "
            "limit (--max-sentence-tokens, or max_sentence_tokens= of lisa_tf.load)")


__all__ = ["FALLBACK_MAX_TOKENS_PER_SENTENCE", "InputTooLong", "MAX_PARAGRAPH_CHARACTERS",
           "longest_training_sentence", "max_tokens_per_sentence", "model_max_tokens_per_sentence", "paragraph_too_long",
           "sentence_too_long", "sizes_directory", "training_token_budget"]
