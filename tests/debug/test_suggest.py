"""npu-debug suggest's search, in process: record a few training steps, replay them, find the ops to keep."""
import json

import numpy as np
import pytest
import tensorflow as tf

import npu_bridge
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.debug.capture import CaptureObserver
from npu_bridge.debug.suggest import Replay, Search, Tolerance, parameter_overrides, write_files
from npu_bridge.runtime import observers
from npu_bridge.settings import OVERRIDES_ENV, parameter_map_options
from npu_test_support import npu_config

from .conftest import record_training

npu_bridge.activate()
STEPS = 3


def _model(scale=1.0, epsilon=False, loss_scale=None, dropout=False):
    def build():
        rng = np.random.RandomState(0)
        x = tf.compat.v1.placeholder(tf.float32, [8, 8], name="x")
        w1 = tf.compat.v1.get_variable("w1", initializer=rng.randn(8, 16).astype(np.float32) * scale)
        hidden = tf.nn.relu(tf.multiply(tf.matmul(x, w1, name="big_matmul"), 1.0 / scale, name="rescale"))
        if epsilon:
            hidden = tf.math.truediv(hidden, tf.sqrt(tf.square(hidden) + 1e-8), name="normalized")
        if dropout:
            hidden = tf.compat.v1.nn.dropout(hidden, rate=0.5)
        w2 = tf.compat.v1.get_variable("w2", initializer=rng.randn(16, 1).astype(np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2, name="head") - 1.0), name="loss")
        opt = tf.compat.v1.train.GradientDescentOptimizer(0.01)
        if loss_scale:
            from npu_bridge.estimator.npu.npu_loss_scale_manager import FixedLossScaleManager
            from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
            opt = NPULossScaleOptimizer(opt, FixedLossScaleManager(loss_scale=loss_scale))
        data = rng.randn(8, 8).astype(np.float32)
        if epsilon:
            data[:4] = -np.abs(data[:4]) * 0  # rows of zeros: Relu outputs 0, and 0 / sqrt(0 + eps) is 0/0 in float16
        return opt.minimize(loss), loss, {x: data}
    return build


def _search(recording, tmp_path, rtol=1e-2):
    return Search(recording, Tolerance(rtol, 1e-5), str(tmp_path), max_replays=200).run()


def test_range_pre_pass_keeps_the_overflowing_matmul_in_float32(tmp_path):
    recording = record_training(_model(scale=30000.0), STEPS)
    suggestion = _search(recording, tmp_path)
    assert not Tolerance(1e-2, 1e-5).holds(suggestion.mixed, suggestion.float32)
    assert "big_matmul" in suggestion.range_blocked and "big_matmul" in suggestion.blocked
    assert Tolerance(1e-2, 1e-5).holds(suggestion.fixed, suggestion.float32)
    assert suggestion.replays <= suggestion.bound


def test_bisection_finds_a_single_op_that_saves_the_epsilon(tmp_path):
    recording = record_training(_model(epsilon=True), STEPS)
    assert not np.isfinite(recording.metric_values[0])
    suggestion = _search(recording, tmp_path)
    assert not suggestion.range_blocked
    assert len(suggestion.blocked) == 1, suggestion.blocked
    # keeping the first op of the float16 chain (or the Add that loses 1e-8) in float32 keeps the epsilon
    assert suggestion.blocked[0] in ("big_matmul", "rescale", "Relu", "Square", "add")
    assert Tolerance(1e-2, 1e-5).holds(suggestion.fixed, suggestion.float32)


def test_skipped_loss_scale_steps_are_fixed_by_float32_gradients(tmp_path):
    recording = record_training(_model(loss_scale=2 ** 24), STEPS)
    suggestion = _search(recording, tmp_path)
    assert not Tolerance(1e-2, 1e-5).holds(suggestion.mixed, suggestion.float32), "the skipped steps show"
    assert suggestion.blocked and all(name.startswith("gradients/") for name in suggestion.blocked)
    assert Tolerance(1e-2, 1e-5).holds(suggestion.fixed, suggestion.float32)


def test_a_healthy_model_needs_nothing(tmp_path):
    suggestion = _search(record_training(_model(), STEPS), tmp_path)
    assert suggestion.blocked == [] and suggestion.replays == 2


def test_replay_feeds_the_recorded_random_values(tmp_path):
    recording = record_training(_model(dropout=True), STEPS)
    values, _ = Replay(recording).run({})
    np.testing.assert_array_equal(values, recording.metric_values)


def test_files_are_a_valid_mixlist_and_customize_dtypes(tmp_path):
    recording = record_training(_model(scale=30000.0), STEPS)
    search = Search(recording, Tolerance(1e-2, 1e-5), str(tmp_path), max_replays=200)
    suggestion = search.run()
    mixlist, customize = write_files(suggestion, search.graph, str(tmp_path / "out"))
    assert "MatMulV2" in json.load(open(mixlist))["black-list"]["to-add"]
    assert "big_matmul::InputDtype:float32,float32,OutputDtype:float32" in open(customize).read().splitlines()
    assert "MatMulV2" in suggestion.moved and "head" in suggestion.moved["MatMulV2"]
    for key, path in (("modify_mixlist", mixlist), ("customize_dtypes", customize)):
        with parameter_overrides({key: path}):
            options = parameter_map_options({"precision_mode": "allow_mix_precision"})
        assert getattr(options, key) == path


def test_overrides_replace_the_scripts_values_and_refuse_other_keys(monkeypatch):
    monkeypatch.setenv(OVERRIDES_ENV, json.dumps({"precision_mode": "must_keep_origin_dtype",
                                                  "modify_mixlist": ""}))
    options = parameter_map_options({"precision_mode_v2": "mixed_float16", "modify_mixlist": "/x.json"})
    assert options.precision_mode == "must_keep_origin_dtype" and options.precision_mode_v2 is None
    assert options.modify_mixlist is None
    monkeypatch.setenv(OVERRIDES_ENV, json.dumps({"enable_dump": "1"}))
    with pytest.raises(NpuConfigError, match="'enable_dump'.*not accepted"):
        parameter_map_options({})
    monkeypatch.setenv(OVERRIDES_ENV, "[1")
    with pytest.raises(NpuConfigError, match="not a JSON object"):
        parameter_map_options({})


def test_a_metric_name_that_does_not_exist_is_named_with_close_matches():
    with tf.Graph().as_default():
        train, loss, feeds = _model()()
        observer = CaptureObserver(STEPS, "los")
        observers.add_observer(observer)
        try:
            with tf.compat.v1.Session(config=npu_config(precision_mode="allow_mix_precision")) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                sess.run([train, loss], feeds)
        finally:
            observers.remove_observer(observer)
    assert observer.recording is None
    assert "no tensor named 'los:0'; did you mean loss:0" in observer.failure("script.py")


def test_without_a_training_graph_the_graph_running_most_reduced_ops_is_recorded():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        feeds = {x: np.random.RandomState(0).rand(4, 4).astype(np.float32)}
        small = tf.reduce_sum(tf.matmul(x, x), name="small")
        deep = x
        for layer in range(3):
            deep = tf.nn.relu(tf.matmul(deep, x), name=f"layer{layer}")
        deep = tf.reduce_sum(deep, name="deep")
        observer = CaptureObserver(2)
        observers.add_observer(observer)
        try:
            with tf.compat.v1.Session(config=npu_config(precision_mode="allow_mix_precision")) as sess:
                for _ in range(2):
                    sess.run(small, feeds)
                    sess.run(deep, feeds)
        finally:
            observers.remove_observer(observer)
            observer.close()
    recording = observer.recording
    assert recording is not None and not recording.trains
    assert recording.metric == "deep:0" and recording.step_numbers == [0, 1]
