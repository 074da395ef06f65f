"""Fresh copies of Keras initializers, so that no two weights share one random draw.

A Keras 3 random initializer draws its seed once, when it is constructed: calling the same
instance twice gives the same values, seeded or not. A layer that creates several weights from
one ``kernel_initializer`` argument therefore gives each weight its own copy
(:func:`clone_initializer`). An unseeded copy draws a new seed; a seeded copy keeps the seed, plus
an optional ``seed_offset`` that the caller makes distinct per weight when the weights must differ
from one another yet stay reproducible.
"""

from __future__ import annotations

import keras


def clone_initializer(initializer, seed_offset: int = 0):
    """A fresh copy of a Keras initializer.

    Args:
        initializer: a ``keras.initializers.Initializer``, or anything ``keras.initializers.get``
            accepts (a name such as ``"orthogonal"``, a config dict).
        seed_offset: int added to an integer ``seed`` of the initializer's config (initializers
            without an integer seed ignore it). Default 0: the copy has the same seed.

    Returns:
        A new initializer of the same class and config (seed shifted by ``seed_offset``).

    Example:
    ```python
    seeded = keras.initializers.Orthogonal(seed=1)
    kernel_q = clone_initializer(seeded, seed_offset=0)((4, 4))
    kernel_k = clone_initializer(seeded, seed_offset=1)((4, 4))   # differs from kernel_q
    fresh = clone_initializer("orthogonal")                        # an unseeded copy
    ```
    """
    initializer = keras.initializers.get(initializer)
    config = initializer.get_config()
    if seed_offset and isinstance(config.get("seed"), int):
        config["seed"] = config["seed"] + seed_offset
    return initializer.__class__.from_config(config)
