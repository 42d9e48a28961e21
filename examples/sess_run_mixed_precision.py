"""Mixed precision with tf.Session, as in Ascend's "设置精度模式" (set the precision mode) guide, on a CPU.

The guide's snippet builds a ConfigProto with the `NpuOptimizer` custom optimizer and
`precision_mode_v2 = "mixed_float16"`, then calls `sess.run(cost)`. This script makes that snippet a complete
program: a small classifier on synthetic data, trained for a few hundred steps once per precision mode, printing
the loss, the held-out accuracy and the one-line precision summary the emulated NPU logs for the graph.

    python examples/sess_run_mixed_precision.py
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig  # noqa: E402

from npu_bridge.estimator import npu_ops  # noqa: E402,F401  (the guide's import; it also switches the NPU on)
from npu_bridge.runtime import last_report  # noqa: E402

STEPS = 300
CLASSES = 4
FEATURES = 16

# (label, NpuOptimizer parameter, value); None: plain TensorFlow float32, the reference.
MODES = [
    ("float32 (plain TensorFlow)", None, None),
    ("must_keep_origin_dtype", "precision_mode", "must_keep_origin_dtype"),
    ("allow_fp32_to_fp16", "precision_mode", "allow_fp32_to_fp16"),
    ("mixed_float16", "precision_mode_v2", "mixed_float16"),
    ("force_fp16", "precision_mode", "force_fp16"),
    ("mixed_bfloat16 (Ascend910B1)", "precision_mode_v2", "mixed_bfloat16"),
]


def synthetic_data(seed=0):
    """Four overlapping Gaussian clusters in 16 dimensions: learnt in seconds, never perfectly (rounding shows)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, 0.6, (CLASSES, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, 2048)
    points = centers[labels] + rng.normal(0.0, 1.0, (2048, FEATURES)).astype(np.float32)
    return (points[:1536], labels[:1536]), (points[1536:], labels[1536:])


def npu_config(key, value, soc=None):
    """The guide's ConfigProto: NpuOptimizer entry, use_off_line, the precision mode, remapping off."""
    config = tf.compat.v1.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map[key].s = tf.compat.as_bytes(value)
    if soc is not None:
        custom_op.parameter_map["soc_config"].s = tf.compat.as_bytes(soc)
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF  # 关闭remap开关 (remapping off)
    return config


def build_model():
    """A two-layer perceptron with softmax cross-entropy, trained with momentum SGD."""
    x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES], name="x")
    y = tf.compat.v1.placeholder(tf.int64, [None], name="y")
    init = tf.compat.v1.glorot_uniform_initializer(seed=7)
    w1 = tf.compat.v1.get_variable("w1", [FEATURES, 64], initializer=init)
    b1 = tf.compat.v1.get_variable("b1", [64], initializer=tf.compat.v1.zeros_initializer())
    w2 = tf.compat.v1.get_variable("w2", [64, CLASSES], initializer=init)
    b2 = tf.compat.v1.get_variable("b2", [CLASSES], initializer=tf.compat.v1.zeros_initializer())
    hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
    logits = tf.nn.bias_add(tf.matmul(hidden, w2), b2, name="logits")
    cost = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="cost")
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32), name="accuracy")
    train_op = tf.compat.v1.train.MomentumOptimizer(0.05, 0.9).minimize(cost)
    return x, y, cost, accuracy, train_op


def train(config, data):
    (train_x, train_y), (test_x, test_y) = data
    with tf.Graph().as_default():
        x, y, cost, accuracy, train_op = build_model()
        with tf.compat.v1.Session(config=config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            rng = np.random.default_rng(1)
            for _ in range(STEPS):
                batch = rng.integers(0, len(train_x), 64)
                sess.run(train_op, {x: train_x[batch], y: train_y[batch]})
            loss, acc = sess.run([cost, accuracy], {x: test_x, y: test_y})
            summary = last_report(sess).summary() if config is not None else "-"
    return loss, acc, summary


def main():
    data = synthetic_data()
    print(f"{'precision mode':30s} {'test loss':>10s} {'accuracy':>9s}   precision summary")
    for label, key, value in MODES:
        soc = "Ascend910B1" if value == "mixed_bfloat16" else None
        config = npu_config(key, value, soc) if key is not None else None
        loss, acc, summary = train(config, data)
        print(f"{label:30s} {loss:10.6f} {acc:9.4f}   {summary}")


if __name__ == "__main__":
    main()
