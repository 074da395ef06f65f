"""Per-variable learning rates: a fine-tuned encoder learns slower than the task layers on top of it.

Fine-tuning a pretrained encoder with the task's learning rate erases what it learnt; BERT-style
fine-tuning uses a learning rate about two orders of magnitude below a freshly initialised model's, and
lower still for the lower layers (layer-wise learning-rate decay: Howard & Ruder 2018, "Universal
Language Model Fine-tuning", §3.2 "discriminative fine-tuning"; Clark et al. 2020, "ELECTRA", appendix
A). For a variable ``v`` with scale ``s_v`` the optimiser's step is taken with ``lr · s_v``:

    lr_v(step) = s_v · lr(step),      s_v = encoder_scale · decay^(L − k) in encoder block k of L

Keras' optimisers take one learning rate (a schedule) for all their variables. Scaling the gradient
instead would not do: Adam-type optimisers divide the gradient by its own running magnitude, so a
scaled gradient gives the same step. :func:`with_learning_rate_scales` therefore subclasses the
configured optimiser and scales the learning rate handed to its per-variable ``update_step``; the scales
are given by variable path (``variable.path``), so the optimiser needs to know nothing of the model.

Example:
```python
optimizer = with_learning_rate_scales(keras.optimizers.Nadam, {"lisa/encoder/layer_5/kernel": 0.05})(
    learning_rate=1e-3)
```
"""

from __future__ import annotations

from typing import Mapping

import keras

_CLASSES: dict = {}


class _ScaledLearningRates:
    """Mixed into a Keras optimiser class: ``learning_rate_scales`` maps variable paths to multipliers
    of the learning rate (1 for any other variable)."""

    def __init__(self, *args, learning_rate_scales: Mapping[str, float] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.learning_rate_scales = dict(learning_rate_scales or {})

    def build(self, variables):
        super().build(variables)
        # update_step may be handed the backend's variable (a tf.Variable, no path): look scales up by
        # the optimiser's own index of its variables
        self._scales = [float(self.learning_rate_scales.get(v.path, 1.0)) for v in variables]

    def update_step(self, gradient, variable, learning_rate):
        scale = self._scales[self._get_variable_index(variable)]
        if scale != 1.0:
            learning_rate = learning_rate * scale
        return super().update_step(gradient, variable, learning_rate)

    def get_config(self):
        return {**super().get_config(), "learning_rate_scales": self.learning_rate_scales}


def with_learning_rate_scales(optimizer_class: type) -> type:
    """``optimizer_class`` (a ``keras.optimizers.Optimizer`` subclass) with a ``learning_rate_scales``
    argument; one class per optimiser class, registered for ``keras.saving`` as ``Scaled<Name>``."""
    if optimizer_class not in _CLASSES:
        name = f"Scaled{optimizer_class.__name__}"
        scaled = type(name, (_ScaledLearningRates, optimizer_class), {"__module__": __name__})
        _CLASSES[optimizer_class] = keras.saving.register_keras_serializable(package="lisa_tf", name=name)(scaled)
    return _CLASSES[optimizer_class]
