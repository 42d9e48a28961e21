"""Overflow records stay bounded (the first ops of a step get dump files, the summary lists all), and a Cast the
pass inserted is named by the user op it feeds."""
import json
import logging
import os

import numpy as np
import tensorflow as tf

from npu_bridge.debug.detector import DUMPS_ENV

from .conftest import npu_config, read_folder, step_dirs

v1 = tf.compat.v1


def _overflow_six_ops(tmp_path):
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    branches = [tf.square(tf.matmul(x, x) * 0.01, name=f"square_{k}") for k in range(6)]   # six overflow each
    total = tf.add_n([tf.reduce_sum(b) for b in branches], name="total")
    config = npu_config(enable_dump_debug=True, dump_path=str(tmp_path), soc_config="Ascend910B3")
    with v1.Session(config=config) as sess:
        sess.run(total, {x: np.full((2, 2), 120.0, np.float32)})
    ((_, _, step), folder), = step_dirs(str(tmp_path)).items()
    with open(os.path.join(folder, "overflow_summary.json")) as f:
        return folder, json.load(f)


def test_a_step_dumps_its_first_three_overflowing_ops_and_lists_all(graph, tmp_path, monkeypatch):
    monkeypatch.delenv(DUMPS_ENV, raising=False)
    folder, summary = _overflow_six_ops(tmp_path)
    assert summary["overflowing_ops"] == 6 and summary["dumped_ops"] == 3
    assert [o["op_name"] for o in summary["overflows"]] == [f"square_{k}" for k in range(6)]
    assert set(read_folder(folder)) == {"square_0", "square_1", "square_2", "Node_OpDebug"}


def test_every_overflowing_op_is_dumped_on_request(graph, tmp_path, monkeypatch):
    monkeypatch.setenv(DUMPS_ENV, "all")
    folder, summary = _overflow_six_ops(tmp_path)
    assert summary["dumped_ops"] == 6
    assert set(read_folder(folder)) == {f"square_{k}" for k in range(6)} | {"Node_OpDebug"}


def test_an_overflowing_inserted_cast_is_named_by_the_op_it_feeds(graph, tmp_path, caplog):
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    product = tf.matmul(x, x, name="product")       # white: x is cast to float16 first, and 1e5 does not fit
    config = npu_config(enable_dump_debug=True, dump_path=str(tmp_path), soc_config="Ascend910B3")
    with caplog.at_level(logging.WARNING, logger="tensorflow"), v1.Session(config=config) as sess:
        sess.run(product, {x: np.full((2, 2), 1e5, np.float32)})
    (warning,) = [r.getMessage() for r in caplog.records if "overflow detection" in r.getMessage()]
    assert "first overflow in the Cast the NPU inserts before 'product' (Cast, float16)" in warning
    assert warning.endswith('product = tf.matmul(x, x, name="product")       # white: x is cast to float16 '
                            "first, and 1e5 does not fit")
