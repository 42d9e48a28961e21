"""What `python -m benchmarks.multi_rank` runs in each process (one process, or each rank of `npu-run --ranks 2`):
prints one `BENCH <json>` line with its step times and, on several ranks, its all-reduce times."""
import json
import sys
import time

import numpy as np

from npu_bridge.npu_init import *  # noqa: F401,F403
from npu_bridge.hccl import hccl_ops

GLOBAL_BATCH, FEATURES, HIDDEN, STEPS, WARMUP = 512, 256, 1024, 30, 5
SIZES = {"small (256 floats, 1 KiB)": 256, "large (4M floats, 16 MiB)": 4 * 1024 * 1024}
REPEATS = {"small (256 floats, 1 KiB)": 200, "large (4M floats, 16 MiB)": 10}


def median_seconds(sess, fetch, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sess.run(fetch)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def step_time(rank, size):
    """Median training-step time of an MLP on this rank's share of the global batch (gradients averaged)."""
    rng = np.random.RandomState(rank)
    batch = GLOBAL_BATCH // size
    with tf.Graph().as_default():
        x = tf.constant(rng.uniform(-1, 1, (batch, FEATURES)).astype(np.float32))
        y = tf.constant(rng.randint(0, 10, batch))
        hidden = tf.layers.dense(x, HIDDEN, tf.nn.relu)
        hidden = tf.layers.dense(hidden, HIDDEN, tf.nn.relu)
        logits = tf.layers.dense(hidden, 10)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        train_op = npu_tf_optimizer(tf.train.GradientDescentOptimizer(0.01)).minimize(loss)
        with tf.Session(config=npu_config_proto()) as sess:
            sess.run(tf.global_variables_initializer())
            median_seconds(sess, train_op, WARMUP)
            return median_seconds(sess, train_op, STEPS)


def allreduce_times():
    """{size name: (median all-reduce seconds, median identity seconds)} in one session."""
    times = {}
    with tf.Graph().as_default():
        for name, count in SIZES.items():
            value = tf.Variable(tf.ones([count]))
            times[name] = (hccl_ops.allreduce(value, "sum"), tf.identity(value))
        with tf.Session(config=npu_config_proto()) as sess:
            sess.run(tf.global_variables_initializer())
            for name, (reduced, copied) in times.items():
                median_seconds(sess, reduced, 3)
                times[name] = (median_seconds(sess, reduced.op, REPEATS[name]),
                               median_seconds(sess, copied.op, REPEATS[name]))
    return times


if __name__ == "__main__":
    rank, size = get_rank_id(), get_rank_size()
    result = {"rank": rank, "size": size, "step_s": step_time(rank, size)}
    if size > 1:
        result["allreduce"] = allreduce_times()
    print("BENCH " + json.dumps(result), flush=True)
    sys.exit(0)
