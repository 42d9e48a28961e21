"""TF1 training graphs for the benchmarks, built the way ported Ascend scripts build them.

Every builder returns a `Model` in a fresh tf.Graph: placeholders, a loss, and a train op that runs gradients,
Momentum updates and (for batch norm) moving-average updates, because the precision pass and TensorFlow's
auto_mixed_precision both spend most of their time in the backward graph, not the forward one. Only
tf.compat.v1 core ops are used (no Keras), so the graphs are identical on TF 2.15 and TF 2.21.
"""
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1


@dataclass
class Model:
    graph: tf.Graph
    train_op: tf.Operation
    loss: tf.Tensor
    feeds: dict  # placeholder -> numpy array, fed at every step

    @property
    def n_nodes(self):
        return len(self.graph.as_graph_def().node)


def _dense(x, units, name, activation=True):
    with v1.variable_scope(name):
        w = v1.get_variable("kernel", [x.shape[-1], units])
        b = v1.get_variable("bias", [units], initializer=v1.zeros_initializer())
        y = tf.nn.bias_add(tf.matmul(x, w), b)
        return tf.nn.relu(y) if activation else y


def _conv(x, filters, kernel, stride, name):
    with v1.variable_scope(name):
        w = v1.get_variable("kernel", [kernel, kernel, x.shape[-1], filters])
        return tf.nn.conv2d(x, w, [1, stride, stride, 1], padding="SAME")


def _batch_norm(x, name, momentum=0.9):
    """Training-mode FusedBatchNormV3 plus the moving-average updates a real BN layer adds to UPDATE_OPS."""
    channels = x.shape[-1]
    with v1.variable_scope(name):
        scale = v1.get_variable("gamma", [channels], initializer=v1.ones_initializer())
        offset = v1.get_variable("beta", [channels], initializer=v1.zeros_initializer())
        moving_mean = v1.get_variable("moving_mean", [channels], initializer=v1.zeros_initializer(),
                                      trainable=False)
        moving_var = v1.get_variable("moving_variance", [channels], initializer=v1.ones_initializer(),
                                     trainable=False)
        y, mean, var = v1.nn.fused_batch_norm(x, scale, offset, is_training=True)
        for moving, batch in ((moving_mean, mean), (moving_var, var)):
            v1.add_to_collection(v1.GraphKeys.UPDATE_OPS,
                                 v1.assign_sub(moving, (moving - batch) * (1.0 - momentum)))
        return y


def _classifier_loss(logits, batch, classes):
    labels = v1.placeholder(tf.int32, [batch], name="labels")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return labels, loss


def _finish(graph, loss, feeds, learning_rate=0.01):
    with v1.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
        train_op = v1.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss)
    return Model(graph, train_op, loss, feeds)


def _new_graph(seed=0):
    graph = tf.Graph()
    graph.seed = seed
    return graph


def mlp_stack(layers, width=16, batch=8, classes=10, input_dim=None):
    """`layers` dense+ReLU layers of `width` units, softmax cross-entropy, Momentum."""
    input_dim = input_dim or width
    graph = _new_graph()
    rng = np.random.default_rng(0)
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, input_dim], name="x")
        h = x
        for i in range(layers):
            h = _dense(h, width, f"dense{i}")
        labels, loss = _classifier_loss(_dense(h, classes, "logits", activation=False), batch, classes)
        feeds = {x: rng.standard_normal((batch, input_dim), dtype=np.float32),
                 labels: rng.integers(0, classes, batch).astype(np.int32)}
        return _finish(graph, loss, feeds)


def conv_bn_stack(blocks, channels=8, image=8, batch=2, classes=10):
    """`blocks` conv3x3+BN+ReLU blocks at constant width, global average pool, dense classifier, Momentum."""
    graph = _new_graph()
    rng = np.random.default_rng(0)
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, image, image, channels], name="x")
        h = x
        for i in range(blocks):
            h = tf.nn.relu(_batch_norm(_conv(h, channels, 3, 1, f"conv{i}"), f"bn{i}"))
        pooled = tf.reduce_mean(h, axis=[1, 2])
        labels, loss = _classifier_loss(_dense(pooled, classes, "logits", activation=False), batch, classes)
        feeds = {x: rng.standard_normal((batch, image, image, channels), dtype=np.float32),
                 labels: rng.integers(0, classes, batch).astype(np.int32)}
        return _finish(graph, loss, feeds)


def small_cnn(batch=32, image=32, classes=10):
    """Three conv+ReLU layers with max pooling and two dense layers: a CIFAR-sized classifier."""
    graph = _new_graph()
    rng = np.random.default_rng(0)
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, image, image, 3], name="x")
        h = x
        for i, filters in enumerate((32, 64, 64)):
            h = tf.nn.relu(_conv(h, filters, 3, 1, f"conv{i}"))
            h = tf.nn.max_pool2d(h, 2, 2, "SAME")
        h = tf.reshape(h, [batch, -1])
        h = _dense(h, 128, "fc")
        labels, loss = _classifier_loss(_dense(h, classes, "logits", activation=False), batch, classes)
        feeds = {x: rng.standard_normal((batch, image, image, 3), dtype=np.float32),
                 labels: rng.integers(0, classes, batch).astype(np.int32)}
        return _finish(graph, loss, feeds)


def mlp(batch=64, input_dim=784, hidden=1024, classes=10):
    """784-1024-1024-10 MLP: the MNIST model of most ported TF1 tutorials."""
    graph = _new_graph()
    rng = np.random.default_rng(0)
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, input_dim], name="x")
        h = _dense(_dense(x, hidden, "fc0"), hidden, "fc1")
        labels, loss = _classifier_loss(_dense(h, classes, "logits", activation=False), batch, classes)
        feeds = {x: rng.standard_normal((batch, input_dim), dtype=np.float32),
                 labels: rng.integers(0, classes, batch).astype(np.int32)}
        return _finish(graph, loss, feeds)


def _bottleneck(x, width, stride, name, project):
    with v1.variable_scope(name):
        shortcut = x
        if project:
            shortcut = _batch_norm(_conv(x, 4 * width, 1, stride, "proj"), "proj_bn")
        h = tf.nn.relu(_batch_norm(_conv(x, width, 1, 1, "a"), "a_bn"))
        h = tf.nn.relu(_batch_norm(_conv(h, width, 3, stride, "b"), "b_bn"))
        h = _batch_norm(_conv(h, 4 * width, 1, 1, "c"), "c_bn")
        return tf.nn.relu(h + shortcut)


def resnet50(batch=2, image=224, base_width=64, classes=1000):
    """ResNet-50 v1 topology (bottlenecks 3-4-6-3, projection shortcuts, BN everywhere).

    `base_width` scales every layer's channels (64 is the real network) and `image` the input side, so the
    same 50-layer training graph fits the quick mode's time budget on two cores.
    """
    graph = _new_graph()
    rng = np.random.default_rng(0)
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, image, image, 3], name="x")
        h = tf.nn.relu(_batch_norm(_conv(x, base_width, 7, 2, "stem"), "stem_bn"))
        h = tf.nn.max_pool2d(h, 3, 2, "SAME")
        for stage, (repeats, mult) in enumerate(((3, 1), (4, 2), (6, 4), (3, 8))):
            for block in range(repeats):
                stride = 2 if block == 0 and stage > 0 else 1
                h = _bottleneck(h, base_width * mult, stride, f"stage{stage}_block{block}", project=block == 0)
        pooled = tf.reduce_mean(h, axis=[1, 2])
        labels, loss = _classifier_loss(_dense(pooled, classes, "logits", activation=False), batch, classes)
        feeds = {x: rng.standard_normal((batch, image, image, 3), dtype=np.float32),
                 labels: rng.integers(0, classes, batch).astype(np.int32)}
        return _finish(graph, loss, feeds)


def tiny():
    """y = x * 2 + 1 on four floats: a graph whose run time is all session overhead."""
    graph = _new_graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [4], name="x")
        y = x * 2.0 + 1.0
    return graph, x, y, np.arange(4, dtype=np.float32)


def depth_for_nodes(builder, target_nodes):
    """The depth argument of `builder` whose graph has about `target_nodes` nodes (graphs grow linearly)."""
    one, two = builder(1).n_nodes, builder(2).n_nodes
    per_layer = two - one
    return max(1, round((target_nodes - (one - per_layer)) / per_layer))


REWRITE_FAMILIES = {"mlp_stack": mlp_stack, "conv_bn_stack": conv_bn_stack}
