"""Overflow detection (enable_dump_debug): the first op that overflowed, its type, dtype and the user's line."""
import json
import logging
import os

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.debug.convert import convert
from npu_bridge.estimator.npu.npu_loss_scale_manager import FixedLossScaleManager
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer

from .conftest import npu_config, read_folder, step_dirs

v1 = tf.compat.v1
HERE = os.path.basename(__file__)


def overflow_warnings(caplog):
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "overflow detection" in r.getMessage()]


def line_of(text):
    """The line number of this file's first line containing `text`."""
    with open(__file__) as f:
        return next(number for number, line in enumerate(f, 1) if text in line)


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend910B3"])     # saturation mode, INF/NaN mode
def test_a_gray_op_after_a_white_matmul_overflows_in_float16(graph, tmp_path, caplog, soc):
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    y = tf.matmul(x, x, name="y")                  # white: float16, values up to 2 * 200**2 = 80000 do not fit...
    z = tf.square(y * 0.01, name="z")              # ...so scale first: the gray Square follows float16 and overflows
    loss = tf.reduce_sum(z, name="loss")           # black: float32, reads Inf (inherited, not its own overflow)
    config = npu_config(enable_dump_debug=True, dump_path=str(tmp_path), dump_debug_mode="aicore_overflow",
                        soc_config=soc)
    with caplog.at_level(logging.WARNING, logger="tensorflow"), v1.Session(config=config) as sess:
        small = sess.run(loss, {x: np.full((2, 2), 1.0, np.float32)})
        big = sess.run(loss, {x: np.full((2, 2), 120.0, np.float32)})
        detector = sess._npu_emulation.observers[0]
    assert np.isfinite(small) and (np.isinf(big) if soc == "Ascend910B3" else big == 4 * 65504)
    (warning,) = overflow_warnings(caplog)
    assert warning.startswith("npu_bridge overflow detection: step 1 of ge_default_")
    z_line = line_of('name="z")')
    assert "first overflow in op 'z' (Square, float16); records in " in warning
    assert warning.endswith(f"; created at {__file__}:{z_line}: z = tf.square(y * 0.01, name=\"z\")"
                            "              # ...so scale first: the gray Square follows float16 and overflows")
    (_, step, found), = detector.steps
    assert step == 1 and [f["op_name"] for f in found] == ["z"]
    ((_, _, dumped_step), folder), = step_dirs(str(tmp_path)).items()
    assert dumped_step == 1
    with open(os.path.join(folder, "overflow_summary.json")) as f:
        summary = json.load(f)
    assert [(o["op_name"], o["op_type"], o["ir_type"], o["dtype"]) for o in summary["overflows"]] == \
        [("z", "Square", "Square", "float16")]
    assert set(read_folder(folder)) == {"z", "Node_OpDebug"}
    converted = convert(folder, str(tmp_path / "npy"))
    (opdebug,) = [p for p in converted.written if p.endswith(".json")]
    with open(opdebug) as f:
        record = json.load(f)
    assert record["AI Core"]["status"] == 0x20 and record["AI Core"]["task_id"] == summary["overflows"][0]["task_id"]
    assert set(record) == {"AI Core", "DHA Atomic Add", "L2 Atomic Add"}


def test_no_overflow_writes_nothing_and_warns_nothing(graph, tmp_path, caplog):
    x = v1.placeholder(tf.float32, [2], name="x")
    loss = tf.reduce_sum(tf.exp(x))
    with caplog.at_level(logging.WARNING, logger="tensorflow"), \
            v1.Session(config=npu_config(enable_dump_debug=True, dump_path=str(tmp_path))) as sess:
        for _ in range(3):
            sess.run(loss, {x: [0.0, 1.0]})
    assert overflow_warnings(caplog) == [] and step_dirs(str(tmp_path)) == {}


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend910B3"])
def test_a_step_skipped_by_loss_scaling_is_explained(graph, tmp_path, caplog, soc):
    rng = np.random.RandomState(0)
    features = v1.placeholder(tf.float32, [8, 4], name="features")
    w = v1.get_variable("w", initializer=rng.randn(4, 1).astype(np.float32))
    prediction = tf.matmul(features, w, name="prediction")
    loss = tf.reduce_mean(tf.square(prediction - 1.0), name="loss")
    scale = v1.placeholder(tf.float32, [], name="scale")
    manager = FixedLossScaleManager(loss_scale=1.0)
    manager.get_loss_scale = lambda: scale       # the scale per step, fed: one ordinary step, then a huge one
    train = NPULossScaleOptimizer(v1.train.GradientDescentOptimizer(0.01), manager).minimize(loss)
    config = npu_config(enable_dump_debug=True, dump_path=str(tmp_path), soc_config=soc)
    batch = rng.randn(8, 4).astype(np.float32)
    with caplog.at_level(logging.WARNING, logger="tensorflow"), v1.Session(config=config) as sess:
        sess.run(v1.global_variables_initializer())
        start = sess.run(w)
        sess.run(train, {features: batch, scale: 128.0})
        trained = sess.run(w)
        sess.run(train, {features: batch, scale: 2.0 ** 24})
        skipped = sess.run(w)
    assert not np.array_equal(start, trained)
    np.testing.assert_array_equal(trained, skipped)          # the NPU skipped the update: gradients overflowed
    (warning,) = overflow_warnings(caplog)
    assert "step 1 of" in warning and "float16" in warning
    # The culprit is in the scaled backward pass, and the line named is this test's (minimize), not a library's.
    assert f"{__file__}:{line_of('.minimize(loss)')}" in warning
