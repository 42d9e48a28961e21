"""HParams-driven training in the style of the tensor2tensor / NMT ports: defaults in a tf.contrib.training.HParams,
overridden from --hparams "learning_rate=...,hidden_sizes=[...]", read back as attributes to build and train the
model, and saved as JSON beside it."""
import json
import os
import tempfile

import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *

flags = tf.app.flags
flags.DEFINE_string("hparams", "", "comma-separated name=value overrides of the default hyperparameters")
FLAGS = flags.FLAGS


def default_hparams():
    return tf.contrib.training.HParams(learning_rate=0.1, hidden_sizes=[16], batch_size=32, train_steps=30,
                                       optimizer="momentum", use_layer_norm=False)


def main(_):
    hparams = default_hparams().parse(FLAGS.hparams)
    rng = np.random.RandomState(4)
    inputs = rng.randn(512, 6).astype(np.float32)
    targets = np.tanh(inputs @ rng.randn(6, 1)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 6])
    y = tf.placeholder(tf.float32, [None, 1])
    net = x
    for index, width in enumerate(hparams.hidden_sizes):
        net = tf.contrib.layers.fully_connected(net, width, scope=f"hidden{index}")
        if hparams.use_layer_norm:
            net = tf.contrib.layers.layer_norm(net)
    loss = tf.losses.mean_squared_error(y, tf.contrib.layers.fully_connected(net, 1, activation_fn=None))
    optimizer = {"momentum": lambda: tf.train.MomentumOptimizer(hparams.learning_rate, 0.9),
                 "sgd": lambda: tf.train.GradientDescentOptimizer(hparams.learning_rate)}[hparams.optimizer]()
    train_op = optimizer.minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(hparams.train_steps):
            start = step * hparams.batch_size % 512
            batch = slice(start, start + hparams.batch_size)
            losses.append(sess.run([train_op, loss], {x: inputs[batch], y: targets[batch]})[1])
    saved = os.path.join(tempfile.mkdtemp(), "hparams.json")
    with open(saved, "w") as out:
        out.write(hparams.to_json(sort_keys=True))
    with open(saved) as back:
        print(f"hparams {json.dumps(json.load(back), sort_keys=True)}")
    print(f"steps {hparams.train_steps} loss {np.mean(losses[:5]):.4f} -> {np.mean(losses[-5:]):.4f}")
    if not np.mean(losses[-5:]) < np.mean(losses[:5]):
        raise SystemExit("training did not progress")


if __name__ == "__main__":
    tf.app.run()
