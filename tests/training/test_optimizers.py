import numpy as np

from lisa_tf.config import TrainConfig
from lisa_tf.training.optimizers import WarmupInverseSqrt, WarmupLinearDecay, make_optimizer


def test_noam_schedule_matches_formula_and_peaks_at_warmup():
    schedule = WarmupInverseSqrt(0.04, 8000)
    steps = np.array([1, 100, 7999, 8000, 8001, 20000, 100000])
    got = np.array([float(schedule(s - 1)) for s in steps])
    expected = 0.04 * np.minimum(steps**-0.5, steps * 8000**-1.5)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert got.argmax() == 3  # the peak is at the warm-up step


def test_deepatt_piecewise_halving():
    optimizer = make_optimizer(TrainConfig())
    schedule = optimizer._learning_rate
    assert [float(schedule(s)) for s in (0, 399_999, 400_001, 500_001)] == [1.0, 1.0, 0.5, 0.25]
    assert optimizer.global_clipnorm == 1.0 and optimizer.rho == 0.95


def test_lisa_nadam():
    optimizer = make_optimizer(TrainConfig(optimizer="nadam", schedule="noam", learning_rate=0.04, epsilon=1e-12, clip_norm=5.0))
    assert optimizer.beta_2 == 0.98 and optimizer.epsilon == 1e-12 and optimizer.global_clipnorm == 5.0


def test_linear_schedule_warms_up_then_falls_in_a_line_to_zero_at_the_last_step():
    optimizer = make_optimizer(TrainConfig(optimizer="nadam", schedule="linear", learning_rate=0.002,
                                           warmup_steps=400, max_steps=2500))
    schedule = optimizer._learning_rate
    assert isinstance(schedule, WarmupLinearDecay)
    got = [float(schedule(s)) for s in (0, 199, 399, 400, 1450, 2500, 3000)]
    np.testing.assert_allclose(got, [0.002 / 400, 0.002 * 200 / 400, 0.002, 0.002, 0.001, 0.0, 0.0], atol=1e-9)
    again = WarmupLinearDecay(**schedule.get_config())
    assert [float(again(s)) for s in (0, 1450)] == [float(schedule(s)) for s in (0, 1450)]
