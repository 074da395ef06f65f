"""Labelling a corpus with Apache Beam: text files in, sharded JSONL frames out (``label-corpus``).

The same pipeline runs on one machine (Beam's DirectRunner or PrismRunner) and on a cluster (Flink,
Spark, Dataflow): Beam splits the work over workers, retries what fails and counts what was done::

    files matching PATTERN ── ReadParagraphs ── SplitSentences ── RunInference(SentenceLabeller) ── WriteShards
                                   │                  │                     │                  PREFIX-SSSSS-of-NNNNN.jsonl
                                   └──────────────────┴── dead letters ─────┴── WriteShards ── PREFIX-dead-letters-…jsonl

- **ReadParagraphs** reads each file as ``predict --input`` does: one paragraph (or, ``tokenized``,
  one sentence of space-separated tokens) per line; ``.gz``/``.bz2`` files are decompressed. A line
  that is not UTF-8 or is over the paragraph limit, and a binary file (a NUL byte), are dead letters.
- **SplitSentences** splits and tokenises a line (:func:`lisa_tf.predictor.prepare`, the code
  ``predict`` runs); a sentence longer than the model's longest training sentence (the policy of
  ``predict`` and ``serve``: :mod:`data_pipeline.input_limits`) is a dead letter.
- **RunInference** (``apache_beam.ml.inference``) batches sentences by tokens (at most
  ``token_budget`` per batch) and labels them with :class:`SentenceLabeller`, which loads the model
  once per worker process (a shipped model, a ``.keras`` file, a run or an export:
  :func:`lisa_tf.load`). A batch whose labelling raises is a dead letter for each of its sentences.
- **WriteShards** writes each record, the ``predict --format jsonl`` record with its ``"source"``
  file, to shard ``crc32(source, line) mod N``, sorted by (source, line, sentence): the same
  command over the same input writes the same files, byte for byte, so a failed job is simply run
  again. A shard is written to a temporary file and renamed into place: a shard is whole or absent.

Every dead letter is ``{"source", "line", "reason"}`` (``"sentence"``: its number in the line, for a
sentence). Beam counters in the ``lisa_tf`` namespace: documents, lines, sentences, tokens,
predicates, empty (blank lines, written as empty records as ``predict`` does) and dead_letters.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import time
import zlib
from typing import Iterable, Optional, Sequence

from lisa_tf.native_logs import BEAM_IMPORT_NOISE


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
from apache_beam.ml.inference.base import ModelHandler, PredictionResult, RunInference  # noqa: E402

#: The counters' namespace, and their names in the order :func:`counter_table` prints them.
NAMESPACE = "lisa_tf"
COUNTERS = ("documents", "lines", "sentences", "tokens", "predicates", "empty", "dead_letters")
#: Bytes read to tell a binary file (a NUL byte) from text before its lines are read.
BINARY_PROBE = 8192
DEAD = "dead_letters"
#: Seconds between a worker's progress lines.
PROGRESS_SECONDS = 30.0


def dead_letter(source: str, line: Optional[int], reason: str, sentence: Optional[int] = None) -> dict:
    letter = {"source": source, "line": line, "reason": reason}
    if sentence is not None:
        letter["sentence"] = sentence
    return letter


def shard_of(source: str, line: Optional[int], shards: int) -> int:
    """The shard of a line's records: a stable hash (not Python's per-process ``hash``)."""
    return zlib.crc32(f"{source}\0{line}".encode("utf-8")) % shards


def _sort_key(source: str, line: Optional[int], sentence: Optional[int]) -> tuple:
    return source, -1 if line is None else line, -1 if sentence is None else sentence


class _Stream(io.RawIOBase):
    """A Beam file handle as a raw stream: :class:`io.BufferedReader` over it gives the bounded
    ``readline(limit)`` Beam's decompressing handles lack. ``head``: bytes already read from the
    handle, given back first."""

    def __init__(self, handle, head: bytes = b""):
        super().__init__()
        self.handle = handle
        self.head = head

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            data, self.head = self.head[: len(buffer)], self.head[len(buffer):]
        else:
            data = self.handle.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class ReadParagraphs(beam.DoFn):
    """A matched file → ``(source, line number, text)`` per line (blank ones too); dead letters
    (tagged ``dead_letters``) for lines that cannot be read and for a binary file."""

    def __init__(self):
        self.documents = Metrics.counter(NAMESPACE, "documents")
        self.lines = Metrics.counter(NAMESPACE, "lines")
        self.dead = Metrics.counter(NAMESPACE, "dead_letters")

    def process(self, readable: fileio.ReadableFile):
        from data_pipeline.input_limits import MAX_PARAGRAPH_CHARACTERS
        from data_pipeline.text_lines import text_lines

        source = readable.metadata.path
        self.documents.inc()
        with readable.open() as handle:
            head = handle.read(BINARY_PROBE)
            if b"\0" in head:
                self.dead.inc()
                at = head.index(b"\0") + 1
                yield beam.pvalue.TaggedOutput(DEAD, dead_letter(
                    source, None, f"a binary file (a NUL byte at byte {at}); expected UTF-8 text"))
                return
            for number, text, skipped in text_lines(io.BufferedReader(_Stream(handle, head), 1 << 16),
                                                    MAX_PARAGRAPH_CHARACTERS, blank=True):
                self.lines.inc()
                if skipped or "\0" in text:
                    self.dead.inc()
                    yield beam.pvalue.TaggedOutput(DEAD, dead_letter(source, number, skipped or "a NUL byte: binary data"))
                else:
                    yield source, number, text


class SplitSentences(beam.DoFn):
    """``(source, line, text)`` → ``((source, line, sentence), (text, tokens))`` per sentence to label;
    a blank line's empty record (tagged ``records``) and over-long sentences' dead letters."""

    def __init__(self, max_sentence_tokens: int, tokenized: bool):
        self.max_sentence_tokens = max_sentence_tokens
        self.tokenized = tokenized
        self.empty = Metrics.counter(NAMESPACE, "empty")
        self.dead = Metrics.counter(NAMESPACE, "dead_letters")

    def process(self, element):
        from lisa_tf.predictor import prepare

        source, line, text = element
        given = {"tokens": [text.split()]} if self.tokenized else {"paragraphs": [text]}
        if self.tokenized and not text.split():
            given = {"paragraphs": [""]}
        rows = prepare(**given, over_limit="skip", max_sentence_tokens=self.max_sentence_tokens)
        if not rows or not any(tokens for _, tokens, _ in rows):
            self.empty.inc()
            record = {"source": source, "line": line, "text": "", "tokens": [], "predicates": []}
            yield beam.pvalue.TaggedOutput("records", (_sort_key(source, line, 0), record))
            return
        for k, (sentence_text, tokens, skipped) in enumerate(rows, start=1):
            if skipped:
                self.dead.inc()
                yield beam.pvalue.TaggedOutput(DEAD, dead_letter(source, line, skipped["reason"], k))
            elif tokens:
                yield (source, line, k), (sentence_text, list(tokens))


def sentence_tokens(element) -> int:
    """A keyed sentence's weight in a batch: its tokens (``RunInference`` batches up to the budget)."""
    return max(1, len(element[1][1]))


class SentenceLabeller(ModelHandler):
    """``RunInference``'s handle on a lisa_tf model: loads it once per worker process and labels
    batches of keyed sentences; each result is a :class:`PredictionResult` whose example is the key.

    Args:
        model: what :func:`lisa_tf.load` takes (a shipped model's name or directory, a ``.keras``
            file, a run or an export); it must be readable where the workers run.
        token_budget: most tokens per batch (Beam's batching weighs a sentence by its tokens).
        max_sentence_tokens: the sentence limit (the pipeline refuses longer sentences before).
        predicates: ``"all"`` or ``"verbal"`` (as ``predict --predicates``).
    """

    def __init__(self, model: str, token_budget: int, max_sentence_tokens: int, predicates: str = "all"):
        super().__init__(min_batch_size=max(1, token_budget // 8), max_batch_size=token_budget,
                         element_size_fn=sentence_tokens)
        self.model = model
        self.token_budget = token_budget
        self.max_sentence_tokens = max_sentence_tokens
        self.predicates = predicates

    def load_model(self):
        from lisa_tf.native_logs import import_tensorflow
        from lisa_tf.predictor import load

        import_tensorflow()
        return load(self.model, token_budget=self.token_budget, max_sentence_tokens=self.max_sentence_tokens,
                    prefer_export=True)

    def run_inference(self, batch: Sequence, model, inference_args=None) -> Iterable[PredictionResult]:
        results = model.label([(text, tokens, None) for _, (text, tokens) in batch], predicates=self.predicates)
        return [PredictionResult(key, result) for (key, _), result in zip(batch, results)]

    def get_metrics_namespace(self) -> str:
        return NAMESPACE


class ToRecord(beam.DoFn):
    """A labelled sentence → ``(sort key, record)``: the ``predict --format jsonl`` record with its
    source file in front. Each worker process reports its progress on standard error every
    ``every`` seconds (on a cluster, in the worker logs)."""

    def __init__(self, every: float = PROGRESS_SECONDS):
        self.sentences = Metrics.counter(NAMESPACE, "sentences")
        self.tokens = Metrics.counter(NAMESPACE, "tokens")
        self.predicates = Metrics.counter(NAMESPACE, "predicates")
        self.every = every

    def setup(self):
        self.started = self.reported = time.monotonic()
        self.done = 0

    def process(self, labelled: PredictionResult):
        source, line, sentence = labelled.example
        result = labelled.inference
        self.sentences.inc()
        self.tokens.inc(len(result["tokens"]))
        self.predicates.inc(len(result["predicates"]))
        self.done += 1
        now = time.monotonic()
        if now - self.reported >= self.every:
            self.reported = now
            print(f"worker {os.getpid()}: {self.done:,} sentences labelled "
                  f"({self.done / (now - self.started):.1f}/s)", file=sys.stderr, flush=True)
        yield _sort_key(source, line, sentence), {"source": source, "line": line, **result}


class FailedBatch(beam.DoFn):
    """A batch whose labelling raised (``RunInference``'s failed inferences) → a dead letter per sentence."""

    def __init__(self):
        self.dead = Metrics.counter(NAMESPACE, "dead_letters")

    def process(self, failure):
        batch, (_, error, _) = failure  # Beam's dead-letter form: (element, (type, repr, traceback))
        for (source, line, sentence), _ in batch:
            self.dead.inc()
            yield dead_letter(source, line, f"labelling failed: {error}", sentence)


class WriteShard(beam.DoFn):
    """``(shard, records)`` → ``PREFIX-SSSSS-of-NNNNN.jsonl``, records sorted, written to a temporary
    file and renamed into place (any Beam file system: local, ``gs://``, ``s3://``, ``hdfs://``)."""

    def __init__(self, prefix: str, shards: int):
        self.prefix = prefix
        self.shards = shards

    def process(self, element):
        shard, records = element
        lines = [json.dumps(record, ensure_ascii=False) for _, record in sorted(
            (r for r in records if r is not None), key=lambda item: item[0])]
        final = shard_path(self.prefix, shard, self.shards)
        temporary = f"{final}.tmp"
        with FileSystems.create(temporary) as handle:
            handle.write("".join(f"{line}\n" for line in lines).encode("utf-8"))
        FileSystems.rename([temporary], [final])  # replaces an earlier run's shard in one step
        yield final


def shard_path(prefix: str, shard: int, shards: int) -> str:
    return f"{prefix}-{shard:05d}-of-{shards:05d}.jsonl"


class WriteShards(beam.PTransform):
    """``(sort key, record)`` pairs → ``shards`` JSONL files under ``prefix``, every shard written
    (an empty one too, so no stale file of an earlier run is left with the same name)."""

    def __init__(self, prefix: str, shards: int):
        super().__init__()
        self.prefix = prefix
        self.shards = shards

    def expand(self, keyed):
        shards = self.shards
        every = keyed.pipeline | "EveryShard" >> beam.Create([(i, None) for i in range(shards)])
        return ((keyed | "ToShard" >> beam.Map(lambda item: (shard_of(item[0][0], item[0][1], shards), item)),
                 every)
                | "Both" >> beam.Flatten()
                | "ByShard" >> beam.GroupByKey()
                | "Write" >> beam.ParDo(WriteShard(self.prefix, shards)))


def build_pipeline(pipeline: beam.Pipeline, pattern: str, output: str, handler: SentenceLabeller,
                   shards: int, tokenized: bool = False) -> None:
    """Add the corpus-labelling steps (module docstring) to ``pipeline``."""
    read = (pipeline
            | "Pattern" >> beam.Create([pattern])
            | "Match" >> fileio.MatchAll()
            | "Open" >> fileio.ReadMatches()
            | "SpreadFiles" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(ReadParagraphs()).with_outputs(DEAD, main="lines"))
    split = (read.lines
             | "SpreadLines" >> beam.Reshuffle()
             | "Split" >> beam.ParDo(SplitSentences(handler.max_sentence_tokens, tokenized))
             .with_outputs(DEAD, "records", main="sentences"))
    labelled, failed = split.sentences | "Label" >> RunInference(handler).with_exception_handling()
    records = (labelled | "Record" >> beam.ParDo(ToRecord()), split.records) | "Records" >> beam.Flatten()
    records | "WriteRecords" >> WriteShards(output, shards)
    dead = ((read[DEAD], split[DEAD], failed.failed_inferences | "Failed" >> beam.ParDo(FailedBatch()))
            | "DeadLetters" >> beam.Flatten()
            | "KeyDead" >> beam.Map(lambda d: (_sort_key(d["source"], d["line"], d.get("sentence")), d)))
    dead | "WriteDeadLetters" >> WriteShards(f"{output}-dead-letters", 1)


def counter_values(result) -> dict[str, int]:
    """The pipeline's ``lisa_tf`` counters (committed where the runner reports them)."""
    from apache_beam.metrics.metric import MetricsFilter

    values = dict.fromkeys(COUNTERS, 0)
    for counter in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        name = counter.key.metric.name
        if name in values:
            values[name] += counter.committed if counter.committed is not None else counter.attempted
    return values
