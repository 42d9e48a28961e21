"""Ops added after the train op ran (tf.group(train_op), control dependencies on it, as set_iteration_per_loop and
ported scripts do) extend the inner graph without TensorFlow's "this mutation will have no effect" warning, and
their control edges hold: the grouped update runs."""
import os
import subprocess
import sys
import textwrap

SCRIPT = """
    import numpy as np
    import tensorflow as tf
    from npu_bridge.npu_init import *

    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(np.ones((4, 1), np.float32), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)), name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    counter = tf.Variable(0, name="counter")
    count = tf.assign_add(counter, 1)
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
    feed = {x: np.ones((2, 4), np.float32)}
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([train, count], feed)
        with tf.control_dependencies([train]):
            after = tf.identity(loss, name="after")
        grouped = tf.group(train, count, name="grouped")
        sess.run([after, grouped], feed)
        print("RESULT", sess.run(counter), float(sess.run(w)[0, 0]))
"""


def test_ops_added_after_the_train_op_ran_extend_the_graph_silently_and_keep_their_edges(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")       # TensorFlow's C++ warnings shown
    done = subprocess.run([sys.executable, "-m", "npu_bridge", str(script)], capture_output=True, text=True,
                          env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "This mutation will have no effect" not in done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("RESULT")]
    count, weight = line.split()[1:]
    assert count == "2"                  # the group's control edge ran the counter's update
    assert float(weight) < 0.8           # and the train op: two gradient steps from 1.0
