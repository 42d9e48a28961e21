"""A plain tf.estimator.Estimator whose session_config asks for the NPU: its sessions run emulated.

Real Ascend scripts usually go through NPURunConfig / NPUEstimator; this one shows the mechanism underneath:
any session created with a ConfigProto holding the `NpuOptimizer` custom optimizer (here the Estimator's own
MonitoredTrainingSession and evaluation session) runs the NPU's mixed-precision rewrite. A SessionRunHook prints
the precision summary of each graph the Estimator runs.

tf.estimator ships with TensorFlow up to 2.15 only; on newer TensorFlow this script says so and exits.

    python examples/estimator_example.py
"""
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig  # noqa: E402

import npu_bridge  # noqa: E402,F401  (switches the emulated NPU on)
from npu_bridge.runtime import last_report  # noqa: E402

FEATURES = 8


def npu_session_config():
    config = tf.compat.v1.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    return config


class PrecisionSummaryHook(tf.compat.v1.train.SessionRunHook):
    """Prints what the NPU's precision pass did to the graph of each session the Estimator creates."""

    def __init__(self, phase):
        self.phase = phase

    def after_create_session(self, session, coord):
        print(f"[{self.phase}] {last_report(session).summary()}")


def dense(inputs, units, name):
    init = tf.compat.v1.glorot_uniform_initializer(seed=3)
    kernel = tf.compat.v1.get_variable(f"{name}/kernel", [inputs.shape[-1], units], initializer=init)
    bias = tf.compat.v1.get_variable(f"{name}/bias", [units], initializer=tf.compat.v1.zeros_initializer())
    return tf.nn.bias_add(tf.matmul(inputs, kernel), bias)


def model_fn(features, labels, mode):
    hidden = tf.nn.relu(dense(features, 32, "hidden"))
    logits = dense(hidden, 2, "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    predictions = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.EVAL:
        accuracy = tf.compat.v1.metrics.accuracy(labels, predictions)
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy},
                                          evaluation_hooks=[PrecisionSummaryHook("evaluate")])
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      training_hooks=[PrecisionSummaryHook("train")])


def input_fn(points, labels, repeat):
    def make():
        dataset = tf.data.Dataset.from_tensor_slices((points, labels)).batch(64)
        return dataset.repeat() if repeat else dataset
    return make


def main():
    if not hasattr(tf, "estimator"):
        print(f"tf.estimator is not part of TensorFlow {tf.__version__}; this example needs TensorFlow 2.15 "
              "(pip install 'tensorflow==2.15.*').")
        return 0
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)  # keep the Estimator's step logs quiet
    rng = np.random.default_rng(0)
    points = rng.normal(size=(1024, FEATURES)).astype(np.float32)
    labels = (points[:, :4].sum(axis=1) > points[:, 4:].sum(axis=1)).astype(np.int64)
    with tempfile.TemporaryDirectory() as model_dir:
        run_config = tf.estimator.RunConfig(model_dir=model_dir, session_config=npu_session_config(),
                                            log_step_count_steps=None, save_summary_steps=1000)
        estimator = tf.estimator.Estimator(model_fn, config=run_config)
        estimator.train(input_fn(points[:768], labels[:768], repeat=True), steps=200)
        metrics = estimator.evaluate(input_fn(points[768:], labels[768:], repeat=False))
    print(f"after {metrics['global_step']} steps: loss {metrics['loss']:.4f}, accuracy {metrics['accuracy']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
