"""The frozen contextual encoder's features, computed once per sentence and kept on disk.

The encoder of ``model.contextual`` is frozen (:mod:`lisa_tf.models.contextual`), so its output for
a sentence never changes: training computes it once and reads it back every epoch, and every later
run with the same encoder and sentences reuses it. Only the scalar mix and what follows it train.

Layout: ``<directory>/<encoder identity>-<pooling>/`` holds shards, one per build that computed
something, each a pair ``shard-<time>-<pid>.npy`` (float16 ``[tokens, L + 1, width]``, the
sentences' words one after the other) and ``.json`` (each sentence's key, first row and length). A sentence's key is a hash of
its tokens; the directory name is the content hash of the encoder's files
(:func:`~lisa_tf.models.contextual.encoder_identity`) and the pooling, so a different encoder or
pooling never reads another's features. Shards are written to a temporary name and renamed, so an
interrupted build leaves whole shards only; the next build computes what is missing.

float16 keeps the cache at ``(L + 1) · width · 2`` bytes a token (MiniLM-L6: 7 · 384 · 2 = 5376
bytes); the features are layer-normalised activations of magnitude ~1-10, where float16 keeps about
three significant digits.

Export does not use the cache: a SavedModel runs the encoder in-graph on its input tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
import time
from typing import Callable, Iterable, Optional, Sequence

import numpy as np
import tensorflow as tf

from lisa_tf.models.contextual import ContextualWordFeatures, encoder_identity


def sentence_key(tokens: Sequence[str]) -> str:
    """The cache key of a tokenised sentence: a hash of its exact tokens."""
    return hashlib.sha1("\x1f".join(tokens).encode("utf-8")).hexdigest()


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class FeatureCache:
    """Per-sentence contextual features on disk, float16 (see the module docstring).

    Args:
        directory: the cache's root directory (created when needed); one subdirectory per encoder
            identity and pooling.
        encoder: ``model.contextual`` (``"minilm"`` or a preset directory).
        pooling: ``model.contextual_pooling``.

    Example:
    ```python
    cache = FeatureCache("runs/.contextual", "minilm")
    cache.build([s.words for s in sentences])          # computes what is missing, reports its size
    features = cache.batch([["The", "cat", "sat"]], width=5)   # float16 [1, 5, 7, 384]
    dataset = dataset.map(cache.attach)                # adds "contextual_features" to each batch
    ```
    """

    def __init__(self, directory: str | os.PathLike, encoder: str = "minilm", pooling: str = "first"):
        self.encoder = encoder
        self.pooling = pooling
        self.directory = pathlib.Path(directory) / f"{encoder_identity(encoder)}-{pooling}"
        self._index: dict[str, tuple[int, int, int]] = {}
        self._shards: list[np.ndarray] = []
        self._read()

    # ----------------------------------------------------------------------------------- reading
    def _read(self) -> None:
        self._index, self._shards = {}, []
        if not self.directory.is_dir():
            return
        for index_path in sorted(self.directory.glob("shard-*.json")):
            data_path = index_path.with_suffix(".npy")
            if not data_path.is_file():
                continue
            shard = len(self._shards)
            self._shards.append(np.load(data_path, mmap_mode="r"))
            entries = json.loads(index_path.read_text())
            for key, start, length in zip(entries["keys"], entries["starts"], entries["lengths"]):
                self._index[key] = (shard, start, length)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, tokens: Sequence[str]) -> bool:
        return sentence_key(tokens) in self._index

    def size_bytes(self) -> int:
        """Bytes of the cache's files on disk."""
        return sum(p.stat().st_size for p in self.directory.glob("shard-*")) if self.directory.is_dir() else 0

    def features(self, tokens: Sequence[str]) -> np.ndarray:
        """float16 ``[len(tokens), L + 1, width]`` of a cached sentence.

        Raises:
            KeyError: the sentence is not in the cache (:meth:`build` it first).
        """
        key = sentence_key(tokens)
        if key not in self._index:
            raise KeyError(f"sentence not in the contextual feature cache {self.directory}: {' '.join(tokens)[:80]!r}")
        shard, start, length = self._index[key]
        return np.asarray(self._shards[shard][start:start + length])

    def batch(self, sentences: Iterable[Sequence[str]], width: Optional[int] = None) -> np.ndarray:
        """float16 ``[B, width, L + 1, width_h]`` for padded sentences (``""`` tokens are padding)."""
        rows = [[t for t in tokens if t] for tokens in sentences]
        width = width if width is not None else max((len(r) for r in rows), default=0)
        shape = self._shards[0].shape[1:] if self._shards else (0, 0)
        out = np.zeros((len(rows), width) + tuple(shape), np.float16)
        for i, tokens in enumerate(rows):
            if tokens:
                out[i, :len(tokens)] = self.features(tokens)
        return out

    def attach(self, features: dict) -> dict:
        """``features`` plus ``contextual_features`` read from the cache for its ``tokens`` (string
        ``[B, T]``, padded with ``""``): for ``tf.data.Dataset.map`` over preprocessed batches. The
        backbone then skips the encoder (:meth:`SrlBackbone.embed`)."""
        tokens = features["tokens"]

        def read(batch):
            return self.batch([[t.decode("utf-8") for t in row] for row in batch], width=batch.shape[1])

        cached = tf.numpy_function(read, [tokens], tf.float16, stateful=False)
        shape = self._shards[0].shape[1:] if self._shards else (None, None)
        cached.set_shape(tokens.shape.concatenate(shape))
        return {**features, "contextual_features": cached}

    # ---------------------------------------------------------------------------------- building
    def build(
        self,
        sentences: Iterable[Sequence[str]],
        encoder: Optional[ContextualWordFeatures] = None,
        batch_words: int = 2048,
        log: Callable[[str], None] = _stderr_line,
    ) -> dict:
        """Compute and store the features of every sentence not yet cached, with a progress line;
        returns ``{"sentences", "computed", "tokens", "seconds", "bytes"}`` and logs the cache's
        size.

        Args:
            sentences: tokenised sentences.
            encoder: the :class:`ContextualWordFeatures` to run (default: a new one of this cache's
                encoder and pooling).
            batch_words: about how many words the encoder reads at once (sentences sorted by length).
            log: where the progress and summary lines go (default: standard error).
        """
        wanted: dict[str, list[str]] = {}
        for tokens in sentences:
            tokens = list(tokens)
            key = sentence_key(tokens)
            if key not in self._index and tokens:
                wanted[key] = tokens
        total = len(wanted)
        start_time = time.perf_counter()
        computed_tokens = 0
        if wanted:
            if encoder is None:
                encoder = ContextualWordFeatures(self.encoder, pooling=self.pooling)
            elif (encoder.encoder, encoder.pooling) != (self.encoder, self.pooling):
                raise ValueError(f"the encoder ({encoder.encoder!r}, {encoder.pooling!r}) is not this cache's "
                                 f"({self.encoder!r}, {self.pooling!r})")
            run = tf.function(encoder.__call__, input_signature=[tf.TensorSpec([None, None], tf.string)])
            keys = sorted(wanted, key=lambda k: len(wanted[k]))
            blocks, starts, lengths, done, row = [], [], [], 0, 0
            i = 0
            while i < len(keys):
                # Sorted by length: the group's last sentence is its longest, the padded size (j - i) · len.
                j = i + 1
                while j < len(keys) and (j - i + 1) * len(wanted[keys[j]]) <= batch_words:
                    j += 1
                group = [wanted[k] for k in keys[i:j]]
                width = max(len(t) for t in group)
                padded = tf.constant([t + [""] * (width - len(t)) for t in group])
                out = run(padded).numpy().astype(np.float16)
                for tokens, features in zip(group, out):
                    blocks.append(features[:len(tokens)])
                    starts.append(row)
                    lengths.append(len(tokens))
                    row += len(tokens)
                done += len(group)
                computed_tokens += sum(len(t) for t in group)
                elapsed = time.perf_counter() - start_time
                log(f"[lisa_tf] contextual features ({self.encoder}): {done}/{total} sentences, "
                    f"{computed_tokens / max(elapsed, 1e-9):.0f} words/s")
                i = j
            self._write(keys, starts, lengths, np.concatenate(blocks, axis=0))
            self._read()
        seconds = time.perf_counter() - start_time
        stats = {"sentences": len(self), "computed": total, "tokens": computed_tokens, "seconds": round(seconds, 2),
                 "bytes": self.size_bytes()}
        log(f"[lisa_tf] contextual feature cache {self.directory}: {stats['sentences']} sentences, "
            f"{stats['bytes'] / 2**20:.1f} MiB ({total} computed in {seconds:.1f} s)")
        return stats

    def _write(self, keys, starts, lengths, data: np.ndarray) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        # Named by time and process: two runs building the same cache at once never pick one name.
        name = f"shard-{time.time_ns():020d}-{os.getpid()}"
        base = self.directory / name
        temporary = self.directory / f".tmp-{name}"
        np.save(f"{temporary}.npy", data)
        pathlib.Path(f"{temporary}.json").write_text(json.dumps({"keys": keys, "starts": starts, "lengths": lengths}))
        # The data first: a shard is read only when its index exists.
        os.replace(f"{temporary}.npy", f"{base}.npy")
        os.replace(f"{temporary}.json", f"{base}.json")
