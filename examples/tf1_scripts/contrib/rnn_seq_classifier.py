"""A sequence classifier in the style of the NLP ports: tf.contrib.rnn.MultiRNNCell of LSTMCell layers with
DropoutWrapper, run by tf.nn.dynamic_rnn with sequence lengths, gradients clipped by global norm. Synthetic
sequences whose class is the sign of their sum."""
import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *

rnn = tf.contrib.rnn


def main():
    rng = np.random.RandomState(3)
    sequences = rng.randn(256, 10, 3).astype(np.float32)
    lengths = rng.randint(4, 11, 256)
    mask = np.arange(10)[None, :] < lengths[:, None]
    sequences *= mask[:, :, None]
    labels = (sequences.sum(axis=(1, 2)) > 0).astype(np.int64)

    x = tf.placeholder(tf.float32, [None, 10, 3])
    length = tf.placeholder(tf.int32, [None])
    y = tf.placeholder(tf.int64, [None])
    keep = tf.placeholder_with_default(1.0, [])
    cells = [rnn.DropoutWrapper(rnn.LSTMCell(16), output_keep_prob=keep) for _ in range(2)]
    _, state = tf.nn.dynamic_rnn(rnn.MultiRNNCell(cells), x, sequence_length=length, dtype=tf.float32)
    logits = tf.layers.dense(state[-1].h, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    optimizer = tf.train.AdamOptimizer(0.01)
    grads, variables = zip(*optimizer.compute_gradients(loss))
    grads, _ = tf.clip_by_global_norm(grads, 5.0)
    train_op = optimizer.apply_gradients(zip(grads, variables))
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(40):
            batch = slice(step * 32 % 256, step * 32 % 256 + 32)
            feed = {x: sequences[batch], length: lengths[batch], y: labels[batch], keep: 0.9}
            losses.append(sess.run([train_op, loss], feed)[1])
    print(f"variables {' '.join(v.op.name for v in variables[:2])}")
    print(f"steps 40 loss {np.mean(losses[:5]):.4f} -> {np.mean(losses[-5:]):.4f}")
    if not np.mean(losses[-5:]) < np.mean(losses[:5]):
        raise SystemExit("training did not progress")


if __name__ == "__main__":
    main()
