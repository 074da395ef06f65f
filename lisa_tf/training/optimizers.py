"""Optimisers and learning-rate schedules of the papers, built from Keras' own.

* DeepAtt (Tan et al. 2018, §4 "Model Setup"): Adadelta (lr 1.0, ρ 0.95, ε 1e-6), learning rate halved at
  400k and 500k steps — ``keras.optimizers.schedules.PiecewiseConstantDecay``.
* LISA (Strubell et al. 2018, §4 / appendix): Nadam (β1 0.9, β2 0.98, ε 1e-12) with
  lr = base · min(step^-0.5, step · warmup^-1.5) (Vaswani et al. 2017, Eqn 3): :class:`WarmupInverseSqrt`.
* Fine-tuning a pre-trained encoder, the usual alternative: linear warm-up, then linear decay to 0
  (:class:`WarmupLinearDecay`, ``train.schedule = "linear"``).
* All clip the global gradient norm (``global_clipnorm``).
* A fine-tuned contextual encoder learns at a fraction of the rate, less in its lower blocks
  (:mod:`lisa_tf.training.learning_rate_scales`).
"""

from __future__ import annotations

from typing import Optional

import keras
import tensorflow as tf

from lisa_tf.config import TrainConfig
from lisa_tf.training.learning_rate_scales import with_learning_rate_scales


@keras.saving.register_keras_serializable(package="lisa_tf")
class WarmupInverseSqrt(keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = base · min(step^-0.5, step · warmup^-1.5), with step counted from 1.

    Args:
        base: the multiplier (LISA: 0.04).
        warmup_steps: steps of linear warm-up (LISA: 8000).

    References:
        Vaswani et al. 2017, Eqn 3; Strubell et al. 2018 (appendix: training details).
    """

    def __init__(self, base: float, warmup_steps: int):
        self.base = base
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32) + 1.0
        warmup = tf.cast(self.warmup_steps, tf.float32)
        return self.base * tf.minimum(tf.math.rsqrt(step), step * warmup**-1.5)

    def get_config(self):
        return {"base": self.base, "warmup_steps": self.warmup_steps}


@keras.saving.register_keras_serializable(package="lisa_tf")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = peak · (step + 1) / warmup during the warm-up, then Keras' ``PolynomialDecay`` of power 1
    from ``peak`` to 0 over the remaining steps: the schedule BERT-style fine-tuning uses (Devlin et al.
    2019, §A.2; Shi & Lin 2019 fine-tune their SRL models with it).

    Args:
        peak: the learning rate at the end of the warm-up.
        warmup_steps: steps of linear warm-up.
        total_steps: the step where the rate reaches 0 (``train.max_steps``).
    """

    def __init__(self, peak: float, warmup_steps: int, total_steps: int):
        self.peak = peak
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.decay = keras.optimizers.schedules.PolynomialDecay(
            peak, max(total_steps - warmup_steps, 1), end_learning_rate=0.0, power=1.0)

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warmup = tf.cast(self.warmup_steps, tf.float32)
        return tf.where(step < warmup, self.peak * (step + 1.0) / warmup, self.decay(step - warmup))

    def get_config(self):
        return {"peak": self.peak, "warmup_steps": self.warmup_steps, "total_steps": self.total_steps}


def learning_rate(config: TrainConfig):
    """The schedule named by ``config.schedule``."""
    if config.schedule == "noam":
        return WarmupInverseSqrt(config.learning_rate, config.warmup_steps)
    if config.schedule == "linear":
        return WarmupLinearDecay(config.learning_rate, config.warmup_steps, config.max_steps)
    if len(config.values) != len(config.boundaries) + 1:
        raise ValueError(
            f"train.values needs one more entry than train.boundaries; found {len(config.values)} and {len(config.boundaries)}"
        )
    return keras.optimizers.schedules.PiecewiseConstantDecay(
        config.boundaries, [config.learning_rate * v for v in config.values]
    )


def encoder_learning_rate_scales(model: keras.Model, config: TrainConfig) -> dict:
    """``{variable path: multiplier}`` for the fine-tuned contextual encoders in ``model`` (none when
    frozen): ``train.encoder_learning_rate_scale`` with ``train.layer_decay`` per block below the top."""
    from lisa_tf.models.weights import fine_tuned_parts  # the models import this module's schedule

    scales = {}
    for layer in fine_tuned_parts(model):
        scales.update(layer.learning_rate_scales(config.encoder_learning_rate_scale, config.layer_decay))
    return scales


def make_optimizer(config: TrainConfig, learning_rate_scales: Optional[dict] = None) -> keras.optimizers.Optimizer:
    """Adadelta or Nadam with the configured schedule and global-norm clipping; with
    ``learning_rate_scales`` (a fine-tuned encoder's), some variables learn at a multiple of the rate
    (:mod:`lisa_tf.training.learning_rate_scales`)."""
    clip = config.clip_norm or None
    if config.optimizer == "adadelta":
        cls, options = keras.optimizers.Adadelta, dict(rho=config.rho, epsilon=config.epsilon)
    else:
        cls, options = keras.optimizers.Nadam, dict(beta_1=config.beta_1, beta_2=config.beta_2, epsilon=config.epsilon)
    if learning_rate_scales:
        cls, options = with_learning_rate_scales(cls), dict(options, learning_rate_scales=learning_rate_scales)
    return cls(learning_rate=learning_rate(config), global_clipnorm=clip, **options)
