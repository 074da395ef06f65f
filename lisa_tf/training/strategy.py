"""Distribution strategy from the config.

``auto`` mirrors over every visible GPU (``tf.distribute.MirroredStrategy``) and uses the default
strategy on a CPU-only machine; ``multiworker`` builds ``MultiWorkerMirroredStrategy`` from the
``TF_CONFIG`` environment variable (how users scale past one machine); ``mirrored`` mirrors over all
logical devices of the preferred type, which on a CPU-only machine lets tests exercise the multi-replica
code path with :func:`split_cpu` devices.
"""

from __future__ import annotations

import json
import os

import tensorflow as tf


class StrategyError(RuntimeError):
    """The requested strategy cannot be built here (says why)."""


def split_cpu(count: int) -> None:
    """Expose ``count`` logical CPU devices (must run before TensorFlow initialises its devices)."""
    cpus = tf.config.list_physical_devices("CPU")
    try:
        tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * count)
    except RuntimeError as error:
        raise StrategyError(f"cannot split the CPU into {count} devices after TensorFlow started: {error}") from error


def make_strategy(kind: str = "auto") -> tf.distribute.Strategy:
    """Build the distribution strategy named by ``TrainConfig.strategy``."""
    if kind == "multiworker":
        # Must come before anything initialises the TensorFlow runtime (even listing devices).
        if "TF_CONFIG" not in os.environ:
            raise StrategyError(
                "strategy 'multiworker' needs TF_CONFIG, e.g. "
                '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, "task": {"type": "worker", "index": 0}}'
            )
        try:
            json.loads(os.environ["TF_CONFIG"])
        except json.JSONDecodeError as error:
            raise StrategyError(f"TF_CONFIG is not valid JSON: {error}") from error
        return tf.distribute.MultiWorkerMirroredStrategy()
    gpus = tf.config.list_logical_devices("GPU")
    if kind == "auto":
        return tf.distribute.MirroredStrategy() if gpus else tf.distribute.get_strategy()
    if kind == "default":
        return tf.distribute.get_strategy()
    if kind == "mirrored":
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([d.name for d in devices])
    raise StrategyError(f"unknown strategy {kind!r}; expected auto, default, mirrored or multiworker")


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process writes run outputs (always, except non-chief multi-worker tasks)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not getattr(resolver, "cluster_spec", None) or not resolver.cluster_spec().as_dict():
        return True
    return resolver.task_type in (None, "chief") or (resolver.task_type == "worker" and resolver.task_id == 0)

