"""TF 1.15 attributes of tensorflow.python modules that TensorFlow 2.x moved (tf1compat.python_internals): each one,
called the way ModelZoo ports call it, behaves as TF 1.15's did; the one TensorFlow 2.x has nothing for names the
script's line and the replacement; and nothing is added without tf1compat.install()."""
import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.tf1compat import python_internals

v1 = tf.compat.v1
pytestmark = pytest.mark.usefixtures("tf1_graph")


def _run(*fetches, feed_dict=None):
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run(v1.local_variables_initializer())
        return sess.run(list(fetches), feed_dict)


@pytest.mark.parametrize("module, name, target", sorted(
    (module, name, target) for module, names in python_internals.MOVED.items() for name, target in names.items()))
def test_every_moved_name_is_the_function_tensorflow_keeps(module, name, target):
    target_module, _, attribute = target.partition(":")
    assert getattr(importlib.import_module(module), name) is getattr(importlib.import_module(target_module), attribute)


def test_control_flow_ops_cond_while_loop_and_assert_build_v1_control_flow():
    from tensorflow.python.ops import control_flow_ops
    from tensorflow.python.ops.control_flow_ops import cond        # the from-import spelling too

    flag = v1.placeholder(tf.bool, [])
    x = tf.constant(3.0)
    picked = cond(flag, lambda: x * 2.0, lambda: x - 1.0)       # Jasper's helper.py, as TF 1.15 wrote it
    _, total = control_flow_ops.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i),
                                           [tf.constant(0), tf.constant(0)])
    check = control_flow_ops.Assert(x > 5.0, [x], name="x_too_small")
    ops = {op.type for op in tf.compat.v1.get_default_graph().get_operations()}
    assert {"Switch", "Merge", "Enter", "Exit", "NextIteration", "Assert"} <= ops    # TF 1.15's graph, not cond_v2
    assert _run(picked, total, feed_dict={flag: True}) == [6.0, 6]
    assert _run(picked, feed_dict={flag: False}) == [2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="x_too_small"):
        _run(check)


def test_control_flow_ops_case_picks_the_first_true_branch_and_slims_image_decoder_runs():
    import tf_slim
    from tensorflow.python.ops import control_flow_ops

    x = v1.placeholder(tf.int32, [])
    picked = control_flow_ops.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.equal(x, 0), lambda: tf.constant(0))],
                                   default=lambda: tf.constant(1), exclusive=False)
    assert [_run(picked, feed_dict={x: value})[0] for value in (-5, 0, 7)] == [-1, 0, 1]
    pixels = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    with v1.Session() as sess:
        png = sess.run(tf.image.encode_png(pixels))
    example = tf.train.Example(features=tf.train.Features(feature={
        "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
        "image/format": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"png"]))}))
    decoder = tf_slim.tfexample_decoder.TFExampleDecoder(     # a slim dataset's decoder, as NASNet's reads ImageNet
        {"image/encoded": v1.FixedLenFeature((), tf.string), "image/format": v1.FixedLenFeature((), tf.string)},
        {"image": tf_slim.tfexample_decoder.Image(channels=3)})
    [image] = decoder.decode(tf.constant(example.SerializeToString()), ["image"])
    np.testing.assert_array_equal(_run(image)[0], pixels)


def test_array_ops_stack_and_unstack():
    from tensorflow.python.ops import array_ops

    rows = array_ops.unstack(tf.constant([[1, 2], [3, 4], [5, 6]]), axis=0)
    stacked = array_ops.stack(rows[::-1], axis=1)
    assert len(rows) == 3
    np.testing.assert_array_equal(_run(stacked)[0], [[5, 3, 1], [6, 4, 2]])


def test_nest_is_sequence_answers_as_tf_1_15s():
    import collections

    from tensorflow.python.util import nest

    pair = collections.namedtuple("pair", "a b")
    assert [nest.is_sequence(value) for value in ([1], (1,), {"a": 1}, pair(1, 2))] == [True] * 4
    assert [nest.is_sequence(value) for value in ("ab", b"ab", 1.0, np.zeros(2), tf.constant(1))] == [False] * 5
    assert v1.contrib.framework.nest.is_sequence([tf.constant(1)])   # GNMT's gnmt_model.py spelling


def test_pywrap_tensorflow_new_checkpoint_reader_reads_a_saved_checkpoint(tmp_path):
    from tensorflow.python import pywrap_tensorflow

    v1.get_variable("dense/kernel", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        path = v1.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    reader = pywrap_tensorflow.NewCheckpointReader(path)        # NASNet's freeze_graph.py, EDVR's saver.py
    assert reader.get_variable_to_shape_map() == {"dense/kernel": [2, 3]}
    assert reader.has_tensor("dense/kernel") and not reader.has_tensor("dense/bias")
    np.testing.assert_array_equal(reader.get_tensor("dense/kernel"), np.arange(6).reshape(2, 3))
    with pytest.raises(tf.errors.NotFoundError):
        pywrap_tensorflow.NewCheckpointReader(str(tmp_path / "missing.ckpt"))


def test_variable_scope_variable_makes_metrics_impls_local_metric_variable():
    from tensorflow.python.framework import dtypes, ops
    from tensorflow.python.ops import array_ops, variable_scope

    with variable_scope.variable_scope("metric"):
        total = variable_scope.variable(          # TF 1.15 metrics_impl.metric_variable, as Bert's copy calls it
            lambda: array_ops.zeros([2], dtypes.float32), trainable=False, name="total",
            collections=[ops.GraphKeys.LOCAL_VARIABLES, ops.GraphKeys.METRIC_VARIABLES], validate_shape=True,
            synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
    assert total.name == "metric/total:0" and total.dtype.name == "float32_ref"     # a ref variable, TF 1.15's kind
    assert v1.local_variables() == [total] == v1.get_collection(ops.GraphKeys.METRIC_VARIABLES)
    assert v1.global_variables() == [] and v1.trainable_variables() == []
    update = v1.assign_add(total, [1.0, 2.0])
    np.testing.assert_array_equal(_run(update)[0], [1.0, 2.0])


class _StagedVariable:
    """GNMT's variable_mgr_util.StagedModelVariable in miniature: a variable read through a staged value."""

    def __init__(self, variable):
        self.variable = variable

    def convert(self, dtype=None, name=None, as_ref=False):
        del dtype, name
        return self.variable if as_ref else tf.identity(self.variable) * 10.0


def test_ops_register_tensor_conversion_function_converts_a_registered_class():
    from tensorflow.python.framework import ops

    ops.register_tensor_conversion_function(_StagedVariable, _StagedVariable.convert)
    staged = _StagedVariable(v1.get_variable("w", initializer=2.0))
    assert _run(tf.add(staged, 1.0), ops.convert_to_tensor(staged)) == [21.0, 20.0]


def test_gradients_impl_aggregates_indexed_slices_as_variable_mgr_does():
    from tensorflow.python.ops import gradients_impl

    embedding = v1.get_variable("embedding", initializer=np.ones([4, 2], np.float32))
    towers = [tf.gradients(tf.reduce_sum(tf.gather(embedding, ids) * scale), embedding)[0]
              for ids, scale in (([0, 2], 1.0), ([2, 3], 3.0))]
    assert all(isinstance(grad, tf.IndexedSlices) for grad in towers)
    summed = gradients_impl._AggregateIndexedSlicesGradients(towers)  # GNMT's variable_mgr_util.py:521
    assert isinstance(summed, tf.IndexedSlices)
    assert gradients_impl._AggregateIndexedSlicesGradients(towers[:1]) is towers[0]
    values, indices = _run(summed.values, summed.indices)
    np.testing.assert_array_equal(indices, [0, 2, 2, 3])
    np.testing.assert_array_equal(values, [[1, 1], [1, 1], [3, 3], [3, 3]])
    np.testing.assert_array_equal(_run(tf.convert_to_tensor(summed))[0], [[1, 1], [0, 0], [4, 4], [3, 3]])


def test_keras_mixed_precision_experimental_names_the_line_and_the_replacement():
    mixed_precision = importlib.import_module("tf_keras.api._v1.keras").mixed_precision     # npu-run's tf.keras
    with pytest.raises(AttributeError) as raised:
        mixed_precision.experimental.Policy("mixed_float16")
    message = str(raised.value)
    assert message.startswith(f"{__file__}:")
    assert "tf.keras.mixed_precision.experimental" in message and "set_global_policy" in message
    assert isinstance(raised.value, python_internals.RemovedAttributeError)
    assert not hasattr(mixed_precision, "experimental")         # a script's hasattr fallback still works
    assert mixed_precision.LossScaleOptimizer is not None       # what the module has is untouched
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        mixed_precision.no_such_name


def test_nothing_is_added_without_install_and_npu_run_gets_every_name(tmp_path):
    """A fresh process: TensorFlow's modules lack the names until install(); a GNMT-style script, which registers
    its conversion function at import time, runs under npu-run."""
    check = ("import tensorflow\nfrom tensorflow.python.ops import control_flow_ops\n"
             "from tensorflow.python.framework import ops\n"
             "print(hasattr(control_flow_ops, 'cond'), hasattr(ops, 'register_tensor_conversion_function'))\n")
    script = tmp_path / "variable_mgr_style.py"
    script.write_text(textwrap.dedent("""
        import tensorflow as tf
        from tensorflow.python.framework import ops
        from tensorflow.python.ops import control_flow_ops, gradients_impl

        class Staged(object):
            def __init__(self, value):
                self.value = value

            def _convert(self, dtype=None, name=None, as_ref=False):
                return tf.constant(self.value)

        ops.register_tensor_conversion_function(Staged, Staged._convert)
        total = control_flow_ops.cond(tf.constant(True), lambda: tf.add(Staged(2.0), 1.0), lambda: tf.constant(0.0))
        with tf.Session() as sess:
            print("total", sess.run(total), callable(gradients_impl._AggregateIndexedSlicesGradients))
    """))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    plain = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=300)
    ported = subprocess.run([sys.executable, "-m", "npu_bridge", str(script)], env=env, capture_output=True,
                            text=True, timeout=300)
    assert plain.stdout.split() == ["False", "False"], plain.stderr[-2000:]
    assert ported.returncode == 0, ported.stderr[-2000:]
    assert "total 3.0 True" in ported.stdout
