"""TF 1.15 module paths TensorFlow 2.x removed or moved (tensorflow_core.*, tensorflow.python.graph_util, the tf.data
threadpool, distribution_strategy_context), and the private internals no drop-in can keep, which stop with an
error naming the script's line and the public replacement."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge import tf1compat


@pytest.fixture(autouse=True)
def installed():
    tf1compat.install()


def test_tensorflow_core_is_tf_1_15s_name_for_the_tensorflow_package():
    from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
    from tensorflow.python.tools import freeze_graph
    from tensorflow_core.core.protobuf.rewriter_config_pb2 import (
        RewriterConfig as CoreRewriterConfig,
    )
    from tensorflow_core.python.tools import freeze_graph as core_freeze_graph

    assert CoreRewriterConfig is RewriterConfig and core_freeze_graph is freeze_graph


def test_graph_util_has_tf_1_15s_five_functions_and_freezes_a_graph():
    from tensorflow.python import graph_util

    import npu_bridge.tf1compat.graph_util as framework_graph_util

    assert graph_util is framework_graph_util
    graph = tf.Graph()
    with graph.as_default():
        weight = tf.compat.v1.get_variable("w", initializer=np.array([[2.0]], np.float32))
        tf.matmul(tf.compat.v1.placeholder(tf.float32, [None, 1], name="x"), weight, name="y")
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            frozen = graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["y"])
    assert {node.op for node in frozen.node} == {"Placeholder", "Const", "Identity", "MatMul"}
    assert [node.name for node in graph_util.extract_sub_graph(frozen, ["y"]).node if node.op == "MatMul"] == ["y"]
    assert callable(graph_util.remove_training_nodes) and callable(graph_util.must_run_on_cpu)
    assert callable(graph_util.tensor_shape_from_node_def_name)


def test_override_threadpool_keeps_the_elements_and_sets_the_private_pool():
    from tensorflow.python.data.experimental.ops import threadpool

    dataset = threadpool.override_threadpool(tf.data.Dataset.range(4).map(lambda x: x * 2),
                                             threadpool.PrivateThreadPool(8, display_name="input_pipeline"))
    assert dataset.options().threading.private_threadpool_size == 8
    assert dataset.options().threading.max_intra_op_parallelism == 1
    with tf.Graph().as_default():
        values = tf.compat.v1.data.make_one_shot_iterator(threadpool.override_threadpool(
            tf.data.Dataset.range(4), threadpool.PrivateThreadPool(2))).get_next()
        with tf.compat.v1.Session() as sess:
            assert [sess.run(values) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_threads must be at least 1, got 0"):
        threadpool.PrivateThreadPool(0)
    with pytest.raises(TypeError, match="expected a threadpool.PrivateThreadPool"):
        threadpool.override_threadpool(dataset, 4)


def test_distribution_strategy_context_answers_with_the_default_strategy():
    from tensorflow.python.distribute import (
        distribution_strategy_context as from_distribute,
    )
    from tensorflow.python.training import (
        distribution_strategy_context as from_training,
    )

    assert from_distribute is from_training
    assert not from_distribute.has_strategy()
    assert from_distribute.get_strategy() is tf.distribute.get_strategy()
    assert from_distribute.get_replica_context() is not None


def test_graph_transforms_is_an_import_error_naming_the_line_and_the_replacements():
    with pytest.raises(ImportError) as raised:
        from tensorflow.tools.graph_transforms import TransformGraph  # noqa: F401
    message = str(raised.value)
    assert message.startswith(f"{__file__}:")
    assert "graph_transforms" in message and "extract_sub_graph" in message and "Grappler" in message


def test_model_layers_names_the_line_and_model_layers_and_a_subclass_may_set_its_own():
    import tf_keras

    model = tf_keras.Sequential([tf_keras.layers.Dense(2, input_shape=(3,))])
    with pytest.raises(AttributeError) as raised:
        model._layers.clear()
    assert str(raised.value).startswith(f"{__file__}:")
    assert "model.layers" in str(raised.value) and "tf.keras.Sequential" in str(raised.value)
    assert not hasattr(model, "_layers") and len(model.layers) == 1

    class Stack(tf_keras.Model):
        def __init__(self):
            super().__init__()
            self._layers = [tf_keras.layers.Dense(1)]

        def call(self, inputs):
            return self._layers[0](inputs)

    assert len(Stack()._layers) == 1


def test_training_tracking_is_tf_1_15s_name_for_trackable():
    from tensorflow.python.trackable.autotrackable import AutoTrackable
    from tensorflow.python.trackable.base import Trackable
    from tensorflow.python.training.tracking import base as checkpointable
    from tensorflow.python.training.tracking import data_structures, tracking

    assert checkpointable.Trackable is Trackable and tracking.AutoTrackable is AutoTrackable
    assert isinstance(data_structures.List([AutoTrackable()]), Trackable)


def test_modules_only_newer_tensorflow_dropped_are_aliased_only_there():
    import importlib

    training_ops = importlib.import_module("tensorflow.python.training.training_ops")
    tpu_config = importlib.import_module("tensorflow.python.tpu.tpu_config")
    assert callable(training_ops.apply_gradient_descent)
    assert hasattr(tpu_config, "RunConfig") and hasattr(tpu_config, "TPUConfig")
    newer = tuple(int(part) for part in tf.__version__.split(".")[:2]) >= (2, 16)
    assert (training_ops.__name__ == "tensorflow.python.ops.gen_training_ops") is newer
    assert (tpu_config.__name__ == "npu_bridge.tf1compat.contrib.tpu") is newer


def test_a_batch_normalization_subclass_with_tf_1_15s_moments_signature_runs_its_override():
    import tf_keras

    calls = []

    class TpuBatchNormalization(tf_keras.layers.BatchNormalization):
        def _moments(self, inputs, reduction_axes, keep_dims):     # TF 1.15's signature, as EfficientNet ports
            calls.append(keep_dims)
            return tf.nn.moments(inputs, reduction_axes, keepdims=keep_dims)

    with tf.Graph().as_default():
        inputs = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
        outputs = TpuBatchNormalization(epsilon=0.0, center=False, scale=False)(inputs, training=True)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            normalized = sess.run(outputs)
    assert calls == [False]
    np.testing.assert_allclose(normalized, (np.arange(8.0).reshape(4, 2) - [3, 4]) / np.sqrt(5.0), rtol=1e-5)
