"""The other TF 1.15 module paths ModelZoo's training folders import that TensorFlow 2.21 lacks: each works where TF 2
still has the code (contrib.tpu's deep paths to tensorflow.python.tpu, contrib.ctc's CTC ops, contrib.eager's
graph-mode answers) or stops with one clear error naming the module and what to use (TPUEstimator's internals on
TensorFlow >= 2.16, contrib.model_pruning, contrib.util.loader, tensorflow.google, tensorflow.tools.graph_transforms)."""
import importlib
import importlib.util

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.tf1compat.contrib.removed import ContribRemovedError

pytestmark = pytest.mark.usefixtures("installed")

# TPUEstimator's internals: TensorFlow 2.15 still has them under tensorflow.python.tpu, 2.16 and later do not
TPU_ESTIMATOR_INTERNALS = ("error_handling", "session_support", "tpu_context", "util")
HAS_TPU_ESTIMATOR_INTERNALS = importlib.util.find_spec("tensorflow.python.tpu.error_handling") is not None


def test_contrib_tpu_optimizer_and_datasets_are_tensorflows_tpu_modules():
    from tensorflow.contrib.tpu.python.tpu import tpu_optimizer
    from tensorflow.contrib.tpu.python.tpu.datasets import StreamingFilesDataset
    from tensorflow.python.tpu import datasets

    assert tpu_optimizer.CrossShardOptimizer is tf.compat.v1.tpu.CrossShardOptimizer
    assert StreamingFilesDataset is datasets.StreamingFilesDataset


@pytest.mark.parametrize("name", ["functional", "tpu", "tpu_config", "tpu_feed", "tpu_function", "datasets",
                                  "ops.tpu_ops", "bfloat16"])
def test_the_tensorflow_python_tpu_modules_the_ports_import_resolve(name):
    assert importlib.import_module(f"tensorflow.python.tpu.{name}") is not None


@pytest.mark.parametrize("name", TPU_ESTIMATOR_INTERNALS)
def test_tpu_estimator_internals_are_tensorflows_where_it_has_them_else_the_contrib_error(name):
    contrib_name = f"tensorflow.contrib.tpu.python.tpu.{name}"
    if HAS_TPU_ESTIMATOR_INTERNALS:
        assert importlib.import_module(contrib_name) is importlib.import_module(f"tensorflow.python.tpu.{name}")
        return
    with pytest.raises(ContribRemovedError, match=rf"tf\.contrib\.tpu\.python\.tpu\.{name} is not provided.*"
                                                  r"TPUEstimator with use_tpu=False.*TensorFlow 2\.16"):
        exec(f"from tensorflow.contrib.tpu.python.tpu import {name}", {})


@pytest.mark.parametrize("statement, error", [
    ("from tensorflow.contrib.model_pruning.python import pruning",
     r"tf\.contrib\.model_pruning is not provided.*tensorflow_model_optimization\.sparsity"),
    ("from tensorflow.contrib.util import loader", r"tf\.contrib\.util\.loader is not provided.*tf\.load_op_library"),
])
def test_contrib_modules_tf_2_has_no_code_for_name_themselves_and_the_replacement(statement, error):
    with pytest.raises(ContribRemovedError, match=error):
        exec(statement, {})


def test_contrib_ctc_greedy_decoder_reads_the_best_path_of_a_graph(tf1_graph):
    import tensorflow.contrib.ctc as ctc

    assert ctc.ctc_loss is tf.compat.v1.nn.ctc_loss
    # time-major [time, batch, classes]; the last class is the blank: best path 1 1 blank 2 -> labels 1 2
    best = [1, 1, 3, 2]
    logits = np.full((4, 1, 4), -5.0, np.float32)
    logits[np.arange(4), 0, best] = 5.0
    decoded, _ = ctc.ctc_greedy_decoder(tf.constant(logits), sequence_length=[4])
    with tf.compat.v1.Session() as session:
        assert session.run(decoded[0]).values.tolist() == [1, 2]


def test_contrib_eager_answers_as_tf_1_15_did_in_a_graph(tf1_graph):
    import tensorflow.contrib.eager as tfe

    assert tfe.in_eager_mode() is False and tf.compat.v1.contrib.eager.executing_eagerly() is False
    with pytest.raises(RuntimeError, match=r"only when executing eagerly.*make_one_shot_iterator"):
        tfe.Iterator(tf.data.Dataset.range(3))
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.eager\.defun is not provided.*eager execution"):
        tfe.defun


def test_tensorflow_google_is_an_import_error_naming_the_line_and_the_open_source_import():
    with pytest.raises(ImportError) as raised:
        import tensorflow.google as tf_google  # noqa: F401
    message = str(raised.value)
    assert message.startswith(f"{__file__}:")
    assert "tensorflow.google is Google's internal build" in message and "import tensorflow as tf" in message


def test_contrib_signal_stateless_and_framework_smart_cond_are_tensorflows_functions(tf1_graph):
    from tensorflow.python.util import deprecation

    contrib = tf.compat.v1.contrib
    assert contrib.signal.linear_to_mel_weight_matrix is tf.signal.linear_to_mel_weight_matrix
    assert contrib.framework.deprecated is deprecation.deprecated
    ours = contrib.stateless.stateless_random_normal([4], seed=[3, 7])
    tensorflows = tf.random.stateless_normal([4], seed=[3, 7])
    # a Python bool picks the branch when the graph is built: no cond op
    chosen = contrib.framework.smart_cond(True, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    assert not [op for op in tf1_graph.get_operations() if op.type in ("If", "StatelessIf", "Switch")]
    with tf.compat.v1.Session() as session:
        ours_value, tensorflows_value, chosen_value = session.run([ours, tensorflows, chosen])
    np.testing.assert_array_equal(ours_value, tensorflows_value)
    assert chosen_value == 1.0
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.signal\.no_such_function is not provided"):
        contrib.signal.no_such_function
