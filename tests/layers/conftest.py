"""Fixtures of the layer tests: a global mixed-precision policy that is always restored."""

from __future__ import annotations

import keras
import pytest


@pytest.fixture(params=["mixed_bfloat16", "mixed_float16"])
def mixed_policy(request):
    """Run the test under a mixed-precision global policy, then restore float32."""
    previous = keras.config.dtype_policy()
    keras.mixed_precision.set_global_policy(request.param)
    try:
        yield request.param
    finally:
        keras.mixed_precision.set_global_policy(previous)


def roundtrip(layer, *build_inputs):
    """A new layer from ``keras.saving`` (de)serialisation of ``layer``, with ``layer``'s weights."""
    config = keras.saving.serialize_keras_object(layer)
    clone = keras.saving.deserialize_keras_object(config)
    assert clone.get_config() == layer.get_config()
    clone(*build_inputs)
    clone.set_weights(layer.get_weights())
    return clone
