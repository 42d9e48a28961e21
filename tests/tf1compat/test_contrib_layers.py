"""tf.contrib.layers / slim / framework against TF 1.15's documented behaviour: variable names, collections,
defaults and values, built as ported scripts build them; and the precision pass sees the ops TF 1.15 built."""
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.options import options_from_parameter_map
from npu_bridge.core.precision import rewrite

v1 = tf.compat.v1


pytestmark = pytest.mark.usefixtures("tf1_graph")


def _names(collection):
    return [v.op.name for v in v1.get_collection(collection)]


def _slim_net(images, is_training=True):
    from tensorflow.contrib import slim

    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_initializer=v1.contrib.layers.xavier_initializer(),
                        weights_regularizer=slim.l2_regularizer(0.01)):
        with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                            normalizer_params={"is_training": is_training}):
            net = slim.conv2d(images, 4, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.flatten(net)
        return slim.fully_connected(net, 3, activation_fn=None, scope="logits")


def test_every_spelling_is_one_module():
    import tensorflow.contrib as tf_contrib
    import tensorflow.contrib.layers as contrib_layers
    import tensorflow.contrib.slim as slim_by_import
    from tensorflow.contrib import slim
    from tensorflow.contrib.layers.python.layers import layers as layers_lib

    assert tf_contrib is v1.contrib
    assert contrib_layers is v1.contrib.layers is tf_contrib.layers
    assert slim is slim_by_import is v1.contrib.slim
    assert layers_lib.batch_norm is contrib_layers.batch_norm is slim.batch_norm
    assert v1.contrib.framework.arg_scope is slim.arg_scope


def test_slim_network_has_tf115_variable_names_and_collections():
    _slim_net(v1.placeholder(tf.float32, [2, 8, 8, 3]))
    assert _names(v1.GraphKeys.GLOBAL_VARIABLES) == [
        "conv1/weights", "conv1/BatchNorm/beta", "conv1/BatchNorm/moving_mean", "conv1/BatchNorm/moving_variance",
        "logits/weights", "logits/biases"]
    assert _names(v1.GraphKeys.MODEL_VARIABLES) == _names(v1.GraphKeys.GLOBAL_VARIABLES)
    # batch_norm's moving statistics are not trained; scale=False by default, so there is no gamma
    assert _names(v1.GraphKeys.TRAINABLE_VARIABLES) == ["conv1/weights", "conv1/BatchNorm/beta", "logits/weights",
                                                         "logits/biases"]
    assert len(v1.get_collection(v1.GraphKeys.REGULARIZATION_LOSSES)) == 2
    assert [op.type for op in v1.get_collection(v1.GraphKeys.UPDATE_OPS)] == ["AssignSub", "AssignSub"]


def test_a_tf115_checkpoint_restores_into_the_slim_network(tmp_path):
    # Variables saved under the names TF 1.15's slim gave them (as a TF 1.15 training run wrote them).
    shapes = {"conv1/weights": [3, 3, 3, 4], "conv1/BatchNorm/beta": [4], "conv1/BatchNorm/moving_mean": [4],
              "conv1/BatchNorm/moving_variance": [4], "logits/weights": [64, 3], "logits/biases": [3]}
    values = {name: np.random.RandomState(len(name)).rand(*shape).astype(np.float32)
              for name, shape in shapes.items()}
    with tf.Graph().as_default():
        saved = [v1.Variable(value, name=name) for name, value in values.items()]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            path = v1.train.Saver(saved).save(sess, str(tmp_path / "tf115.ckpt"))
    _slim_net(v1.placeholder(tf.float32, [2, 8, 8, 3]))
    with v1.Session() as sess:
        v1.train.Saver().restore(sess, path)
        restored = {v.op.name: sess.run(v) for v in v1.global_variables()}
    assert restored.keys() == values.keys()
    for name, value in values.items():
        np.testing.assert_array_equal(restored[name], value)


def test_batch_norm_defaults_and_moving_average_update():
    from tensorflow.contrib import layers

    x = v1.placeholder(tf.float32, [4, 3])
    y = layers.batch_norm(x, is_training=True, updates_collections=None)
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        out = sess.run(y, {x: data})
        moving_mean = sess.run(v1.get_collection(v1.GraphKeys.GLOBAL_VARIABLES, "BatchNorm/moving_mean")[0])
    # TF 1.15: epsilon=0.001, decay=0.999, batch statistics in training
    expected = (data - data.mean(0)) / np.sqrt(data.var(0) + 0.001)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(moving_mean, (1 - 0.999) * data.mean(0), rtol=1e-5)


def test_layer_norm_values_and_variables():
    x = v1.placeholder(tf.float32, [2, 5])
    y = v1.contrib.layers.layer_norm(x)
    data = np.random.RandomState(0).randn(2, 5).astype(np.float32)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        out = sess.run(y, {x: data})
    assert _names(v1.GraphKeys.TRAINABLE_VARIABLES) == ["LayerNorm/beta", "LayerNorm/gamma"]
    mean, var = data.mean(1, keepdims=True), data.var(1, keepdims=True)
    np.testing.assert_allclose(out, (data - mean) / np.sqrt(var + 1e-12), rtol=1e-4, atol=1e-5)


def test_initializers_and_regularizers_follow_tf115_formulas():
    layers = v1.contrib.layers
    xavier = v1.get_variable("xavier", [200, 300], initializer=layers.xavier_initializer(seed=1))
    scaled = v1.get_variable("scaled", [400, 100], initializer=layers.variance_scaling_initializer(seed=1))
    weights = v1.constant([[1.0, -2.0], [3.0, 0.5]])
    l2 = layers.l2_regularizer(0.1)(weights)
    l1 = layers.l1_regularizer(0.1)(weights)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        xavier_value, scaled_value, l2_value, l1_value = sess.run([xavier, scaled, l2, l1])
    limit = np.sqrt(6.0 / (200 + 300))          # uniform Glorot
    assert np.abs(xavier_value).max() <= limit and np.abs(xavier_value).max() > 0.95 * limit
    # factor 2.0, FAN_IN, truncated normal: stddev sqrt(1.3 * 2 / fan_in) before truncation at 2 stddev
    assert abs(scaled_value.std() - np.sqrt(2.0 / 400)) < 0.1 * np.sqrt(2.0 / 400)
    assert l2_value == pytest.approx(0.1 * (1 + 4 + 9 + 0.25) / 2)
    assert l1_value == pytest.approx(0.1 * (1 + 2 + 3 + 0.5))
    assert l2.op.name == "l2_regularizer"


def test_framework_variable_helpers_and_add_arg_scope():
    from tensorflow.contrib.framework.python.ops import add_arg_scope, arg_scope

    @add_arg_scope
    def scaled(x, factor=1.0):
        return x * factor

    with arg_scope([scaled], factor=3.0):
        assert scaled(2.0) == 6.0
    framework = v1.contrib.framework
    with v1.variable_scope("block"):
        framework.model_variable("w", [2], initializer=v1.zeros_initializer())
    v1.get_variable("other", [1])
    assert [v.op.name for v in framework.get_model_variables()] == ["block/w"]
    assert [v.op.name for v in framework.get_variables_to_restore(exclude=["other"])] == ["block/w"]
    assert framework.nest.flatten({"a": (1, 2)}) == [1, 2] and framework.nest.is_sequence([1])
    assert framework.get_or_create_global_step().op.name == "global_step"


def _layer_norm_reference(x):
    """TF 1.15's contrib layer_norm, written out: moments over the last axis, then batch_normalization."""
    with v1.variable_scope("LayerNorm"):
        beta = v1.get_variable("beta", [8], initializer=v1.zeros_initializer())
        gamma = v1.get_variable("gamma", [8], initializer=v1.ones_initializer())
        mean, variance = tf.nn.moments(x, [1], keepdims=True)
        return tf.nn.batch_normalization(x, mean, variance, beta, gamma, 1e-12)


def _mixed_float16():
    config = config_pb2.ConfigProto()
    custom = config.graph_options.rewrite_options.custom_optimizers.add()
    custom.name = "NpuOptimizer"
    custom.parameter_map["precision_mode_v2"].s = b"mixed_float16"
    return options_from_parameter_map(custom.parameter_map)


def _decisions(build):
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [4, 8], name="x")
        build(tf.matmul(x, v1.constant(np.ones((8, 8), np.float32))))
    report = rewrite(graph.as_graph_def(), _mixed_float16()).report
    return {(r.tf_type, r.ir_type, r.decision) for r in report.records if r.tf_type not in ("Const", "VariableV2")}


def test_precision_pass_decides_contrib_layer_norm_as_tf115s():
    assert _decisions(lambda x: v1.contrib.layers.layer_norm(x)) == _decisions(_layer_norm_reference)


def test_precision_pass_maps_contrib_batch_norm_to_the_npu_training_kernels():
    decisions = _decisions(lambda x: v1.contrib.layers.batch_norm(tf.reshape(x, [4, 1, 1, 8]), is_training=True))
    assert any(tf_type == "FusedBatchNormV3" and ir_type == "BNTrainingUpdate" for tf_type, ir_type, _ in decisions)
