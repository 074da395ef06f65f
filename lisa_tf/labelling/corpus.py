"""Labelling a corpus with Apache Beam: text files in, sharded JSONL frames out (``label-corpus``).

The same pipeline runs on one machine (Beam's DirectRunner or PrismRunner) and on a cluster (Flink,
Spark, Dataflow): Beam spreads the blocks over workers, retries what fails and counts what was done::

    files matching PATTERN ── (not this command's own output) ── PlanBlocks ── number ── LabelBlock
                                                                  │                       ├─ PREFIX-SSSSS-of-NNNNN.jsonl
                                                                  │                       └─ PREFIX-dead-letters-SSSSS-of-NNNNN.jsonl
                                                                  └ one small descriptor per block

- **Files**: every file the pattern matches, except this command's own output files (the
  records', the dead letters' and their temporary files, :func:`is_output`): a second run over
  ``DIR/*`` with ``--output DIR/o`` does not label the first run's output as text. They are
  counted (``earlier_output``).
- **PlanBlocks** reads each file once, cheaply (newlines counted in 1 MiB reads; ``.gz``/``.bz2``
  decompressed), and cuts it into *blocks* of about ``block_bytes`` of text each, cut at a line end:
  a block is ``(file, byte offset, first line number, bytes)``. A binary file (a NUL byte in its
  first ``BINARY_PROBE`` bytes) is one block that holds only its dead letter. All blocks of all files
  are numbered in (file, offset) order: block ``S`` of ``N`` is shard ``S`` of ``N``.
- **LabelBlock** reads its block's lines as ``predict --input`` does (one paragraph, or
  ``tokenized``, one sentence of space-separated tokens, per line), labels them with
  :func:`lisa_tf.labelling.predictor.label_units` (the loop ``predict --input`` runs: chunks of lines split and
  tokenised by a thread while the model labels the chunk before) and writes each record as it comes:
  the ``predict --format jsonl`` record with its ``"source"`` file, in (line, sentence) order. The
  model is loaded once per worker process (a shipped model, a ``.keras`` file, a run or an export:
  :func:`lisa_tf.load`). Both files of the shard are written to temporary files and renamed into place:
  a shard is whole or absent, and a block the runner retries writes the same bytes again.

Why blocks: reading, labelling and writing a block are one step on one worker, so no record ever
waits in memory for a sort or a shuffle (on the DirectRunner every shuffle is held in memory; on a
cluster, in the shuffle service). A worker holds two chunks of lines and one model, whatever the size of
the corpus; only the block descriptors (one per ``block_bytes`` of text) travel between steps. The
output is deterministic without sorting anything: the blocks, their order and the chunks the model is
given depend on the input alone, so the same command over the same input writes the same files, byte
for byte, whatever the number of workers, and a failed job is simply run again. Read in name order,
the shards are the corpus's records sorted by (file, line, sentence). Within one file, blocks are
labelled in parallel; a block of a compressed file is reached by decompressing the file up to the
block (Beam's compressed files are read from their start), which costs far less than labelling it.

Blank lines get no record: they are counted (``empty``), so a ``.gz`` of newlines, however far it
expands, writes nothing and holds nothing. A line that is not UTF-8, is over the paragraph limit or
holds a NUL byte, a binary file, a sentence longer than the model's longest training sentence (the
policy of ``predict`` and ``serve``: :mod:`data_pipeline.input_limits`) and a chunk whose labelling
raises are dead letters ``{"source", "line", "reason"}`` (``"sentence"``: its number in the line, for a
sentence) in the shard of their block. Beam counters in the ``lisa_tf`` namespace: documents,
earlier_output, lines, empty, sentences, tokens, predicates and dead_letters.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sys
import time
from typing import NamedTuple, Optional

from lisa_tf.util.native_logs import BEAM_IMPORT_NOISE


class _BeamNoise(logging.Filter):
    """Drops Beam's import warnings a user cannot act on (:data:`BEAM_IMPORT_NOISE`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(BEAM_IMPORT_NOISE)


if not any(isinstance(f, _BeamNoise) for f in logging.getLogger().filters):
    logging.getLogger().addFilter(_BeamNoise())

import apache_beam as beam  # noqa: E402
from apache_beam.io import fileio  # noqa: E402
from apache_beam.io.filesystems import FileSystems  # noqa: E402
from apache_beam.metrics import Metrics  # noqa: E402
from apache_beam.utils import shared  # noqa: E402

#: The counters' namespace, and their names in the order :func:`counter_values` lists them.
NAMESPACE = "lisa_tf"
COUNTERS = ("documents", "earlier_output", "lines", "empty", "sentences", "tokens", "predicates", "dead_letters")
#: Bytes read to tell a binary file (a NUL byte) from text before its lines are read.
BINARY_PROBE = 8192
#: Bytes of text per block (a shard) unless the command says otherwise.
BLOCK_BYTES = 1 << 20
#: Lines per model call (chunks of :func:`lisa_tf.labelling.predictor.label_units`), as ``predict``.
CHUNK = 256
#: Bytes per read while planning blocks.
READ = 1 << 20
#: Seconds between a worker's progress lines.
PROGRESS_SECONDS = 30.0
DEAD = "dead-letters"


class Block(NamedTuple):
    """A piece of one file, labelled and written as one shard (``number`` of ``shards``)."""

    source: str
    offset: int
    first_line: int
    size: int
    binary: Optional[str] = None  # a binary file: its dead letter's reason, and nothing to read
    number: int = 0
    shards: int = 1


def dead_letter(source: str, line: Optional[int], reason: str, sentence: Optional[int] = None) -> dict:
    letter = {"source": source, "line": line, "reason": reason}
    if sentence is not None:
        letter["sentence"] = sentence
    return letter


def shard_path(prefix: str, shard: int, shards: int) -> str:
    return f"{prefix}-{shard:05d}-of-{shards:05d}.jsonl"


def _spellings(path: str, whole: bool) -> set[str]:
    """A local ``path`` as written (made absolute) and with its symbolic links resolved (``whole``: the
    file's own too, else its directory's only); another file system's path as it is."""
    if "://" in path:
        return {path}
    written = os.path.abspath(path)
    real = os.path.realpath(written) if whole else os.path.join(os.path.realpath(os.path.dirname(written)),
                                                               os.path.basename(written))
    return {written, real}


def is_output(path: str, prefix: str) -> bool:
    """Whether ``path`` is one of the files ``label-corpus --output prefix`` writes (records, dead
    letters or their temporary files, any number of shards). Local paths are compared as written and
    with their symbolic links resolved: ``--input 'LINK/*'``, where LINK links to the directory of
    ``--output DIR/o``, reaches the same files by another name."""
    shard = r"-(dead-letters-)?\d{5,}-of-\d{5,}\.jsonl(\.tmp)?"
    return any(re.fullmatch(re.escape(start) + shard, name) is not None
               for start in _spellings(prefix, whole=False) for name in _spellings(path, whole=True))


class _Stream(io.RawIOBase):
    """A Beam file handle as a raw stream of at most ``size`` bytes (None: to its end):
    :class:`io.BufferedReader` over it gives the bounded ``readline(limit)`` Beam's decompressing
    handles lack. ``head``: bytes already read from the handle, given back first."""

    def __init__(self, handle, head: bytes = b"", size: Optional[int] = None):
        super().__init__()
        self.handle = handle
        self.head = head
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        wanted = len(buffer) if self.left is None else min(len(buffer), self.left)
        if self.head:
            data, self.head = self.head[:wanted], self.head[wanted:]
        else:
            data = self.handle.read(wanted) if wanted else b""
        if self.left is not None:
            self.left -= len(data)
        buffer[: len(data)] = data
        return len(data)


def plan_blocks(handle, source: str, block_bytes: int) -> list[Block]:
    """The blocks of one file read from ``handle`` (decompressed bytes): each about ``block_bytes``,
    ending at a line end (or the file's end); one block for an empty or a binary file."""
    head = handle.read(BINARY_PROBE)
    if b"\0" in head:
        at = head.index(b"\0") + 1
        return [Block(source, 0, 1, 0, f"a binary file (a NUL byte at byte {at}); expected UTF-8 text")]
    starts = [(0, 1)]  # (byte offset, line number) of each block
    position, lines, cut = 0, 0, block_bytes
    data = head
    while data:
        end = position + len(data)
        while cut < end:  # the block ends at the first line end at or after ``cut``
            at = data.find(b"\n", cut - position)
            if at < 0:
                cut = end  # look on in the next read
                break
            starts.append((position + at + 1, lines + data.count(b"\n", 0, at + 1) + 1))
            cut = position + at + 1 + block_bytes
        lines += data.count(b"\n")
        position = end
        data = handle.read(READ)
    if len(starts) > 1 and starts[-1][0] == position:
        starts.pop()  # the file ends at a cut
    bounds = [offset for offset, _ in starts[1:]] + [position]
    return [Block(source, offset, line, bound - offset) for (offset, line), bound in zip(starts, bounds)]


class PlanBlocks(beam.DoFn):
    """A matched file → its :class:`Block` descriptors (:func:`plan_blocks`)."""

    def __init__(self, block_bytes: int):
        self.block_bytes = block_bytes
        self.documents = Metrics.counter(NAMESPACE, "documents")

    def process(self, readable: fileio.ReadableFile):
        self.documents.inc()
        with readable.open() as handle:
            yield from plan_blocks(handle, readable.metadata.path, self.block_bytes)


def number_blocks(blocks: list) -> list[Block]:
    """All blocks in (file, offset) order, each with its shard number and the number of shards."""
    ordered = sorted(blocks, key=lambda b: (b.source, b.offset))
    return [b._replace(number=k, shards=len(ordered)) for k, b in enumerate(ordered)]


class LabelBlock(beam.DoFn):
    """A :class:`Block` → its shard: the records and the dead letters of its lines (module
    docstring), written as they are labelled. Each worker process reports its progress on standard
    error every ``every`` seconds (on a cluster, in the worker logs).

    Args:
        prefix: the output prefix (``PREFIX-SSSSS-of-NNNNN.jsonl``; any Beam file system).
        model: what :func:`lisa_tf.load` takes (a shipped model's name or directory, a ``.keras``
            file, a run or an export); it must be readable where the workers run.
        token_budget: most padded tokens per model batch.
        max_sentence_tokens: the sentence limit (longer sentences are dead letters).
        predicates: ``"all"`` or ``"verbal"`` (as ``predict --predicates``).
        tokenized: lines are sentences of space-separated tokens.
        frames: the frame index of a sense model's meanings (``None``: the shipped one), readable where
            the workers run.
    """

    def __init__(self, prefix: str, model: str, token_budget: int, max_sentence_tokens: int,
                 predicates: str = "all", tokenized: bool = False, every: float = PROGRESS_SECONDS,
                 frames: Optional[str] = None):
        self.prefix = prefix
        self.model = model
        self.token_budget = token_budget
        self.max_sentence_tokens = max_sentence_tokens
        self.predicates = predicates
        self.tokenized = tokenized
        self.frames = frames
        self.every = every
        self.shared_model = shared.Shared()  # one model per worker process, whatever its threads
        self.counters = {name: Metrics.counter(NAMESPACE, name) for name in COUNTERS}

    def _load(self):
        from lisa_tf.labelling.predictor import load
        from lisa_tf.util.native_logs import import_tensorflow

        import_tensorflow()
        return load(self.model, token_budget=self.token_budget, max_sentence_tokens=self.max_sentence_tokens,
                    prefer_export=True, frames=self.frames)

    def setup(self):
        self.predictor = self.shared_model.acquire(self._load)
        self.started = self.reported = time.monotonic()
        self.done = 0

    def _lines(self, block: Block, seen: dict):
        """``label_units``'s units of the block's lines; blank ones are only counted (in ``seen``)."""
        from data_pipeline.input_limits import MAX_PARAGRAPH_CHARACTERS
        from data_pipeline.text_lines import text_lines

        with FileSystems.open(block.source) as handle:
            if block.offset:
                handle.seek(block.offset)
            stream = io.BufferedReader(_Stream(handle, size=block.size), 1 << 16)
            for number, text, skipped in text_lines(stream, MAX_PARAGRAPH_CHARACTERS, blank=True):
                line = block.first_line + number - 1
                seen["lines"] += 1
                if not skipped and "\0" in text:
                    skipped = "a NUL byte: binary data"
                if not skipped and not text.strip():
                    seen["empty"] += 1
                    continue
                unit = None if skipped else (text.split() if self.tokenized else text)
                yield block.source, unit, None, skipped, line

    def process(self, block: Block):
        from lisa_tf.labelling.predictor import label_units

        records_path = shard_path(self.prefix, block.number, block.shards)
        dead_path = shard_path(f"{self.prefix}-{DEAD}", block.number, block.shards)
        counts = dict.fromkeys(COUNTERS, 0)
        with FileSystems.create(records_path + ".tmp") as records, FileSystems.create(dead_path + ".tmp") as dead:
            def bury(letter: dict) -> None:
                counts["dead_letters"] += 1
                dead.write((json.dumps(letter, ensure_ascii=False) + "\n").encode("utf-8"))

            if block.binary:
                bury(dead_letter(block.source, None, block.binary))
            units = () if block.binary else self._lines(block, counts)
            for chunk in label_units(self.predictor, units, self.predicates, CHUNK, failures=True):
                written = []
                for (source, _, _, reason, line), results in chunk:
                    if results is None:
                        bury(dead_letter(source, line, reason))
                    for k, result in enumerate(results or [], start=1):
                        if "skipped" in result:
                            bury(dead_letter(source, line, result["skipped"]["reason"], k))
                            continue
                        counts["sentences"] += 1
                        counts["tokens"] += len(result["tokens"])
                        counts["predicates"] += len(result["predicates"])
                        written.append(json.dumps({"source": source, "line": line, **result}, ensure_ascii=False))
                records.write("".join(f"{record}\n" for record in written).encode("utf-8"))
                self._progress(len(written))
        # both in place in one step each; an earlier run's shard of the same name is replaced
        FileSystems.rename([records_path + ".tmp", dead_path + ".tmp"], [records_path, dead_path])
        for name, value in counts.items():
            if value:
                self.counters[name].inc(value)
        yield records_path

    def _progress(self, sentences: int) -> None:
        self.done += sentences
        now = time.monotonic()
        if now - self.reported >= self.every:
            self.reported = now
            print(f"worker {os.getpid()}: {self.done:,} sentences labelled "
                  f"({self.done / (now - self.started):.1f}/s)", file=sys.stderr, flush=True)


def build_pipeline(pipeline: beam.Pipeline, pattern: str, labeller: LabelBlock,
                   block_bytes: int = BLOCK_BYTES) -> None:
    """Add the corpus-labelling steps (module docstring) to ``pipeline``; ``labeller`` knows the
    output prefix and the model."""
    earlier = Metrics.counter(NAMESPACE, "earlier_output")
    prefix = labeller.prefix

    def new_input(metadata) -> bool:
        if is_output(metadata.path, prefix):
            earlier.inc()
            return False
        return True

    (pipeline
     | "Pattern" >> beam.Create([pattern])
     | "Match" >> fileio.MatchAll()
     | "NotOwnOutput" >> beam.Filter(new_input)
     | "Open" >> fileio.ReadMatches()
     | "SpreadFiles" >> beam.Reshuffle()
     | "Plan" >> beam.ParDo(PlanBlocks(block_bytes))
     | "AllBlocks" >> beam.combiners.ToList()
     | "Number" >> beam.FlatMap(number_blocks)
     | "SpreadBlocks" >> beam.Reshuffle()
     | "Label" >> beam.ParDo(labeller))


def counter_values(result) -> dict[str, int]:
    """The pipeline's ``lisa_tf`` counters (committed where the runner reports them)."""
    from apache_beam.metrics.metric import MetricsFilter

    values = dict.fromkeys(COUNTERS, 0)
    for counter in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        name = counter.key.metric.name
        if name in values:
            values[name] += counter.committed if counter.committed is not None else counter.attempted
    return values
