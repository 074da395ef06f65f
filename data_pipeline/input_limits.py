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
- **Characters without a space**: a paragraph with a run of characters without whitespace longer than
  the tokens-per-sentence limit × :data:`MAX_WORD_CHARACTERS` is refused before it is tokenised
  (:func:`run_too_long`): sentences end only at whitespace, so no sentence within the limit holds it.
- **Characters per word**: a contextual encoder reads at most :data:`MAX_WORD_CHARACTERS` characters of
  a word (``lisa_tf.models.contextual``): its word pieces grow with the word's characters (``"x." * 25000``
  is 50,000 pieces), so without the cut one sentence of such "words" held gigabytes of pieces before the
  encoder's 512-piece window dropped all but a few. The server also refuses longer tokens than the
  longest training token (:func:`max_characters_per_token`, ``serve --max_characters_per_token``).

The training data's sizes are read from the model's records (:func:`training_sizes`), checked
(a record that is not what training writes is an error naming the file and key, not a silent default)
and capped at what a model can be asked to run (:data:`SIZE_CAPS`): a record saying the longest
sentence had 100,000 tokens no longer sets a limit that lets one request exhaust memory.

A caller may raise either limit (``load(..., max_sentence_tokens=N)``, ``predict
--max-sentence-tokens N``, ``serve --max_tokens_per_sentence N``), knowing the cost grows with the
square of a sentence's length.
"""

from __future__ import annotations

import dataclasses
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
#: The most characters of one word a contextual encoder splits into word pieces (a longer word is read
#: from its first ones): above every token of UD English-EWT (the longest, a URL of its test data, has
#: 473 characters; its training data's longest has 140), so real text is not cut.
MAX_WORD_CHARACTERS = 512
#: The most a training record may set each derived limit to (``longest_sentence`` and
#: ``longest_token`` of ``vocab_info.json``, ``train.batch_tokens`` of ``config.json``): attention and the
#: biaffine scorers hold ``[T, T, ...]`` tensors (512 tokens is the fallback sentence limit and a
#: BERT encoder's window), a request of 65,536 tokens is 8× the largest default, and the encoder reads
#: no more than :data:`MAX_WORD_CHARACTERS` of a word. A flag may still raise a limit past its cap.
SIZE_CAPS = {"longest_sentence": 512, "batch_tokens": 65_536, "longest_token": MAX_WORD_CHARACTERS}


class InputTooLong(UserError):
    """A sentence or paragraph over its limit: names it, its size, the limit and how to raise it."""


class InvalidSizes(UserError):
    """A model's record of its training data's sizes that is not what training writes."""


@dataclasses.dataclass(frozen=True)
class TrainingSizes:
    """What a model's training data sets its input limits by; ``None`` where the model records nothing.

    Args:
        token_budget: ``train.batch_tokens`` (the most tokens a training batch held).
        longest_sentence: the longest training sentence, in tokens.
        longest_token: the longest training token, in characters.
    """

    token_budget: Optional[int] = None
    longest_sentence: Optional[int] = None
    longest_token: Optional[int] = None


def max_tokens_per_sentence(longest_training_sentence: Optional[int] = None,
                            training_token_budget: Optional[int] = None) -> int:
    """The policy above: the longest training sentence, else the token budget, else the fallback."""
    return longest_training_sentence or training_token_budget or FALLBACK_MAX_TOKENS_PER_SENTENCE


def max_characters_per_token(longest_training_token: Optional[int] = None) -> int:
    """The longest token the server accepts by default: the longest training token, else the most
    characters of a word the encoder reads (:data:`MAX_WORD_CHARACTERS`)."""
    return longest_training_token or MAX_WORD_CHARACTERS


def _read_size(path: pathlib.Path, *keys: str) -> Optional[int]:
    """The positive whole number at ``keys`` of the JSON file ``path``, capped at :data:`SIZE_CAPS`;
    ``None`` when the file or a key is absent. Anything else in its place is an error naming both."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidSizes(f"{path}: could not be read as UTF-8 text ({error})") from None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InvalidSizes(f"{path}: expected a JSON object as training writes it ({str(error)[:80]})") from None
    for depth, key in enumerate(keys):
        if not isinstance(value, dict):
            where = ".".join(keys[:depth]) or "the file"
            raise InvalidSizes(f"{path}: {where} is {type(value).__name__}; expected a JSON object")
        if key not in value:
            return None
        value = value[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidSizes(f"{path}: {'.'.join(keys)} is {json.dumps(value)[:40]}; expected a positive whole number")
    return min(value, SIZE_CAPS[keys[-1]])


def _assets(directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """``(config.json, vocab_info.json)`` of an export version directory or a packaged model (in
    ``assets/``), or of a run directory."""
    if (directory / "assets").is_dir():
        return directory / "assets" / "config.json", directory / "assets" / "vocab_info.json"
    return directory / "config.json", directory / "vocab" / "vocab_info.json"


def training_sizes(directory: str | os.PathLike) -> TrainingSizes:
    """The sizes recorded for the model in ``directory`` (an export version, a package, a run):
    ``train.batch_tokens`` of its ``config.json``, ``longest_sentence`` and ``longest_token`` of its
    ``vocab_info.json`` (each capped at :data:`SIZE_CAPS`).

    Raises:
        InvalidSizes: a file that is not JSON, or a recorded size that is not a positive whole number.
    """
    config, info = _assets(pathlib.Path(directory))
    return TrainingSizes(_read_size(config, "train", "batch_tokens"), _read_size(info, "longest_sentence"),
                         _read_size(info, "longest_token"))


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
    sizes = training_sizes(directory)
    return max_tokens_per_sentence(sizes.longest_sentence, sizes.token_budget)


def paragraph_too_long(characters: int, limit: int = MAX_PARAGRAPH_CHARACTERS) -> Optional[str]:
    """Why a paragraph of ``characters`` is refused before it is split and tokenised, or ``None``."""
    if characters <= limit:
        return None
    return (f"{characters:,} characters, over the limit of {limit:,} characters per paragraph; split the text into "
            "paragraphs (a line each with --input)")


def run_too_long(text: str, limit: int) -> Optional[str]:
    """Why a paragraph is refused before it is tokenised, or ``None``: a run of it without whitespace is
    longer than a sentence within ``limit`` tokens can be, ``limit`` × :data:`MAX_WORD_CHARACTERS`
    characters (the most of a word that is read). A sentence ends only at whitespace
    (:func:`data_pipeline.tokenizer.longest_run`), so the run's sentence is at least that long; found in one
    linear pass, where tokenising ``"a-" * 500000`` to count its million tokens took seconds."""
    from data_pipeline.tokenizer import longest_run

    characters = longest_run(text)
    if characters <= limit * MAX_WORD_CHARACTERS:
        return None
    return (f"{characters:,} characters without a space, more than a sentence within the model's limit of {limit:,} "
            f"tokens per sentence holds ({MAX_WORD_CHARACTERS} characters per token read); split it, or raise the "
            "limit (--max-sentence-tokens, or max_sentence_tokens= of lisa_tf.load)")


def sentence_too_long(length: int, limit: int) -> Optional[str]:
    """Why a sentence of ``length`` tokens is refused, or ``None`` when it is within ``limit``."""
    if length <= limit:
        return None
    return (f"{length:,} tokens, over the model's limit of {limit:,} tokens per sentence; split it, or raise the "
            "limit (--max-sentence-tokens, or max_sentence_tokens= of lisa_tf.load)")


__all__ = ["FALLBACK_MAX_TOKENS_PER_SENTENCE", "InputTooLong", "InvalidSizes", "MAX_PARAGRAPH_CHARACTERS",
           "MAX_WORD_CHARACTERS", "SIZE_CAPS", "TrainingSizes", "max_characters_per_token", "max_tokens_per_sentence",
           "model_max_tokens_per_sentence", "paragraph_too_long", "run_too_long", "sentence_too_long", "sizes_directory",
           "training_sizes"]
