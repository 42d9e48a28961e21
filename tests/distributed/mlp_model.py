"""The MLP the data-parallel tests train: once per rank on its shard, and once in one process on everything."""
import numpy as np
import tensorflow.compat.v1 as tf

from npu_bridge.estimator.npu.npu_hook import NPUBroadcastGlobalVariablesHook
from npu_bridge.estimator.npu.npu_loss_scale_manager import ExponentialUpdateLossScaleManager
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.estimator.npu.npu_optimizer import NPUDistributedOptimizer
from npu_bridge.npu_init import npu_config_proto

STEPS = 5


def dataset(size):
    rng = np.random.RandomState(42)
    images = rng.uniform(-1, 1, (8 * size, 6)).astype(np.float32)
    labels = (images.sum(axis=1, keepdims=True) > 0).astype(np.float32)
    return images, labels


def _dense(x, units, name, seed):
    kernel = tf.get_variable(name + "/kernel", [x.shape[1], units],
                             initializer=tf.random_normal_initializer(stddev=0.5, seed=seed))
    bias = tf.get_variable(name + "/bias", [units], initializer=tf.zeros_initializer())
    return tf.matmul(x, kernel) + bias


def _model(images, labels, rank_seed):
    # Ranks draw different initial weights: the broadcast hook gives them rank 0's.
    hidden = tf.nn.tanh(_dense(images, 8, "hidden", 100 + rank_seed))
    logits = _dense(hidden, 1, "out", 200 + rank_seed)
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))


def _config(precision_mode):
    config = npu_config_proto()
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["precision_mode_v2"].s = \
        precision_mode.encode()
    return config


def train(images, labels, rank_seed=0, distributed=False):
    """{variable name: value} after STEPS steps of SGD in float32 (gradients averaged over the ranks when
    distributed)."""
    with tf.Graph().as_default():
        loss = _model(tf.constant(images), tf.constant(labels), rank_seed)
        optimizer = tf.train.GradientDescentOptimizer(0.5)
        if distributed:
            optimizer = NPUDistributedOptimizer(optimizer)
        train_op = optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())
        hooks = [NPUBroadcastGlobalVariablesHook(0, 0)] if distributed else []
        with tf.train.MonitoredTrainingSession(hooks=hooks, config=_config("origin"), save_checkpoint_secs=None,
                                               save_summaries_steps=None, log_step_count_steps=None) as sess:
            for _ in range(STEPS):
                sess.run(train_op)
            return {v.op.name: sess.run(v) for v in tf.trainable_variables()}


def train_loss_scaled(rank):
    """Loss scales and global steps of 6 mixed_float16 steps whose gradients overflow on rank 1 only at step 2
    (input scaled by 1e6: infinite in float16); the overflow decision is shared, so every rank skips that step."""
    config = _config("mixed_float16")
    with tf.Graph().as_default():
        scale_input = tf.placeholder(tf.float32, [])
        images, labels = dataset(1)
        loss = _model(tf.constant(images) * scale_input, tf.constant(labels), 0)
        manager = ExponentialUpdateLossScaleManager(init_loss_scale=1024, incr_every_n_steps=1000,
                                                    decr_every_n_nan_or_inf=1, decr_ratio=0.5)
        optimizer = NPULossScaleOptimizer(tf.train.GradientDescentOptimizer(0.01), manager, is_distributed=True)
        step = tf.train.get_or_create_global_step()
        train_op = optimizer.minimize(loss, global_step=step)
        scales, steps = [], []
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for index in range(6):
                sess.run(train_op, {scale_input: 1e6 if (rank == 1 and index == 2) else 1.0})
                scales.append(float(sess.run(manager.get_loss_scale())))
                steps.append(int(sess.run(step)))
        return scales, steps
