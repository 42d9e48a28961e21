"""An MLP in the style of the BERT-family and recommendation ports: tf.contrib.layers.fully_connected with
xavier weights and l2 regularisers, layer_norm after each hidden layer and batch_norm on the input, the update
ops run with the train op, the regularisation losses added to the loss. Synthetic regression data."""
import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *

layers = tf.contrib.layers


def model(features, is_training):
    net = layers.batch_norm(features, is_training=is_training, scope="input_bn")
    for index, width in enumerate((32, 32)):
        net = layers.fully_connected(net, width, weights_initializer=layers.xavier_initializer(),
                                     weights_regularizer=layers.l2_regularizer(1e-4), scope=f"hidden{index}")
        net = layers.layer_norm(net, scope=f"hidden{index}/LayerNorm")
    return layers.fully_connected(net, 1, activation_fn=None, scope="output")


def main():
    rng = np.random.RandomState(1)
    inputs = rng.randn(512, 8).astype(np.float32)
    targets = (inputs @ rng.randn(8, 1) + 0.1 * rng.randn(512, 1)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 8])
    y = tf.placeholder(tf.float32, [None, 1])
    prediction = model(x, is_training=True)
    loss = tf.losses.mean_squared_error(y, prediction) + tf.add_n(tf.losses.get_regularization_losses())
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_or_create_global_step())

    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    losses = []
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(40):
            batch = slice(step * 64 % 512, step * 64 % 512 + 64)
            losses.append(sess.run([train_op, loss], {x: inputs[batch], y: targets[batch]})[1])
    names = sorted(v.op.name for v in tf.model_variables() if "LayerNorm" in v.op.name or "input_bn" in v.op.name)
    print(f"variables {' '.join(names)}")
    print(f"steps 40 loss {np.mean(losses[:5]):.4f} -> {np.mean(losses[-5:]):.4f}")
    if not np.mean(losses[-5:]) < np.mean(losses[:5]):
        raise SystemExit("training did not progress")


if __name__ == "__main__":
    main()
