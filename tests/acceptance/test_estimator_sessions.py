"""Estimator sessions (TensorFlow's Estimator up to 2.15, npu_bridge's after): NPUEstimator and a plain Estimator given npu_run_config_init run every
session on the emulated NPU; an Estimator without the NpuOptimizer stays plain; checkpoints stay float32."""
import numpy as np
import tensorflow as tf

from npu_bridge.estimator.npu.estimator_support import ESTIMATOR
from npu_bridge.runtime import last_report

from .conftest import fp16_matmul, is_emulated

X = np.full((4, 3), 1 / 3, np.float32)
W = np.array([[0.1], [1 / 3], [0.7]], np.float32)


class _RecordSession(tf.compat.v1.train.SessionRunHook):
    """Remembers, per Estimator phase, whether its session was emulated and what the pass did to `predict`."""

    def __init__(self, phase, seen):
        self.phase, self.seen = phase, seen

    def after_create_session(self, session, coord):
        decision = last_report(session).by_name("predict").decision if is_emulated(session) else None
        self.seen[self.phase] = (is_emulated(session), decision)


def _make_model_fn(seen):
    def model_fn(features, labels, mode):
        from npu_bridge.estimator.npu.npu_estimator import NPUEstimatorSpec

        w = tf.compat.v1.get_variable("w", initializer=W)
        prediction = tf.matmul(features["x"], w, name="predict")
        hooks = [_RecordSession(mode, seen)]
        if mode == ESTIMATOR.ModeKeys.PREDICT:
            return NPUEstimatorSpec(mode, predictions={"y": prediction}, prediction_hooks=hooks)
        loss = tf.reduce_mean(tf.square(prediction - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.0).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return NPUEstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=hooks, evaluation_hooks=hooks)
    return model_fn


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, np.ones((4, 1), np.float32))).batch(4)


def test_npu_estimator_trains_evaluates_and_predicts_emulated_with_float32_checkpoints(tmp_path):
    from npu_bridge.npu_init import NPUEstimator, NPURunConfig

    seen = {}
    config = NPURunConfig(model_dir=str(tmp_path), precision_mode="allow_mix_precision", log_step_count_steps=None)
    estimator = NPUEstimator(model_fn=_make_model_fn(seen), config=config)
    estimator.train(_input_fn, steps=1)
    estimator.evaluate(_input_fn, steps=1)
    predictions = np.stack([p["y"] for p in estimator.predict(_input_fn)])
    assert seen == {mode: (True, "float16") for mode in ("train", "eval", "infer")}
    np.testing.assert_array_equal(predictions, fp16_matmul(X, W))
    assert tf.train.load_variable(str(tmp_path), "w").dtype == np.float32
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "w"), W)


def test_plain_estimator_is_emulated_only_with_npu_run_config_init(tmp_path):
    from npu_bridge.npu_init import npu_run_config_init

    for name, run_config, emulated in (
            ("npu", npu_run_config_init(ESTIMATOR.RunConfig(model_dir=str(tmp_path / "npu"))), True),
            ("plain", ESTIMATOR.RunConfig(model_dir=str(tmp_path / "plain")), False)):
        seen = {}
        estimator = ESTIMATOR.Estimator(model_fn=_make_model_fn(seen), config=run_config)
        estimator.train(_input_fn, steps=1)
        assert seen["train"][0] is emulated, name
