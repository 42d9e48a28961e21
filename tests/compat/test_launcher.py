"""npu-run / python -m npu_bridge: unmodified TF1 scripts run as with `python script.py`."""
import os
import subprocess
import sys
import textwrap

import pytest


def _run(tmp_path, source, *args, name="script.py"):
    script = tmp_path / name
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, "-m", "npu_bridge", str(script), *args], cwd=str(tmp_path.parent),
                          env=env, capture_output=True, text=True, timeout=300)


TF1_SCRIPT = """
    import sys
    import tensorflow as tf
    from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
    from tensorflow.python.ops import math_ops
    from tensorflow.keras import backend as K
    from tensorflow.keras.layers import Dense
    import tensorflow.compat.v1 as tfv1
    import helper_module

    assert __name__ == "__main__"
    print("argv", sys.argv[1:])
    print("path0", sys.path[0])
    print("is_v1_api", tf.Session is tfv1.Session and not tf.executing_eagerly())
    print("real_package_for_libraries", sys.modules["tensorflow"] is not tf)
    print("helper_sees_v1", helper_module.tf is tf)
    print("keras_v1_backend", hasattr(K, "get_session") and Dense is tf.keras.layers.Dense)
    print("math_ops", math_ops.add is not None)

    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 2)
    cell = tf.nn.rnn_cell.LSTMCell(4)
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        print("shape", sess.run(y, {x: [[1.0, 2.0, 3.0]]}).shape)
    sys.exit(int(sys.argv[1]))
"""


def test_tf1_script_runs_with_python_semantics(tmp_path):
    (tmp_path / "helper_module.py").write_text("import tensorflow as tf\n")
    result = _run(tmp_path, TF1_SCRIPT, "7", "--flag")
    assert result.returncode == 7, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["argv"] == "['7', '--flag']"
    assert lines["path0"] == str(tmp_path.resolve())
    for check in ("is_v1_api", "real_package_for_libraries", "helper_sees_v1", "keras_v1_backend", "math_ops"):
        assert lines[check] == "True", check
    assert lines["shape"] == "(1, 2)"


KERAS_SCRIPT = """
    import numpy as np
    import tensorflow as tf
    import keras
    import keras.backend as K
    from keras.layers import Dense
    from keras.models import Sequential
    from npu_bridge.npu_init import *
    from npu_bridge.runtime import last_report

    sess = set_keras_session_npu_config()
    model = Sequential([Dense(8, activation="relu", input_shape=(4,)), Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((16, 4), np.float32), np.zeros((16, 2), np.float32), epochs=2, verbose=0)
    print("same_keras", keras.layers.Dense is tf.keras.layers.Dense)
    print("npu_session", K.get_session() is sess)
    print("report", last_report(sess).summary())
"""


def test_standalone_keras_imports_get_the_v1_keras_2_api(tmp_path):
    """Ported Keras scripts `import keras`; on TF >= 2.16 that is Keras 3, which runs only eagerly. In the user's
    code it is the same v1 Keras 2 API as tf.keras, so the script trains in the emulated session."""
    result = _run(tmp_path, KERAS_SCRIPT)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["same_keras"] == "True" and lines["npu_session"] == "True"
    assert lines["report"].startswith("NpuOptimizer allow_fp32_to_fp16 (default):")


def test_traceback_starts_at_the_script_and_exit_code_is_one(tmp_path):
    result = _run(tmp_path, """
        def fail():
            raise ValueError("broken on purpose")
        fail()
    """)
    assert result.returncode == 1
    traceback_lines = result.stderr[result.stderr.index("Traceback"):].splitlines()
    assert "script.py" in traceback_lines[1] and "line 4" in traceback_lines[1]
    assert "launcher" not in result.stderr[result.stderr.index("Traceback"):]
    assert traceback_lines[-1] == "ValueError: broken on purpose"


def test_syntax_errors_are_reported_like_python(tmp_path):
    result = _run(tmp_path, "x = (\n")
    assert result.returncode == 1
    assert "SyntaxError" in result.stderr and "script.py" in result.stderr


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_TENSORFLOW = "import sys, npu_run; code = npu_run.main(sys.argv[1:]); " \
                "print('tensorflow imported:', 'tensorflow' in sys.modules); sys.exit(code)"


def _fast_launcher(*args):
    """npu-run's console entry (npu_run.main) in a fresh interpreter, reporting whether TensorFlow was imported."""
    return subprocess.run([sys.executable, "-c", NO_TENSORFLOW, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def test_help_version_and_missing_script_answer_without_importing_tensorflow():
    help_run = _fast_launcher("--help")
    assert help_run.returncode == 0 and "tensorflow imported: False" in help_run.stdout
    assert "--strict" in help_run.stdout and "NPU_BRIDGE_STRICT" in help_run.stdout
    version = _fast_launcher("--version")
    assert version.returncode == 0 and version.stdout.startswith("npu-run ")
    missing = _fast_launcher("no_such_script.py")
    assert missing.returncode == 2 and "tensorflow imported: False" in missing.stdout
    assert "npu-run: can't open file 'no_such_script.py'" in missing.stderr


def test_missing_script_and_usage():
    missing = subprocess.run([sys.executable, "-m", "npu_bridge", "no_such_script.py"], capture_output=True,
                             text=True, timeout=120)
    assert missing.returncode == 2
    assert "can't open file 'no_such_script.py'" in missing.stderr
    usage = subprocess.run([sys.executable, "-m", "npu_bridge"], capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "usage: npu-run [options] script.py" in usage.stderr


def test_keyboard_interrupt_traceback_starts_at_the_script(tmp_path):
    result = _run(tmp_path, """
        def wait():
            raise KeyboardInterrupt
        wait()
    """)
    assert result.returncode == 130
    traceback_lines = result.stderr[result.stderr.index("Traceback"):].splitlines()
    assert "script.py" in traceback_lines[1] and "launcher" not in "\n".join(traceback_lines)
    assert traceback_lines[-1] == "KeyboardInterrupt"


def test_npu_run_is_the_console_script_entry_point():
    from importlib import metadata

    entry, = [e for e in metadata.entry_points(group="console_scripts") if e.name == "npu-run"]
    if entry.value == "npu_bridge.launcher:main":
        pytest.skip("editable install older than setup.py: reinstall (pip install -e .) to get the fast entry")
    assert entry.value == "npu_run:main"


SUBMODULE_SCRIPT = """
    import types
    import tensorflow as tf
    from tensorflow.layers import Dense
    from tensorflow.train import AdamOptimizer
    from tensorflow.summary import FileWriter
    import tensorflow.losses
    import tensorflow.summary as summary_module
    import tensorflow.compat.v1 as real_v1

    print("literal_forms", Dense is real_v1.layers.Dense and AdamOptimizer is real_v1.train.AdamOptimizer and
          FileWriter is real_v1.summary.FileWriter and tensorflow is tf and
          tensorflow.losses is real_v1.losses and summary_module is real_v1.summary)
    names = sorted(name for name in dir(real_v1) if not name.startswith("_") and name != "compat"
                   and isinstance(getattr(real_v1, name), types.ModuleType))
    failed = []
    for name in names:
        module = getattr(real_v1, name)
        attribute = next((a for a in sorted(dir(module)) if not a.startswith("_")), None)
        try:
            exec(f"import tensorflow.{name} as routed", globals())
            exec(f"import tensorflow.{name}", globals())
            # v1 hands out lazy-loading wrappers, a new one per access: compare what they hold
            same = tensorflow is tf and (getattr(routed, attribute) is getattr(module, attribute) if attribute
                                         else routed.__name__ == module.__name__)
            if attribute is not None:
                exec(f"from tensorflow.{name} import {attribute} as got", globals())
                same = same and got is getattr(module, attribute)
            if not same:
                failed.append(name)
        except Exception as error:
            failed.append(f"{name}: {type(error).__name__}: {error}")
    print("checked", len(names))
    print("failed", failed)
"""


def test_every_tf1_submodule_import_form_routes_to_tf_compat_v1(tmp_path):
    result = _run(tmp_path, SUBMODULE_SCRIPT)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["literal_forms"] == "True"
    assert int(lines["checked"]) > 50 and lines["failed"] == "[]"
