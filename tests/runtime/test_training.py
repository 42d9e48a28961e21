"""Training under mixed_float16 behaves like float32 training, and modify_mixlist changes what executes."""
import json

import numpy as np
import tensorflow as tf

from npu_bridge.runtime import last_report

from .conftest import npu_config

STEPS = 60


def _cnn_graph():
    rng = np.random.default_rng(0)
    images = rng.random((32, 8, 8, 1), dtype=np.float32)
    labels = (images[:, :4].mean(axis=(1, 2, 3)) > images[:, 4:].mean(axis=(1, 2, 3))).astype(np.int64)
    x = tf.constant(images)
    init = tf.compat.v1.glorot_uniform_initializer(seed=1)
    kernel = tf.compat.v1.get_variable("kernel", [3, 3, 1, 8], initializer=init)
    conv = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=1, padding="SAME"), name="conv_relu")
    pooled = tf.reshape(tf.nn.max_pool2d(conv, 2, 2, "VALID"), [32, 4 * 4 * 8])
    dense = tf.compat.v1.get_variable("dense", [4 * 4 * 8, 2], initializer=init)
    logits = tf.matmul(pooled, dense, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.compat.v1.train.AdamOptimizer(0.02).minimize(loss)
    return loss, train


def _train(config):
    with tf.Graph().as_default():
        loss, train = _cnn_graph()
        with tf.compat.v1.Session(config=config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            losses = [sess.run([loss, train])[0] for _ in range(STEPS)]
            report = last_report(sess) if config is not None else None
    return np.array(losses), report


def test_cnn_trains_under_mixed_float16_like_float32():
    reference, _ = _train(None)
    mixed, report = _train(npu_config("mixed_float16"))
    assert report.n_reduced > 0 and "mixed_float16" in report.summary()
    assert mixed[-1] < 0.5 * mixed[0], "the loss must fall under mixed precision"
    # Same data, same initial weights; float16 rounds to 11 significant bits (relative error <= 4.9e-4 per
    # rounding). Over 60 Adam steps the two trajectories drift apart by that noise, not by a trend (measured:
    # 0.5% at the end, loss 0.004): the first loss, before any update, stays within 1% of the float32 run, the
    # loss half-way within 5%, the final one within 10% (plus 1e-3 absolute, as it approaches zero).
    np.testing.assert_allclose(mixed[0], reference[0], rtol=1e-2)
    np.testing.assert_allclose(mixed[STEPS // 2], reference[STEPS // 2], rtol=0.05)
    np.testing.assert_allclose(mixed[-1], reference[-1], rtol=0.1, atol=1e-3)


def _executed_matmul_dtype(config):
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
        y = tf.matmul(x, tf.constant([[1 / 3, 0.0], [0.0, 1 / 3]]), name="y")
        with tf.compat.v1.Session(config=config) as sess:
            metadata = tf.compat.v1.RunMetadata()
            value = sess.run(y, {x: np.full((2, 2), 1 / 3)},
                             options=tf.compat.v1.RunOptions(output_partition_graphs=True), run_metadata=metadata)
            executed = {n.name: n for g in metadata.partition_graphs for n in g.node}
            return last_report(sess).by_name("y"), value, executed


def test_modify_mixlist_moves_matmul_to_the_black_list(tmp_path):
    mixlist = tmp_path / "ops_info.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["MatMulV2"]}}))
    default_record, default_value, default_executed = _executed_matmul_dtype(npu_config("mixed_float16"))
    black_record, black_value, black_executed = _executed_matmul_dtype(
        npu_config("mixed_float16", modify_mixlist=str(mixlist)))
    assert (default_record.list, default_record.decision) == ("white", "float16")
    assert (black_record.list, black_record.decision) == ("black", "float32")
    assert any(name.startswith("y-0-CastToFp16") for name in default_executed)
    assert not any("CastToFp16" in name for name in black_executed)
    np.testing.assert_array_equal(black_value, np.full((2, 2), np.float32(1 / 3) * np.float32(1 / 3)))
    assert default_value[0, 0] != black_value[0, 0]
