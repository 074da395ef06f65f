"""Mixed-precision policy from the config.

``auto`` picks ``mixed_float16`` on a GPU (Keras wraps the optimiser in a ``LossScaleOptimizer``),
``mixed_bfloat16`` on a CPU with native bf16 instructions (AVX512-BF16 or AMX), and ``float32``
otherwise. Softmax, losses and Viterbi always run in float32 (the layers cast), and exports are float32.
"""

from __future__ import annotations

import keras
import tensorflow as tf

_BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_has_bf16() -> bool:
    """True when /proc/cpuinfo lists a native bf16 instruction set."""
    try:
        with open("/proc/cpuinfo") as handle:
            flags = handle.read()
    except OSError:
        return False
    return any(flag in flags for flag in _BF16_CPU_FLAGS)


def resolve_policy(name: str = "auto") -> str:
    """The policy name ``auto`` stands for on this machine (other names pass through)."""
    if name != "auto":
        return name
    if tf.config.list_logical_devices("GPU"):
        return "mixed_float16"
    return "mixed_bfloat16" if cpu_has_bf16() else "float32"


def set_policy(name: str = "auto") -> str:
    """Set Keras' global dtype policy; returns the resolved name."""
    resolved = resolve_policy(name)
    keras.mixed_precision.set_global_policy(resolved)
    return resolved
