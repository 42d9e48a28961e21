"""A session reads the environment's core settings once, when it is created (npu_bridge.settings.session_options),
and its lists and rewrites use them for as long as it lives."""

import numpy as np
import tensorflow as tf

from npu_bridge.core.settings import CoreSettings
from npu_bridge.runtime import last_report
from npu_test_support import opp_root_with_add_black

from .conftest import npu_config


def test_a_sessions_library_and_soc_come_from_the_environment_at_its_creation(graph, tmp_path, monkeypatch):
    opp_root = opp_root_with_add_black(tmp_path)
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    added = tf.add(tf.matmul(x, tf.ones([2, 2])), 1.0, name="add")
    monkeypatch.setenv("ASCEND_OPP_PATH", opp_root)
    monkeypatch.setenv("NPU_BRIDGE_STRICT", "0")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        monkeypatch.delenv("ASCEND_OPP_PATH")      # read when the session was created
        sess.run(added, {x: np.ones((2, 2), np.float32)})
        assert sess._npu_emulation.options.settings == CoreSettings(opp_path=opp_root)
        record = last_report(sess).by_name("add")
        assert record.list == "black" and opp_root in record.origin
    monkeypatch.setenv("NPU_BRIDGE_SOC", "Ascend910B1")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(added, {x: np.ones((2, 2), np.float32)})
        assert last_report(sess).soc == "ascend910b"
        assert last_report(sess).by_name("add").list == "gray"
