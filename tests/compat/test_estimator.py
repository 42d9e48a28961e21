"""NPUEstimator / NPUEstimatorSpec: on TensorFlow's Estimator up to 2.15, on npu_bridge's own after."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.estimator.npu.estimator_support import ESTIMATOR
from npu_bridge.tf1compat.estimator_paths import tensorflow_has_estimator

v1 = tf.compat.v1


def _input_fn():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)


def _model_fn(features, labels, mode):
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimatorSpec

    kernel = v1.get_variable("kernel", [3, 1], initializer=v1.zeros_initializer())
    prediction = tf.matmul(features["x"], kernel)
    loss = v1.losses.mean_squared_error(labels, prediction)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())
    return NPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, predictions={"y": prediction})


def test_npu_estimator_trains_with_an_npu_session_config(tmp_path):
    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator

    config = NPURunConfig(model_dir=str(tmp_path), precision_mode="allow_mix_precision", save_checkpoints_steps=20,
                          log_step_count_steps=None)
    estimator = NPUEstimator(model_fn=_model_fn, config=config)
    estimator.train(_input_fn, steps=20)
    assert estimator.get_variable_value("global_step") == 20
    loss = estimator.evaluate(_input_fn, steps=2)["loss"]
    assert loss < 1.0


class _CountRuns(v1.train.SessionRunHook):
    def __init__(self):
        self.count = 0

    def after_run(self, run_context, run_values):
        self.count += 1


def test_iterations_per_loop_runs_several_steps_per_session_run(tmp_path):
    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator

    config = NPURunConfig(model_dir=str(tmp_path), iterations_per_loop=5, log_step_count_steps=None)
    estimator = NPUEstimator(model_fn=_model_fn, config=config)
    runs = _CountRuns()
    estimator.train(_input_fn, max_steps=10, hooks=[runs])
    assert estimator.get_variable_value("global_step") == 10
    assert runs.count == 2


def test_npu_estimator_requires_an_npu_run_config():
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator

    with pytest.raises(ValueError, match="config must be an NPURunConfig"):
        NPUEstimator(model_fn=_model_fn, config=ESTIMATOR.RunConfig())


def test_npu_estimator_spec_is_an_estimator_spec():
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimatorSpec

    with tf.Graph().as_default():
        spec = NPUEstimatorSpec(mode=ESTIMATOR.ModeKeys.PREDICT, predictions={"y": tf.constant(1.0)})
    assert isinstance(spec, ESTIMATOR.EstimatorSpec)


def test_host_call_runs_on_every_training_step(tmp_path):
    """TPUEstimator-style host_call (fn, tensors): its ops run with each step, here on the host with the rest."""
    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec

    def model_fn(features, labels, mode):
        spec = _model_fn(features, labels, mode)
        seen = v1.get_variable("host_seen", initializer=0.0, trainable=False, use_resource=True)

        def host_fn(loss):
            return [seen.assign_add(tf.cast(loss[0] >= 0.0, tf.float32)).op]

        return NPUEstimatorSpec(mode=mode, loss=spec.loss, train_op=spec.train_op, predictions=spec.predictions,
                                host_call=(host_fn, [tf.reshape(spec.loss, [1])]))

    config = NPURunConfig(model_dir=str(tmp_path), iterations_per_loop=3, log_step_count_steps=None)
    estimator = NPUEstimator(model_fn=model_fn, config=config)
    estimator.train(_input_fn, max_steps=6)
    assert estimator.get_variable_value("global_step") == 6
    assert estimator.get_variable_value("host_seen") == 6.0
    with pytest.raises(ValueError, match="host_call must be"):
        NPUEstimatorSpec(mode=ESTIMATOR.ModeKeys.TRAIN, loss=tf.constant(1.0), train_op=tf.no_op(),
                         host_call=lambda: None)


def test_host_call_summaries_are_written(tmp_path):
    """The documented host_call pattern: a summary writer made inside the host_call function, a scalar per step.
    The writer is opened when the session starts and flushed when training ends."""
    from tensorflow.python.ops import summary_ops_v2 as summary

    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec

    logdir = tmp_path / "host_call"

    def host_fn(global_step, loss):
        with summary.create_file_writer(str(logdir), max_queue=1000).as_default(), \
                summary.always_record_summaries():
            summary.scalar("host_call_loss", loss[0], step=global_step[0])
            return summary.all_v2_summary_ops()

    def model_fn(features, labels, mode):
        spec = _model_fn(features, labels, mode)
        step = tf.reshape(v1.train.get_global_step(), [1])
        return NPUEstimatorSpec(mode=mode, loss=spec.loss, train_op=spec.train_op, predictions=spec.predictions,
                                host_call=(host_fn, [step, tf.reshape(spec.loss, [1])]))

    config = NPURunConfig(model_dir=str(tmp_path / "model"), log_step_count_steps=None)
    NPUEstimator(model_fn=model_fn, config=config).train(_input_fn, max_steps=4)
    losses = []
    for path in logdir.glob("events.out.tfevents.*"):
        for event in v1.train.summary_iterator(str(path)):
            losses += [value for value in event.summary.value if value.tag == "host_call_loss"]
    # One scalar per training step (the step number it carries may be read before or after the step's
    # increment: nothing orders the host_call's reads against the train op).
    assert len(losses) == 4


@pytest.mark.skipif(not tensorflow_has_estimator(), reason="Keras has model_to_estimator up to TensorFlow 2.15")
def test_model_to_npu_estimator_trains_a_keras_model_from_its_own_weights(tmp_path):
    from npu_bridge.estimator.npu.keras_to_npu import model_to_npu_estimator
    from npu_bridge.estimator.npu.npu_config import NPURunConfig

    kernel = np.array([[0.5], [0.25], [-1.0]], np.float32)

    def estimator_for(learning_rate, model_dir):
        with tf.Graph().as_default():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,), name="dense")])
            model.compile(optimizer=tf.keras.optimizers.legacy.SGD(learning_rate), loss="mse")
            model.get_layer("dense").set_weights([kernel, np.zeros(1, np.float32)])
        config = NPURunConfig(model_dir=str(model_dir), precision_mode="allow_mix_precision",
                              log_step_count_steps=None)
        return model_to_npu_estimator(keras_model=model, config=config), model.input_names[0]

    frozen, input_name = estimator_for(0.0, tmp_path / "frozen")

    def input_fn():
        return _input_fn().map(lambda features, y: ({input_name: features["x"]}, y))

    frozen.train(input_fn, steps=1)
    kernel_name, = [name for name in frozen.get_variable_names() if name.endswith("dense/kernel")]
    np.testing.assert_array_equal(frozen.get_variable_value(kernel_name), kernel)
    start = frozen.evaluate(input_fn, steps=2)["loss"]

    trained, _ = estimator_for(0.05, tmp_path / "trained")
    trained.train(input_fn, steps=30)
    assert trained.evaluate(input_fn, steps=2)["loss"] < start / 2


def test_evaluate_returns_what_the_plain_estimator_returns(tmp_path):
    """'global_step' is a NumPy scalar (printed 1000) in both, not a 0-d array."""
    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator

    npu = NPUEstimator(model_fn=_model_fn, config=NPURunConfig(model_dir=str(tmp_path / "npu"),
                                                               log_step_count_steps=None))
    plain = ESTIMATOR.Estimator(model_fn=_model_fn, model_dir=str(tmp_path / "plain"))
    results = []
    for estimator in (npu, plain):
        estimator.train(_input_fn, steps=3)
        results.append(estimator.evaluate(_input_fn, steps=1))
    emulated, expected = results
    assert {k: type(v) for k, v in emulated.items()} == {k: type(v) for k, v in expected.items()}
    assert repr(emulated["global_step"]) == repr(expected["global_step"]) == repr(np.int64(3))
