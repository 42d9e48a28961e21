"""An input pipeline in the style of the ResNet / BERT ports: TFRecord shards read with
tf.contrib.data.parallel_interleave, shuffle_and_repeat, parsed and batched with map_and_batch, prefetched with
AUTOTUNE, feeding a logistic regression through an initializable iterator. The shards are written first."""
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *


def write_shards(folder, rng, shards=4, per_shard=64):
    weights = rng.randn(4).astype(np.float32)
    for shard in range(shards):
        with tf.python_io.TFRecordWriter(os.path.join(folder, f"train-{shard:05d}")) as writer:
            for _ in range(per_shard):
                features = rng.randn(4).astype(np.float32)
                label = int(features @ weights > 0)
                example = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=features)),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}))
                writer.write(example.SerializeToString())


def parse(record):
    parsed = tf.parse_single_example(record, {"x": tf.FixedLenFeature([4], tf.float32),
                                              "y": tf.FixedLenFeature([], tf.int64)})
    return parsed["x"], tf.cast(parsed["y"], tf.float32)


def input_fn(pattern, batch_size):
    files = tf.data.Dataset.list_files(pattern, shuffle=False)
    dataset = files.apply(tf.contrib.data.parallel_interleave(tf.data.TFRecordDataset, cycle_length=4,
                                                              sloppy=True))
    dataset = dataset.apply(tf.contrib.data.shuffle_and_repeat(buffer_size=256, seed=0))
    dataset = dataset.apply(tf.contrib.data.map_and_batch(parse, batch_size=batch_size, drop_remainder=True,
                                                          num_parallel_batches=2))
    return dataset.prefetch(tf.contrib.data.AUTOTUNE)


def main():
    folder = tempfile.mkdtemp()
    write_shards(folder, np.random.RandomState(2))
    iterator = input_fn(os.path.join(folder, "train-*"), 32).make_initializable_iterator()
    features, labels = iterator.get_next()
    logits = tf.squeeze(tf.layers.dense(features, 1), 1)
    loss = tf.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run([iterator.initializer, tf.global_variables_initializer()])
        for _ in range(40):
            losses.append(sess.run([train_op, loss])[1])
    shutil.rmtree(folder)
    print(f"steps 40 loss {np.mean(losses[:5]):.4f} -> {np.mean(losses[-5:]):.4f}")
    if not np.mean(losses[-5:]) < np.mean(losses[:5]):
        raise SystemExit("training did not progress")


if __name__ == "__main__":
    main()
