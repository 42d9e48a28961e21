"""LeNet on MNIST-shaped synthetic images, in the style of ModelZoo's LeNet.py port.

tf.layers convolutions, npu_config_proto(config_proto=...) around an allow_mix_precision NpuOptimizer entry,
FixedLossScaleManager + NPULossScaleOptimizer inside NPUDistributedOptimizer, the loss kept in float32 with
keep_dtype_scope, gelu from npu_unary_ops, init_resource / shutdown_resource and a Saver checkpoint.
"""
import shutil
import tempfile

import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *

flags = tf.app.flags
flags.DEFINE_integer("steps", 30, "training steps")
flags.DEFINE_integer("batch_size", 32, "batch size")
FLAGS = flags.FLAGS


def lenet(images):
    net = tf.layers.conv2d(images, 6, 5, padding="same", activation=tf.nn.relu, name="conv1")
    net = tf.layers.max_pooling2d(net, 2, 2, name="pool1")
    net = tf.layers.conv2d(net, 16, 5, activation=tf.nn.relu, name="conv2")
    net = tf.layers.max_pooling2d(net, 2, 2, name="pool2")
    net = tf.layers.flatten(net)
    net = npu_unary_ops.gelu(tf.layers.dense(net, 84, name="fc1"))
    return tf.layers.dense(net, 10, name="logits")


def main(_):
    rng = np.random.RandomState(0)
    templates = rng.rand(10, 28, 28, 1).astype(np.float32)
    labels = rng.randint(0, 10, 512)
    images = np.clip(templates[labels] + rng.randn(512, 28, 28, 1).astype(np.float32) * 0.2, 0, 1)

    x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
    y = tf.placeholder(tf.int64, [None], name="labels")
    logits = lenet(x)
    with npu_scope.keep_dtype_scope():
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    global_step = tf.train.get_or_create_global_step()
    opt = NPULossScaleOptimizer(tf.train.MomentumOptimizer(0.05, 0.9), FixedLossScaleManager(1024))
    train_op = NPUDistributedOptimizer(opt).minimize(loss, global_step=global_step)
    saver = tf.train.Saver()

    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    sess, npu_shutdown = init_resource(config=npu_config_proto(config_proto=config))
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(FLAGS.steps):
        start = step * FLAGS.batch_size % 512
        batch = slice(start, start + FLAGS.batch_size)
        _, value = sess.run([train_op, loss], {x: images[batch], y: labels[batch]})
        losses.append(value)
    model_dir = tempfile.mkdtemp()
    saved = saver.save(sess, os.path.join(model_dir, "lenet"), global_step=global_step)
    print(f"steps {sess.run(global_step)} loss {np.mean(losses[:5]):.4f} -> {np.mean(losses[-5:]):.4f} saved {os.path.basename(saved)}")
    shutdown_resource(sess, npu_shutdown)
    close_session(sess)
    shutil.rmtree(model_dir)
    if not np.mean(losses[-5:]) < np.mean(losses[:5]):
        raise SystemExit("training did not progress")


if __name__ == "__main__":
    tf.app.run()
