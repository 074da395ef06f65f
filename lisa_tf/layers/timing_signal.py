"""Sinusoidal position encoding ("timing signal") added to the input embeddings.

DeepAtt (Tan et al. 2018, §3 "Position Encoding", Eqns 11-12) and LISA (Strubell et al. 2018,
§2.1) both use the timing signal of Vaswani et al. (2017):

```
timing(t, 2i)     = sin(t / 10000^(2i/d))      (DeepAtt Eqn 11)
timing(t, 2i + 1) = cos(t / 10000^(2i/d))      (DeepAtt Eqn 12)
```

``keras_hub.layers.SinePositionEncoding`` computes exactly these equations: sines on the even
channels, cosines on the odd channels (the *interleaved* layout). The authors' Tensor2Tensor code
instead *concatenates* a block of sines and a block of cosines, with the inverse timescales spaced
geometrically between ``1/min_timescale`` and ``1/max_timescale`` over ``d/2`` channels, i.e.
``[sin(t·r_0) … sin(t·r_{d/2-1}), cos(t·r_0) … cos(t·r_{d/2-1})]`` with
``r_i = min_timescale⁻¹ · (min_timescale / max_timescale)^(i / (d/2 − 1))``. The two layouts
carry the same information up to a fixed permutation of channels and a slightly different
frequency spacing; since the signal is added to learned embeddings, the network is indifferent to
which one is used. Both are offered (``layout``), the paper's equations are the default.

:class:`TimingSignal` reuses keras-hub's layer for the paper's layout and differs from it in one
respect: it always computes in float32. Under a ``mixed_bfloat16`` policy keras-hub's layer would
compute the angles ``t / 10000^(2i/d)`` in bfloat16 (8 significant bits), so position 100 is
indistinguishable from position 101 in the fast channels; here the sines are computed in float32
and only the result is cast to the layer's compute dtype.
"""

from __future__ import annotations

import math

import keras
from keras import ops

_LAYOUTS = ("interleave", "concat")


@keras.saving.register_keras_serializable(package="lisa_tf")
class TimingSignal(keras.layers.Layer):
    """Sinusoidal position encoding of Vaswani et al. (2017), computed in float32.

    Returns a tensor of the input's shape, to be added to the token embeddings. The encoding of
    position ``t`` does not depend on the sequence length, so padding at the end of a sequence
    does not change the encoding of the real tokens.

    Args:
        max_wavelength: float. The longest wavelength (``10000`` in the papers; the
            ``max_timescale`` of the authors' code).
        min_timescale: float. The shortest timescale of the ``"concat"`` layout (``1.0`` in the
            authors' code); the ``"interleave"`` layout always starts at 1.
        layout: ``"interleave"`` (default): DeepAtt Eqns 11-12 / Vaswani et al., sines on even
            channels and cosines on odd channels, computed by keras-hub's
            ``SinePositionEncoding``. ``"concat"``: the authors' Tensor2Tensor code, all sines
            then all cosines (an odd channel count gets one trailing zero channel).
        **kwargs: other keyword arguments of ``keras.layers.Layer`` (``name``, ``dtype``, ...).
            The output has the layer's compute dtype (float32 unless a policy is given); the
            sines are computed in float32 in every case.

    Call arguments:
        inputs: a tensor ``[batch, time, hidden]``; only its shape is used.
        start_index: int or scalar int tensor; the position of the first time step.
        positions: optional ``[time]`` or ``[batch, time]`` positions, used instead of
            ``start_index + arange(time)``.

    Example:
    ```python
    embeddings = keras.random.normal((2, 7, 16))
    timing = TimingSignal()(embeddings)          # [2, 7, 16], float32
    inputs = embeddings + timing                 # DeepAtt §3: "simply added to the input embeddings"
    ```

    References:
        - Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", §3, Eqns 11-12.
        - Vaswani et al. 2017, "Attention Is All You Need", §3.5.
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", §2.1.
    """

    def __init__(self, max_wavelength: float = 10000.0, min_timescale: float = 1.0, layout: str = "interleave", **kwargs):
        if layout not in _LAYOUTS:
            raise ValueError(f"layout must be one of {_LAYOUTS}, found {layout!r}")
        super().__init__(**kwargs)
        self.max_wavelength = max_wavelength
        self.min_timescale = min_timescale
        self.layout = layout
        # keras-hub (with its model registry, ~0.4 s) is imported where a model is built, not by `import
        # lisa_tf` (which registers this class): a script labelling through an export builds none.
        import keras_hub

        # keras-hub's layer computes in its own compute dtype: pin it to float32.
        self.sine = keras_hub.layers.SinePositionEncoding(max_wavelength=max_wavelength, dtype="float32", name="sine")
        self.built = True

    def call(self, inputs, start_index=0, positions=None):
        shape = ops.shape(inputs)
        # The signal depends only on the shape: compute it on a float32 stand-in [1 or B, T, d].
        rows = 1
        if positions is not None:
            positions = ops.cast(positions, "float32")
            if len(ops.shape(positions)) == 2:
                rows = ops.shape(positions)[0]
        stand_in = ops.zeros((rows, shape[-2], shape[-1]), dtype="float32")
        if self.layout == "interleave":
            signal = self.sine(stand_in, start_index=start_index, positions=positions)
        else:
            signal = self._concatenated(stand_in, start_index, positions)
        return ops.cast(ops.broadcast_to(signal, shape), self.compute_dtype)

    def _concatenated(self, stand_in, start_index, positions):
        """Tensor2Tensor's layout: ``[sin(t·r) | cos(t·r)]`` with geometric inverse timescales ``r``."""
        length, channels = ops.shape(stand_in)[-2], ops.shape(stand_in)[-1]
        if positions is None:
            positions = ops.cast(ops.arange(length) + start_index, "float32")
        if len(ops.shape(positions)) == 1:
            positions = ops.expand_dims(positions, 0)
        num_timescales = channels // 2
        log_increment = math.log(float(self.max_wavelength) / float(self.min_timescale)) / ops.maximum(
            ops.cast(num_timescales, "float32") - 1.0, 1.0
        )
        inverse_timescales = (1.0 / self.min_timescale) * ops.exp(
            -ops.cast(ops.arange(num_timescales), "float32") * log_increment
        )
        angles = ops.einsum("bt,c->btc", positions, inverse_timescales)
        signal = ops.concatenate([ops.sin(angles), ops.cos(angles)], axis=-1)
        return ops.pad(signal, [[0, 0], [0, 0], [0, channels - 2 * num_timescales]])

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {"max_wavelength": self.max_wavelength, "min_timescale": self.min_timescale, "layout": self.layout}
        )
        return config
