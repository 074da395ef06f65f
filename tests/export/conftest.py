"""Fixtures for the REST server tests: a tiny SavedModel with the project's signature layout.

``tiny_model_base`` is a TensorFlow Serving model base path with versions ``1`` and ``2`` of a small
``tf.Module`` whose signatures mimic the exported SRL models':

- ``serving_default``: ``tokens`` string ``[batch, time]`` (padded with ``""``);
- ``with_parse``: ``tokens`` + ``parse_heads`` int32 ``[batch, time]`` (1-based heads, 0 = root,
  -1 on padding); the graph asserts one head per token and heads within the sentence, so bad parses
  fail inside the model as they would in the real one;
- ``sentences``: ``sentences`` string ``[batch]``, a signature with a single output.

The outputs are simple functions of the inputs, computed with core TF ops, so tests state the exact
expected answers by hand (see ``rest_cases.py``):

- ``upper``: ``tf.strings.upper(tokens)`` (ASCII upper-casing; ``é`` stays ``é``);
- ``first_byte``: the first byte of each token (``"é"`` -> the lone byte ``0xC3``, not UTF-8);
- ``token_bytes``: the tokens again, under a name ending in ``_bytes`` (always base64 in JSON);
- ``byte_lengths``: int64 ``[batch, time]`` UTF-8 byte length of each token;
- ``length``: int32 ``[batch]`` number of non-empty tokens;
- ``scaled_length``: float32 ``[batch]``, ``length * scale`` with the variable ``scale`` = 0.25 in
  version 1 and 0.5 in version 2 (so answers tell the versions apart);
- ``with_parse`` adds ``head_words`` (the head's token, ``ROOT`` for 0, ``""`` on padding) and
  ``num_roots`` int32 ``[batch]``; ``sentences`` returns ``num_tokens`` int64 ``[batch]``.
"""

from __future__ import annotations

import pathlib

import pytest

MODEL_NAME = "tiny"  # the name rest_cases.MODEL expects
SCALES = {1: 0.25, 2: 0.5}


def _build_module(scale: float):
    import tensorflow as tf

    tokens_spec = tf.TensorSpec([None, None], tf.string, name="tokens")
    heads_spec = tf.TensorSpec([None, None], tf.int32, name="parse_heads")

    class Tiny(tf.Module):
        """Signatures shaped like the exported SRL model's, with hand-checkable outputs."""

        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(scale, dtype=tf.float32, trainable=False, name="scale")

        def _token_outputs(self, tokens):
            length = tf.reduce_sum(tf.cast(tf.not_equal(tokens, ""), tf.int32), axis=1)
            return {
                "upper": tf.strings.upper(tokens),
                "first_byte": tf.strings.substr(tokens, 0, 1, unit="BYTE"),
                "token_bytes": tf.identity(tokens),
                "byte_lengths": tf.cast(tf.strings.length(tokens, unit="BYTE"), tf.int64),
                "length": length,
                "scaled_length": tf.cast(length, tf.float32) * self.scale,
            }

        @tf.function(input_signature=[tokens_spec])
        def serve(self, tokens):
            return self._token_outputs(tokens)

        @tf.function(input_signature=[tokens_spec, heads_spec])
        def with_parse(self, tokens, parse_heads):
            time = tf.shape(tokens)[1]
            checks = [
                tf.debugging.assert_equal(tf.shape(tokens), tf.shape(parse_heads),
                                          message="parse_heads must have one head per token"),
                tf.debugging.assert_less_equal(parse_heads, time, message="head index beyond the sentence"),
                tf.debugging.assert_greater_equal(parse_heads, -1, message="head index below -1"),
            ]
            with tf.control_dependencies(checks):
                batch = tf.shape(tokens)[0]
                with_root = tf.concat([tf.fill([batch, 1], "ROOT"), tokens], axis=1)
                gathered = tf.gather(with_root, tf.maximum(parse_heads, 0), batch_dims=1)
                outputs = self._token_outputs(tokens)
                outputs["head_words"] = tf.where(parse_heads < 0, tf.constant(""), gathered)
                outputs["num_roots"] = tf.reduce_sum(tf.cast(tf.equal(parse_heads, 0), tf.int32), axis=1)
            return outputs

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="sentences")])
        def count(self, sentences):
            return {"num_tokens": tf.strings.split(sentences).row_lengths()}

    return Tiny()


def save_tiny_model(base: pathlib.Path) -> pathlib.Path:
    """Write versions 1 and 2 of the tiny model under ``base`` (plus a non-version folder)."""
    import tensorflow as tf

    for version, scale in SCALES.items():
        module = _build_module(scale)
        tf.saved_model.save(module, str(base / str(version)), signatures={
            "serving_default": module.serve, "with_parse": module.with_parse, "sentences": module.count})
    (base / "notes").mkdir()  # not a number: not a version, for either server
    (base / "notes" / "README.txt").write_text("not a model version\n", encoding="utf-8")
    return base


@pytest.fixture(scope="session")
def tiny_model_base(tmp_path_factory) -> pathlib.Path:
    """Model base path ``.../tiny`` holding versions 1 and 2 of the tiny SavedModel."""
    pytest.importorskip("tensorflow")
    return save_tiny_model(tmp_path_factory.mktemp("models") / MODEL_NAME)


@pytest.fixture(scope="session")
def deepatt_export(deepatt_run, tmp_path_factory) -> pathlib.Path:
    """The tiny DeepAtt run's SavedModel export (``…/srl/1``)."""
    from export.saved_model import export_run

    from tests.conftest import built_once

    base = built_once(tmp_path_factory, "deepatt_export", lambda base: export_run(deepatt_run, base / "srl" / "1"))
    return base / "srl" / "1"
