"""Keras 2 module paths as ported scripts import them (`keras.utils.np_utils`, `keras.engine.topology`,
`tensorflow.python.keras.*`), resolved to the v1 Keras 2 API of tf_keras: the resolver itself, and scripts written
the way ModelZoo ports are, run and trained through npu-run."""
import gzip
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from npu_bridge.tf1compat import keras_paths, overlay

KERAS_V1 = "tf_keras.api._v1.keras"


@pytest.fixture(scope="module")
def keras():
    from tf_keras.api._v1 import keras

    return keras


@pytest.mark.parametrize("name, path", [
    ("keras", ""), ("keras.utils.np_utils", "utils.np_utils"), ("tensorflow.python.keras", ""),
    ("tensorflow.python.keras.layers.core", "layers.core"), ("tensorflow.python.keras._impl.keras.models", "models"),
    ("tensorflow_core.python.keras.layers", "layers"), ("tensorflow.keras", None), ("keras_bert", None),
    ("tensorflow.python.ops", None),
])
def test_keras_2_spellings_are_recognised(name, path):
    assert keras_paths.keras2_path(name) == path


def test_internal_module_paths_find_their_names_where_tf_keras_keeps_them(keras):
    np_utils = keras_paths.keras2_module(KERAS_V1, "utils.np_utils")
    np.testing.assert_array_equal(np_utils.to_categorical([0, 2], 3), [[1, 0, 0], [0, 0, 1]])
    core = keras_paths.keras2_module(KERAS_V1, "layers.core")
    assert core.Dense is keras.layers.Dense and core.Flatten is keras.layers.Flatten
    assert keras_paths.keras2_module(KERAS_V1, "layers.advanced_activations").LeakyReLU is keras.layers.LeakyReLU
    assert keras_paths.keras2_module(KERAS_V1, "layers.normalization").BatchNormalization is \
        keras.layers.BatchNormalization        # the v1 class, as TF 1.15 graph-mode scripts had it
    topology = keras_paths.keras2_module(KERAS_V1, "engine.topology")
    assert topology.Layer is keras.layers.Layer and topology.InputSpec is keras.layers.InputSpec
    assert issubclass(keras.Sequential, topology.Network)     # Sequential is a Functional, TF 1.15's Network
    backend = keras_paths.keras2_module(KERAS_V1, "backend.tensorflow_backend")
    assert backend.set_session is keras.backend.set_session
    assert keras_paths.keras2_module(KERAS_V1, "").__version__.startswith("2.")
    assert keras_paths.keras2_module(KERAS_V1, "utils").np_utils.to_categorical is np_utils.to_categorical


def test_tensorflow_python_keras_backend_is_the_implementation_module(keras):
    """TF 1.15's tensorflow.python.keras.backend had get_graph, which the public v1 backend lacks: the path, and the
    package's `backend` attribute, are the Keras2Module (public names first, then tf_keras's implementation)."""
    assert not hasattr(keras.backend, "get_graph")
    assert keras_paths.needs_keras2_module("backend", None) and keras_paths.needs_keras2_module("", ("backend",))
    assert not keras_paths.needs_keras2_module("", ("layers",))
    backend = keras_paths.keras2_module(KERAS_V1, "").backend
    assert backend is keras_paths.keras2_module(KERAS_V1, "backend")
    assert backend.set_session is keras.backend.set_session
    import tensorflow as tf

    with tf.Graph().as_default() as graph:
        assert backend.get_graph() is graph


def test_removed_names_import_and_say_why_when_called():
    multi_gpu_model = keras_paths.keras2_module(KERAS_V1, "utils").multi_gpu_model
    with pytest.raises(NotImplementedError, match="multi_gpu_model was removed in TensorFlow 2.4.*MirroredStrategy"):
        multi_gpu_model(None, gpus=2)
    with pytest.raises(NotImplementedError, match="Keras 1's merge.*concatenate"):
        keras_paths.keras2_module(KERAS_V1, "layers").merge([])


def test_unknown_paths_and_names_are_clear_errors():
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'keras\.no_such': .*tf_keras\.src\.no_such"):
        keras_paths.keras2_module(KERAS_V1, "no_such")
    with pytest.raises(AttributeError, match=r"keras\.layers\.core has no 'NoSuchLayer'"):
        _ = keras_paths.keras2_module(KERAS_V1, "layers.core").NoSuchLayer


def test_bind_overlays_only_what_differs():
    import types

    top, middle = types.ModuleType("top"), types.ModuleType("top.middle")
    top.middle, top.other, middle.sibling = middle, object(), object()
    leaf = object()
    bound = overlay.bind(top, ["middle", "leaf"], leaf)
    assert bound.middle.leaf is leaf and bound.other is top.other and bound.middle.sibling is middle.sibling
    assert not hasattr(middle, "leaf")                   # the real modules are left as they are
    assert overlay.bind(top, ["middle"], middle) is top


def _npu_run(tmp_path, source, *args):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "npu_bridge", str(script), *args], cwd=str(tmp_path),
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True,
                          timeout=300, check=False)


KERAS2_SCRIPT = """
    import numpy as np
    import keras
    import keras.backend as K
    import keras.backend.tensorflow_backend as KTF
    import tensorflow.python.keras as tf_python_keras
    import tensorflow.python.keras.backend as tf_python_backend_module
    from tensorflow.python.keras import backend as tf_python_backend
    from keras.layers.advanced_activations import LeakyReLU
    from keras.layers.core import Activation, Dense
    from keras.models import Sequential
    from keras.optimizers import SGD
    from keras.utils import np_utils
    from tensorflow.python.keras.engine import network
    from npu_bridge.npu_init import *
    from npu_bridge.runtime import last_report

    sess = set_keras_session_npu_config()
    rng = np.random.RandomState(0)
    x = rng.normal(size=(256, 4)).astype(np.float32)
    y = np_utils.to_categorical((x[:, 0] + x[:, 1] > 0).astype(int), 2)
    model = Sequential()
    model.add(Dense(16, input_shape=(4,)))
    model.add(LeakyReLU(0.1))
    model.add(Dense(2))
    model.add(Activation("softmax"))
    model.compile(optimizer=SGD(lr=0.5), loss="categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=20, batch_size=32, verbose=0)
    print("loss", history.history["loss"][0], history.history["loss"][-1])
    print("accuracy", model.evaluate(x, y, verbose=0)[1])
    print("npu_session", K.get_session() is sess and KTF.get_session() is sess)
    print("one_keras", tf_python_keras.Model is keras.Model and isinstance(model, network.Network))
    print("implementation_backend", tf_python_backend.get_graph() is model.outputs[0].graph and
          tf_python_backend_module.get_graph is tf_python_backend.get_graph and
          tf_python_backend.get_session is K.get_session)
    print("report", last_report(sess).summary())
"""


def test_a_keras_2_path_script_trains_on_the_npu_session(tmp_path):
    result = _npu_run(tmp_path, KERAS2_SCRIPT)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    first_loss, last_loss = map(float, lines["loss"].split())
    assert last_loss < first_loss / 2 and float(lines["accuracy"]) > 0.9
    assert lines["npu_session"] == "True" and lines["one_keras"] == "True"
    assert lines["implementation_backend"] == "True"       # TF 1.15's backend module: get_graph, with the public names
    assert lines["report"].startswith("NpuOptimizer allow_fp32_to_fp16 (default):")


MNIST_SCRIPT = """
    import sys
    import tensorflow as tf
    from tensorflow.examples.tutorials.mnist import input_data
    from tensorflow.python.framework import graph_util
    from tensorflow.contrib.layers.python.layers import layers as contrib_layers_impl
    from npu_bridge.npu_init import *

    print("contrib_layers", contrib_layers_impl.__name__)

    mnist = input_data.read_data_sets(sys.argv[1], one_hot=True, validation_size=10)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    labels = tf.placeholder(tf.float32, [None, 10])
    weights = tf.Variable(tf.zeros([4, 10]))
    logits = tf.add(tf.matmul(x, weights), tf.Variable(tf.zeros([10])), name="logits")
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session(config=npu_config_proto()) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(60):
            images, batch_labels = mnist.train.next_batch(10)
            _, value = sess.run([train, loss], {x: images, labels: batch_labels})
            if step == 0:
                print("first", value)
        print("last", value)
        print("epochs", mnist.train.epochs_completed)
        frozen = graph_util.convert_variables_to_constants(sess, sess.graph_def, ["logits"])
        print("frozen", sum(node.op == "VariableV2" for node in frozen.node))
"""


def _write_mnist(folder, count, rows=2, cols=2):
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 10, count).astype(np.uint8)
    images = (labels[:, None] * 25 + rng.randint(0, 5, (count, rows * cols))).astype(np.uint8)
    for prefix, part in (("train", slice(0, count - 10)), ("t10k", slice(count - 10, count))):
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as stream:
            stream.write(struct.pack(">IIII", 2051, len(labels[part]), rows, cols) + images[part].tobytes())
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as stream:
            stream.write(struct.pack(">II", 2049, len(labels[part])) + labels[part].tobytes())


def test_an_mnist_tutorial_script_trains_and_freezes_under_npu_run(tmp_path):
    data = tmp_path / "MNIST_data"
    data.mkdir()
    _write_mnist(data, 110)
    result = _npu_run(tmp_path, MNIST_SCRIPT, str(data))
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert float(lines["last"]) < float(lines["first"])
    assert lines["epochs"] == "6" and lines["frozen"] == "0"
    assert lines["contrib_layers"] == "tf_slim.layers.layers"     # a deep contrib path, imported by name
