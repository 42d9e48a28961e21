"""Dumps that cannot do what was asked say so: a dump_layer naming no op of the graph, a file the disk refuses."""
import os
import resource
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.errors import NpuConfigWarning

from .conftest import npu_config, step_dirs

v1 = tf.compat.v1


def test_dump_layer_naming_an_op_the_graph_lacks_is_warned_once(graph, tmp_path):
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    y = tf.matmul(x, x, name="scope/y")
    config = npu_config(enable_dump=True, dump_path=str(tmp_path), dump_layer="scope/y scope/missing")
    with v1.Session(config=config) as sess, pytest.warns(NpuConfigWarning) as record:
        for _ in range(2):
            sess.run(y, {x: np.ones((2, 2), np.float32)})
    messages = [str(w.message) for w in record if "dump_layer" in str(w.message)]
    assert len(messages) == 1
    assert "dump_layer names 'scope/missing', which the graph does not have: nothing is dumped" in messages[0]
    assert "scope/y" not in messages[0]
    assert len(step_dirs(str(tmp_path))) == 2          # the op that exists is still dumped


SCRIPT = """
    import numpy as np
    import tensorflow as tf
    from npu_bridge.npu_init import *

    x = tf.placeholder(tf.float32, [64, 64], name="x")
    y = tf.matmul(x, x, name="y")
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
    custom_op.parameter_map["enable_dump"].b = True
    custom_op.parameter_map["dump_path"].s = {dump_path!r}.encode()
    with tf.Session(config=config) as sess:
        sess.run(y, {{x: np.ones((64, 64), np.float32)}})
"""


def _small_files_only():
    """The child may write no file larger than 1 KiB (as on a full disk, a write fails) and is not killed for it."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


def test_a_dump_the_disk_refuses_names_the_file_and_dump_path(tmp_path):
    dump_path = tmp_path / "dump"
    dump_path.mkdir()
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT.format(dump_path=str(dump_path))))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-m", "npu_bridge", str(script)], capture_output=True, text=True,
                          env=env, timeout=240, preexec_fn=_small_files_only)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("npu_bridge.debug.dump.DumpWriteError: enable_dump: cannot write the dump of step 0 to "
                           f"'{dump_path}"), done.stderr[-2000:]
    assert f"(dump_path '{dump_path}'): File too large" in last
