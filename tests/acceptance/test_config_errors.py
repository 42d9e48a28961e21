"""Bad configuration through every entry point: one NpuConfigError naming the key and value, raised where the
user configured the session, with none of the package's internal frames in the traceback."""
import os
import subprocess
import sys
import textwrap
import traceback

import pytest
import tensorflow as tf

import npu_bridge
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.npu_init import init_resource, npu_config_proto, set_keras_session_npu_config

from .conftest import ported_config

PACKAGE_DIR = os.path.dirname(os.path.abspath(npu_bridge.__file__))
CORE_DIR = os.path.join(PACKAGE_DIR, "core")


def _package_frames(error):
    """The package frames of `error`'s traceback below the patched TensorFlow entry point."""
    return [frame.filename for frame in traceback.extract_tb(error.__traceback__)
            if frame.filename.startswith(CORE_DIR)]


BAD_CONFIGS = {
    "precision_mode": (dict(precision_mode="allow_mix_precison"), r"precision_mode value 'allow_mix_precison'"),
    "soc_config": (dict(soc_config="Ascend999"), r"soc_config value 'Ascend999'"),
    "modify_mixlist": (dict(modify_mixlist="/nonexistent/mixlist.json"), r"modify_mixlist.*/nonexistent/mixlist.json"),
}


@pytest.mark.parametrize("key", sorted(BAD_CONFIGS))
def test_session_creation_raises_one_clear_error(graph, key):
    parameters, message = BAD_CONFIGS[key]
    parameters = dict(parameters)
    tf.compat.v1.placeholder(tf.float32, [1], name="x")
    with pytest.raises(NpuConfigError, match=message) as caught:
        tf.compat.v1.Session(config=ported_config(parameters.pop("precision_mode", "allow_mix_precision"),
                                                  **parameters))
    assert not _package_frames(caught.value)


def test_malformed_customize_dtypes_file_fails_at_session_creation_naming_file_and_line(graph, tmp_path):
    path = tmp_path / "dtypes.cfg"
    path.write_text("dense/MatMul::InputDtype:float16,float16,OutputDtype:float32\nconv1 float16\n")
    with pytest.raises(NpuConfigError, match=r"dtypes.cfg.*line 2|line 2.*dtypes.cfg") as caught:
        tf.compat.v1.Session(config=ported_config(customize_dtypes=str(path)))
    assert not _package_frames(caught.value)


def test_errors_through_npu_init_helpers_and_monitored_sessions(graph):
    tf.compat.v1.train.get_or_create_global_step()
    bad = npu_config_proto()
    bad.graph_options.rewrite_options.custom_optimizers[0].parameter_map["precision_mode_v2"].s = b"mixed_fp16"
    for open_session in (lambda: tf.compat.v1.Session(config=npu_config_proto(bad)),
                         lambda: init_resource(bad),
                         lambda: set_keras_session_npu_config(bad),
                         lambda: tf.compat.v1.train.MonitoredTrainingSession(config=bad)):
        with pytest.raises(NpuConfigError, match=r"precision_mode_v2 value 'mixed_fp16'"):
            open_session()


@pytest.mark.parametrize("arguments, message", [
    (dict(precision_mode="allow_mix_precison"), r"precision_mode value 'allow_mix_precison'"),
    (dict(precision_mode="allow_mix_precision", modify_mixlist="/nonexistent/mixlist.json"),
     r"modify_mixlist.*/nonexistent/mixlist.json"),
    (dict(iterations_per_loop=0), r"iterations_per_loop must be a positive integer, got 0"),
])
def test_npu_run_config_raises_when_constructed(tmp_path, arguments, message):
    from npu_bridge.npu_init import NPURunConfig

    with pytest.raises((NpuConfigError, ValueError), match=message) as caught:
        NPURunConfig(model_dir=str(tmp_path), **arguments)
    assert not _package_frames(caught.value)


def _launch(tmp_path, source):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-m", "npu_bridge", str(script)], env=env, capture_output=True,
                          text=True, timeout=300)


def test_launcher_reports_a_bad_config_with_the_scripts_line_and_the_message(tmp_path):
    result = _launch(tmp_path, """
        import tensorflow as tf
        from npu_bridge.npu_init import *
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precison")
        x = tf.placeholder(tf.float32, [1])
        with tf.Session(config=config) as sess:
            sess.run(x, {x: [1.0]})
    """)
    assert result.returncode == 1
    stderr = result.stderr
    assert stderr.strip().splitlines()[-1].startswith("npu_bridge.core.errors.NpuConfigError: NpuOptimizer: option "
                                                     "precision_mode value 'allow_mix_precison' is invalid")
    assert "Did you mean 'allow_mix_precision'" in stderr
    assert f'File "{tmp_path / "train.py"}", line 9' in stderr
    assert CORE_DIR not in stderr


def test_launcher_on_a_missing_script_names_it_and_exits_2(tmp_path):
    missing = tmp_path / "no_such_script.py"
    result = subprocess.run([sys.executable, "-m", "npu_bridge", str(missing)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"npu-run: can't open file {str(missing)!r}: [Errno 2] No such file or directory")
    assert "Traceback" not in result.stderr
