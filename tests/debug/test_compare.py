"""npu-debug compare's core, in process: real graphs with planted float16 problems, compared with float32."""
import csv

import numpy as np
import pytest
import tensorflow as tf

import npu_bridge
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.debug import compare_step, comparing, metrics
from npu_bridge.debug.commands import parse_steps
from npu_bridge.debug.compare import COLUMNS
from npu_test_support import npu_config

npu_bridge.activate()
MIXED = dict(precision_mode="allow_mix_precision")


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_metrics_follow_msaccucmp_formulas():
    golden = np.array([1.0, -2.0, 0.0, 4.0])
    mine = np.array([1.1, -2.0, 0.5, 4.0])
    scores = metrics.compare_arrays(mine, golden)
    assert scores["MaxAbsoluteError"] == pytest.approx(0.5)
    assert scores["MaxRelativeError"] == pytest.approx(0.1)           # the zero golden element counts as 0
    assert scores["AccumulatedRelativeError"] == pytest.approx(0.1)
    assert scores["MeanRelativeError"] == pytest.approx(0.1 / 4)
    assert scores["RelativeEuclideanDistance"] == pytest.approx(np.sqrt(0.26 / 21))
    assert scores["RootMeanSquareError"] == pytest.approx(np.sqrt(0.26 / 4))
    assert scores["CosineSimilarity"] == pytest.approx(mine @ golden / np.linalg.norm(mine) / np.linalg.norm(golden))
    assert scores["KullbackLeiblerDivergence"] > 0
    assert metrics.compare_arrays(golden, golden)["KullbackLeiblerDivergence"] == pytest.approx(0)
    # msaccucmp's KL is KL(my || golden) of min-max scaled values floored at float32's epsilon
    p = np.maximum((mine - mine.min()) / np.ptp(mine), np.finfo(np.float32).eps)
    q = np.maximum((golden - golden.min()) / np.ptp(golden), np.finfo(np.float32).eps)
    p, q = p / p.sum(), q / q.sum()
    assert scores["KullbackLeiblerDivergence"] == pytest.approx(np.sum(p * np.log(p / q)))
    assert metrics.compare_arrays(np.array(-3.0), np.array(2.0))["CosineSimilarity"] == 1.0   # a scalar, as there
    assert np.isnan(metrics.compare_arrays(np.array([np.inf, 1.0]), golden[:2])["CosineSimilarity"])
    assert metrics.local_error(np.array([np.inf]), np.array([1.0])) == float("inf")


def _regression(scale=1.0, epsilon=False):
    rng = np.random.RandomState(0)
    x = tf.compat.v1.placeholder(tf.float32, [8, 8], name="x")
    w1 = tf.compat.v1.get_variable("w1", initializer=rng.randn(8, 16).astype(np.float32) * scale)
    hidden = tf.nn.relu(tf.multiply(tf.matmul(x, w1, name="big_matmul"), 1.0 / scale, name="rescale"))
    if epsilon:
        hidden = tf.math.truediv(hidden, tf.sqrt(tf.square(hidden) + 1e-8), name="normalized")
    w2 = tf.compat.v1.get_variable("w2", initializer=rng.randn(16, 1).astype(np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2, name="head") - 1.0), name="loss")
    return x, loss, rng.randn(8, 8).astype(np.float32)


def test_overflowing_white_matmul_before_a_gray_op_is_named_with_its_line(graph):
    x, loss, data = _regression(scale=30000.0)
    train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        (value, _), comparison = compare_step(sess, [loss, train], {x: data})
    culprit = comparison.culprit
    assert culprit["NPUDump"] == "big_matmul" and culprit["LocalOverFlow"] == "YES"
    assert culprit["DataType_npu"] == "DT_FLOAT16"
    assert 'tf.matmul(x, w1, name="big_matmul")' in culprit["SourceLine"]
    assert "big_matmul (MatMul, DT_FLOAT16) overflows from finite float32 inputs" in comparison.summary()
    rescale = next(row for row in comparison.rows if row["NPUDump"] == "rescale")
    # the gray Mul follows the MatMul into float16 and inherits its saturated 65504s: far off, though finite
    assert rescale["DataType_npu"] == "DT_FLOAT16" and rescale["RelativeEuclideanDistance"] > 0.1


def test_epsilon_lost_in_float16_is_traced_to_the_division(graph):
    x, loss, data = _regression(epsilon=True)
    with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        data[:, :] = 0.0                       # every Relu output 0: 0 / sqrt(0 + 1e-8) is 0 in float32 only
        value, comparison = compare_step(sess, loss, {x: data})
    assert np.isnan(value)
    culprit = comparison.culprit
    # The Add reads its constant 1e-8 rounded to 0 and returns 0 instead of 1e-8 (local error 1); the Sqrt then
    # returns 0 and the division makes 0/0.
    assert culprit["NPUDump"] == "add" and culprit["LocalRelativeError"] == pytest.approx(1.0)
    assert "1e-8" in culprit["SourceLine"]
    assert next(row for row in comparison.rows if row["NPUDump"] == "normalized")["overflow_origin"]


def test_loss_scale_overflow_names_the_first_scaled_gradient(graph):
    from npu_bridge.estimator.npu.npu_loss_scale_manager import FixedLossScaleManager
    from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
    x, loss, data = _regression()
    opt = NPULossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.01),
                                FixedLossScaleManager(loss_scale=2 ** 24))
    train = opt.minimize(loss)
    with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        before = sess.run("w1:0")
        _, comparison = compare_step(sess, train, {x: data})
        assert np.array_equal(sess.run("w1:0"), before), "the overflowing step is skipped"
    culprit = comparison.culprit
    assert culprit["NPUDump"].startswith("gradients/") and culprit["LocalOverFlow"] == "YES"
    assert "opt.minimize(loss)" in culprit["SourceLine"]


def test_local_error_is_the_reduced_op_fed_rounded_float32_inputs(graph):
    rng = np.random.RandomState(1)
    x = tf.compat.v1.placeholder(tf.float32, [4, 8], name="x")
    w = tf.compat.v1.get_variable("w", initializer=rng.randn(8, 3).astype(np.float32))
    product = tf.matmul(tf.exp(x, name="exp"), w, name="product")     # Exp is black: a float32 input
    data = rng.randn(4, 8).astype(np.float32)
    with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        _, comparison = compare_step(sess, product, {x: data})
        weights = sess.run(w)
    row = next(row for row in comparison.rows if row["NPUDump"] == "product")
    truth = np.exp(data.astype(np.float64)) @ weights.astype(np.float64)
    rounded = (np.exp(data).astype(np.float16).astype(np.float64) @ weights.astype(np.float16).astype(np.float64))
    expected = np.max(np.abs(rounded.astype(np.float32).astype(np.float16).astype(np.float64) - truth))
    assert row["LocalMaxAbsoluteError"] == pytest.approx(expected, rel=1e-2, abs=1e-3)
    assert row["LocalRelativeError"] < metrics.LOCAL_THRESHOLDS["float16"]
    assert comparison.culprit is None


def test_a_compared_training_step_updates_variables_once(graph):
    x, loss, data = _regression()
    train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    results = []
    for compared in (True, False):
        with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            if compared:
                compare_step(sess, train, {x: data})
            else:
                sess.run(train, {x: data})
            results.append(sess.run("w1:0"))
    np.testing.assert_array_equal(results[0], results[1])


def test_comparing_block_writes_csv_in_msaccucmp_columns(graph, tmp_path):
    x, loss, data = _regression()
    train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        with comparing({1}) as seen:
            for _ in range(3):
                sess.run([train, loss], {x: data})
    assert [c.step for c in seen.comparisons] == [1]
    path = seen.comparisons[0].write_csv(tmp_path / "step1.csv")
    with open(path) as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS
    # The header msaccucmp 26.2.0's `compare` wrote for a dump of the emulation against a float32 dump.
    msaccucmp = ("Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,Address,TensorIndex,Shape,"
                 "CosineSimilarity,MaxAbsoluteError,AccumulatedRelativeError,RelativeEuclideanDistance,"
                 "KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,RootMeanSquareError,"
                 "MaxRelativeError,MeanRelativeError,CompareFailReason").split(",")
    assert rows[0][:len(msaccucmp)] == msaccucmp and rows[0][len(msaccucmp)] == "OverFlow"
    by_name = {row[2]: row for row in rows[1:]}
    assert by_name["big_matmul"][3] == "float16" and by_name["big_matmul"][6] == "float32"
    assert by_name["big_matmul"][9] == "[8,16]"
    assert float(by_name["big_matmul"][10]) > 0.999           # cosine similarity of a healthy step


def test_compare_step_refuses_a_run_without_reduced_ops(graph):
    x, loss, data = _regression()
    with tf.compat.v1.Session(config=npu_config(precision_mode="must_keep_origin_dtype")) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        with pytest.raises(ValueError, match="no op that the emulated NPU computes in a reduced dtype"):
            compare_step(sess, loss, {x: data})


def test_step_lists_use_the_adapters_format_and_message():
    assert parse_steps("0|5|10-12") == {0, 5, 10, 11, 12}
    with pytest.raises(NpuConfigError, match="dump_step string style is error"):
        parse_steps("0,5")
    with pytest.raises(NpuConfigError, match="the first step is >= second step"):
        parse_steps("7-3")


def test_batched_local_runs_equal_one_run_per_op(graph):
    from npu_bridge.debug.compare import LocalRunner
    from npu_bridge.debug.stepgraph import StepGraph
    from npu_bridge.runtime import observers

    x, loss, data = _regression()
    train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    seen = {}

    class Keep(observers.RunObserver):
        def before_step(self, emulation, plan, step):
            seen.update(emulation=emulation, plan=plan)
            return ()

    observer = Keep()
    observers.add_observer(observer)
    try:
        with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            _, comparison = compare_step(sess, [train, loss], {x: data})
            emulation, plan = seen["emulation"], seen["plan"]
            step_graph = StepGraph(emulation, plan)
            batched = LocalRunner(emulation, step_graph)
            assert 1 < len(batched.batches) < len(step_graph.local_ops) / 2, "few runs measure many ops"
            shapes = {name: graph.get_tensor_by_name(name).shape.as_list()
                      for name in [*step_graph.inner, "x:0", "w1/read:0", "w2/read:0",
                                   *(t.name for t in step_graph.constants)]}
            truth = {name: np.asarray(np.random.RandomState(len(name)).randn(*shape), np.float32)
                     for name, shape in shapes.items()}
            together = batched.measure(truth)
            alone = LocalRunner(emulation, step_graph)
            alone.batches = [[op] for op in step_graph.local_ops]
            separate = alone.measure(truth)
    finally:
        observers.remove_observer(observer)
    assert together.keys() == separate.keys() and together
    for name, (values, reason) in together.items():
        assert reason == "" and separate[name][1] == ""
        for a, b in zip(values, separate[name][0]):
            np.testing.assert_array_equal(a, b)


def test_plot_of_errors_by_execution_order(graph, tmp_path):
    pytest.importorskip("matplotlib")
    x, loss, data = _regression(scale=30000.0)
    with tf.compat.v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        _, comparison = compare_step(sess, loss, {x: data})
    path = comparison.plot(str(tmp_path / "step.png"))
    assert path and (tmp_path / "step.png").stat().st_size > 1000
