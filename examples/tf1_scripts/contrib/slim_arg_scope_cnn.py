"""A slim CNN in the style of ModelZoo's slim ports: an arg_scope over conv2d / fully_connected with batch_norm,
an l2 regulariser and xavier weights, slim.losses and slim.learning.create_train_op, on an NpuOptimizer session
in mixed precision. Synthetic 16x16 images of 4 classes."""
import numpy as np
import tensorflow as tf
import tensorflow.contrib.slim as slim
from npu_bridge.npu_init import *

flags = tf.app.flags
flags.DEFINE_integer("steps", 30, "training steps")
FLAGS = flags.FLAGS


def net(images, is_training):
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_initializer=tf.contrib.layers.xavier_initializer(),
                        weights_regularizer=slim.l2_regularizer(1e-4)):
        with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                            normalizer_params={"is_training": is_training, "decay": 0.9}):
            x = slim.conv2d(images, 8, [3, 3], scope="conv1")
            x = slim.max_pool2d(x, [2, 2], scope="pool1")
            x = slim.conv2d(x, 16, [3, 3], scope="conv2")
            x = slim.max_pool2d(x, [2, 2], scope="pool2")
        x = slim.flatten(x)
        return slim.fully_connected(x, 4, activation_fn=None, scope="logits")


def main(_):
    rng = np.random.RandomState(0)
    templates = rng.rand(4, 16, 16, 3).astype(np.float32)
    labels = rng.randint(0, 4, 256)
    images = templates[labels] + rng.randn(256, 16, 16, 3).astype(np.float32) * 0.3

    x = tf.placeholder(tf.float32, [None, 16, 16, 3])
    y = tf.placeholder(tf.int64, [None])
    logits = net(x, is_training=True)
    slim.losses.sparse_softmax_cross_entropy(logits, y)
    total_loss = slim.losses.get_total_loss()
    train_op = slim.learning.create_train_op(total_loss, tf.train.MomentumOptimizer(0.05, 0.9))

    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    losses = []
    with tf.Session(config=npu_config_proto(config_proto=config)) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.steps):
            batch = slice(step * 32 % 256, step * 32 % 256 + 32)
            losses.append(sess.run(train_op, {x: images[batch], y: labels[batch]}))
    names = [v.op.name for v in slim.get_model_variables()]
    print(f"variables {' '.join(names[:4])}")
    print(f"steps {FLAGS.steps} loss {np.mean(losses[:5]):.4f} -> {np.mean(losses[-5:]):.4f}")
    if not np.mean(losses[-5:]) < np.mean(losses[:5]):
        raise SystemExit("training did not progress")


if __name__ == "__main__":
    tf.app.run()
