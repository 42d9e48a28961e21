"""TF 1.15 module paths TensorFlow 2.x removed or moved (tensorflow_core.*, tensorflow.python.graph_util, the tf.data
threadpool, distribution_strategy_context), and the private internals no drop-in can keep, which stop with an
error naming the script's line and the public replacement."""
import numpy as np
import pytest
import tensorflow as tf


pytestmark = pytest.mark.usefixtures("installed")


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


def test_a_star_import_of_a_contrib_module_keeps_the_scripts_own_tf():
    namespace = {"tf": "the script's TF1 tf"}
    exec("from tensorflow.contrib.rnn import *\nfrom tensorflow.contrib.layers import *", namespace)
    assert namespace["tf"] == "the script's TF1 tf"      # the modules' own `import tensorflow as tf` stays theirs
    assert "LSTMCell" in namespace and "MultiRNNCell" in namespace and "xavier_initializer" in namespace
    assert not {"sys", "removed", "np"} & set(namespace)


def test_contrib_deep_paths_of_modules_tensorflow_still_has():
    from tensorflow.contrib.framework.python.framework import checkpoint_utils
    from tensorflow.contrib.learn.python.learn.datasets.mnist import DataSet, read_data_sets
    from tensorflow.contrib.tpu.proto import compilation_result_pb2
    from tensorflow.contrib.tpu.python.tpu import tpu_feed
    from tensorflow.examples.tutorials.mnist import input_data
    from tensorflow.python.tpu import tpu_feed as tf_tpu_feed
    from tensorflow.python.training import checkpoint_utils as tf_checkpoint_utils

    assert checkpoint_utils is tf_checkpoint_utils and tpu_feed is tf_tpu_feed
    assert read_data_sets is input_data.read_data_sets and DataSet is input_data.DataSet
    assert compilation_result_pb2.CompilationResultProto.__name__ == "CompilationResultProto"


def test_contrib_saved_model_reads_a_saved_model_and_its_signature(tmp_path):
    from tensorflow.contrib import saved_model as contrib_saved_model
    from tensorflow.contrib.saved_model.python.saved_model import reader

    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        y = tf.identity(x * 2.0, name="y")
        builder = tf.compat.v1.saved_model.Builder(export_dir)
        signature = tf.compat.v1.saved_model.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"predict": signature})
        builder.save()
    saved = reader.read_saved_model(export_dir)
    assert [list(tags) for tags in reader.get_saved_model_tag_sets(export_dir)] == [["serve"]]
    found = contrib_saved_model.get_signature_def_by_key(saved.meta_graphs[0], "predict")
    assert found.outputs["y"].name == "y:0"
    with pytest.raises(ValueError, match="No SignatureDef with key 'serving_default' found"):
        contrib_saved_model.get_signature_def_by_key(saved.meta_graphs[0], "serving_default")
    with pytest.raises(IOError, match="SavedModel file does not exist"):
        reader.read_saved_model(str(tmp_path))


def test_the_v1_keras_api_has_keras_version():
    import tf_keras
    from tf_keras.api._v1 import keras

    assert keras.__version__ == tf_keras.__version__


def test_eager_profiler_starts_stops_and_saves_a_profile_under_the_logdir(tmp_path):
    from tensorflow.python.eager import profiler

    profiler.start()
    with pytest.raises(profiler.ProfilerAlreadyRunningError):
        profiler.start()
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        sess.run(tf.reduce_sum(tf.ones([64, 64])))
    result = profiler.stop()
    with pytest.raises(profiler.ProfilerNotRunningError):
        profiler.stop()
    profiler.save(str(tmp_path), result)
    runs = list((tmp_path / "plugins" / "profile").iterdir())
    assert len(runs) == 1 and any(runs[0].iterdir())


def test_contrib_mixed_precision_and_image_ops_module_paths():
    from tensorflow.contrib import mixed_precision
    from tensorflow.contrib.image.ops import gen_image_ops
    from tensorflow.contrib.mixed_precision.python import loss_scale_optimizer
    from tensorflow_core.contrib.mixed_precision.python.loss_scale_manager import (
        ExponentialUpdateLossScaleManager,
    )

    assert ExponentialUpdateLossScaleManager is mixed_precision.ExponentialUpdateLossScaleManager
    assert loss_scale_optimizer.LossScaleOptimizer is mixed_precision.LossScaleOptimizer
    image = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        shifted = sess.run(gen_image_ops.image_projective_transform_v2(      # output (x, y) reads input (x + 1, y)
            image, transforms=[[1, 0, 1, 0, 1, 0, 0, 0]], output_shape=[3, 3], interpolation="NEAREST"))
    np.testing.assert_array_equal(shifted[0, :, :, 0], [[1, 2, 0], [4, 5, 0], [7, 8, 0]])


def test_an_estimator_module_path_our_estimator_lacks_says_what_it_has():
    from npu_bridge.tf1compat.estimator_paths import tensorflow_has_estimator

    if tensorflow_has_estimator():      # TensorFlow 2.15: its own Estimator, canned heads included
        from tensorflow.python.estimator.canned import head

        assert hasattr(head, "_Head")
        return
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'tensorflow_estimator\.python\.estimator\.canned'"
                                                  r": .*canned estimators and heads.*TensorFlow 2\.15"):
        from tensorflow_estimator.python.estimator.canned import head  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="write a model_fn"):
        from tensorflow.python.estimator.canned.optimizers import get_optimizer_instance  # noqa: F401


def _numpy_resample(data, points):
    """TF 1.15's resampler kernel: the four neighbours' bilinear weights, a neighbour outside the image is zero."""
    out = np.zeros(points.shape[:-1] + data.shape[-1:], np.float32)
    for index in np.ndindex(points.shape[:-1]):
        x, y = points[index]
        for corner_x in (np.floor(x), np.floor(x) + 1):
            for corner_y in (np.floor(y), np.floor(y) + 1):
                weight = (1 - abs(x - corner_x)) * (1 - abs(y - corner_y))
                if 0 <= corner_x < data.shape[2] and 0 <= corner_y < data.shape[1]:
                    out[index] += weight * data[index[0], int(corner_y), int(corner_x)]
    return out


def test_contrib_resampler_interpolates_bilinearly_with_zeros_outside_the_image():
    from tensorflow.contrib.resampler import resampler

    rng = np.random.RandomState(0)
    data = rng.rand(2, 4, 5, 3).astype(np.float32)
    warp = np.concatenate([rng.uniform(-1.5, 5.5, (2, 6, 1)), rng.uniform(-1.5, 4.5, (2, 6, 1))],
                          axis=-1).astype(np.float32)
    warp[0, 0] = [2.0, 1.0]         # a pixel centre reads the pixel itself
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        sampled = sess.run(resampler(data, warp))
    np.testing.assert_allclose(sampled, _numpy_resample(data, warp), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sampled[0, 0], data[0, 1, 2], rtol=1e-6)


def test_estimator_export_decorates_a_copied_estimator_class_unchanged():
    from tensorflow.python.util.tf_export import estimator_export

    @estimator_export("estimator.DNNLinearCombinedClassifier", v1=[])
    class Classifier:
        pass

    assert Classifier.__name__ == "Classifier" and isinstance(Classifier(), Classifier)


def test_the_estimators_hooks_check_keeps_its_tf_1_15_import_path():
    from tensorflow.python.estimator.estimator import _check_hooks_type

    hook = tf.compat.v1.train.StopAtStepHook(last_step=1)
    assert _check_hooks_type((hook,)) == [hook] and _check_hooks_type(None) == []
    with pytest.raises(TypeError, match="SessionRunHook"):
        _check_hooks_type([object()])
