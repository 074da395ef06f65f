"""ELMo's scalar mix: a learned, softmax-normalised weighting of an encoder's layers.

Peters et al. (2018, §3.2, Eqn 1) collapse the ``L + 1`` layer outputs ``h_k`` of a frozen
language model into one vector per token for the downstream task::

    ELMo_t = γ · Σ_k s_k · h_{t,k}        with s = softmax(w)

``w`` (one scalar per layer, initialised to 0, i.e. an equal mix) and ``γ`` (initialised to 1)
are learned with the task; the encoder stays frozen. This is how the papers' "+ELMo" rows feed
contextual vectors to the SRL encoder (Strubell et al. 2018, §5; Tan et al. 2018 report none).
"""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="lisa_tf")
class ScalarMix(keras.layers.Layer):
    """``γ · Σ_k softmax(w)_k · h_k`` over the layer axis of a stack of layer outputs.

    The weights and the sum are computed in float32 (the softmax of a handful of scalars); the
    result has the layer's compute dtype. Positions are mixed independently, so padding needs no
    mask: a padded position's output is the mix of its (padding) inputs, and a mask passed with the
    inputs is passed on unchanged.

    Args:
        num_layers: ``L + 1``, how many layer outputs are mixed (MiniLM-L6: 7, the embeddings and
            the 6 transformer layers).
        axis: the layer axis of the input (default ``-2``: inputs ``[..., layers, width]``).
        initial_weights: optional ``num_layers`` initial values of ``w`` (default zeros).
        learn_weights: learn ``w`` (default True); with False the mix stays as initialised.
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: float ``[..., num_layers, width]`` (or the layer axis at ``axis``).
        mask: optional mask of the positions; not used by the computation, returned as the output's
            mask.

    Returns:
        The input without the layer axis, e.g. ``[B, T, width]``.

    Example:
    ```python
    layers = keras.random.normal((2, 5, 7, 384))   # [batch, tokens, layers, width]
    mixed = ScalarMix(num_layers=7)(layers)        # [2, 5, 384]; initially γ · mean over layers
    ```

    References:
        - Peters et al. 2018, "Deep contextualized word representations", NAACL, §3.2, Eqn 1.
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", EMNLP, §5 (LISA with ELMo).
    """

    def __init__(self, num_layers: int, axis: int = -2, initial_weights=None, learn_weights: bool = True, **kwargs):
        # Read the weights in float32 under a mixed policy (no autocast): they are a handful of scalars.
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        if num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, found {num_layers}")
        if initial_weights is not None and len(initial_weights) != num_layers:
            raise ValueError(f"initial_weights needs {num_layers} values, found {len(initial_weights)}")
        self.num_layers = num_layers
        self.axis = axis
        self.initial_weights = None if initial_weights is None else [float(w) for w in initial_weights]
        self.learn_weights = learn_weights
        self.supports_masking = True
        self.layer_weights = self.add_weight(
            name="layer_weights",
            shape=(num_layers,),
            initializer=(
                keras.initializers.Constant(self.initial_weights) if self.initial_weights is not None else "zeros"
            ),
            trainable=learn_weights,
            dtype="float32",
        )
        self.gamma = self.add_weight(name="gamma", shape=(), initializer="ones", dtype="float32")
        self.built = True

    def mixing_weights(self):
        """``softmax(w)``, float32 ``[num_layers]``."""
        return ops.softmax(ops.cast(self.layer_weights, "float32"))

    def call(self, inputs, mask=None):
        if inputs.shape[self.axis] is not None and inputs.shape[self.axis] != self.num_layers:
            raise ValueError(f"expected {self.num_layers} layers on axis {self.axis}, found shape {inputs.shape}")
        rank = len(inputs.shape)
        axis = self.axis % rank
        shape = [1] * rank
        shape[axis] = self.num_layers
        s = ops.reshape(self.mixing_weights(), shape)
        mixed = ops.cast(self.gamma, "float32") * ops.sum(ops.cast(inputs, "float32") * s, axis=axis)
        return ops.cast(mixed, self.compute_dtype)

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        del shape[self.axis % len(shape)]
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers,
            axis=self.axis,
            initial_weights=self.initial_weights,
            learn_weights=self.learn_weights,
        )
        return config
