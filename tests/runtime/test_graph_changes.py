"""The user's graph is only read; sessions follow it as it grows, never losing variable state."""
import logging
import warnings

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.errors import NpuConfigWarning
from npu_bridge.runtime import last_report
from npu_bridge.runtime.program import Program

from npu_test_support import fp16

from .conftest import npu_config


def test_user_graph_is_never_modified(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
    y = tf.matmul(x, tf.constant([[0.3], [0.7]]), name="y")
    before = graph.as_graph_def().SerializeToString(deterministic=True)
    version = graph.version
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(y, {x: np.ones((1, 2))})
        assert sess.graph is graph
        assert sess.graph_def.SerializeToString(deterministic=True) == before
    assert graph.version == version
    assert graph.as_graph_def().SerializeToString(deterministic=True) == before


def test_finalized_graph_runs(graph):
    x = tf.compat.v1.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 3.0, name="y")
    graph.finalize()
    with tf.compat.v1.Session(config=npu_config()) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [3.0, 6.0])


def test_session_created_before_the_graph_is_filled(graph):
    sess = tf.compat.v1.Session(config=npu_config())
    x = tf.compat.v1.placeholder(tf.float32, [1, 2], name="x")
    y = tf.matmul(x, tf.constant([[1 / 3], [1 / 3]]), name="y")
    np.testing.assert_array_equal(sess.run(y, {x: [[1 / 3, 1 / 3]]}),
                                  fp16(fp16([[1 / 3, 1 / 3]]) @ fp16([[1 / 3], [1 / 3]])))
    sess.close()


def test_ops_added_between_runs_keep_variable_state(graph):
    v = tf.compat.v1.get_variable("v", initializer=1.0, use_resource=False)
    r = tf.compat.v1.get_variable("r", initializer=10.0, use_resource=True)
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run([tf.compat.v1.assign_add(v, 1.0), r.assign_add(5.0)])
        program = sess._npu_emulation.program
        doubled = tf.multiply(v, 2.0, name="doubled")
        assert sess.run(doubled) == 4.0
        assert sess.run(r.read_value()) == 15.0
        assert sess._npu_emulation.program is program, "new ops are imported into the running inner session"
        assert "mixed_float16" in last_report(sess).summary()


def test_rebuilt_inner_session_carries_variable_values_over(graph):
    v = tf.compat.v1.get_variable("v", initializer=[1.0, 2.0], use_resource=False)
    r = tf.compat.v1.get_variable("r", initializer=3.0, use_resource=True)
    late = tf.compat.v1.get_variable("late", initializer=0.0, use_resource=False)
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run([v.initializer, r.initializer])
        sess.run([tf.compat.v1.assign(v, [5.0, 6.0]), r.assign(7.0)])
        emulation = sess._npu_emulation
        old = emulation.program
        new = old.replace_with(old.result, old.version, emulation.target, emulation.config)
        emulation.program = new
        assert new.session is not old.session
        np.testing.assert_array_equal(sess.run(v), [5.0, 6.0])
        assert sess.run(r.read_value()) == 7.0
        assert not sess.run(tf.compat.v1.is_variable_initialized(late)), "uninitialized stays uninitialized"


def test_extension_and_fresh_build_compute_the_same(graph):
    x = tf.compat.v1.placeholder(tf.float32, [1, 2], name="x")
    h = tf.matmul(x, tf.constant([[0.1], [0.2]]), name="h")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(h, {x: [[1.0, 2.0]]})
        out = tf.nn.relu(tf.matmul(h, tf.constant([[1 / 3]])), name="out")
        extended = sess.run(out, {x: [[1.0, 2.0]]})
        fresh = Program(sess._npu_emulation.program.result, 0, "", sess._npu_emulation.config)
        fresh.graph     # Session.run resolves names through the Python objects, which a Program makes on demand
        np.testing.assert_array_equal(fresh.session.run("out:0", {"x:0": [[1.0, 2.0]]}), extended)
        fresh.close()


def test_summary_line_is_shown_once_per_graph_and_extensions_are_debug(graph):
    records = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append
    logger = logging.getLogger("npu_bridge")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        x = tf.compat.v1.placeholder(tf.float32, [1, 2], name="x")
        y = tf.matmul(x, tf.constant([[1.0], [2.0]]), name="y")
        with tf.compat.v1.Session(config=npu_config()) as sess:
            for _ in range(3):
                sess.run(y, {x: [[1.0, 1.0]]})
            sess.run(tf.nn.relu(y), {x: [[1.0, 1.0]]})
            summary = last_report(sess).summary()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    lines = [(r.levelno, r.getMessage()) for r in records if "emulated NPU graph" in r.getMessage()]
    assert len(lines) == 2
    assert lines[0][0] == logging.INFO and lines[0][1].startswith(summary.split(":")[0]) and "built" in lines[0][1]
    assert lines[1][0] == logging.DEBUG and lines[1][1].startswith(summary) and "extended" in lines[1][1]


def test_variables_as_fetches_use_the_plan_cache(graph):
    v = tf.compat.v1.get_variable("v", initializer=2.0, use_resource=False)
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(v.initializer)
        assert sess.run(v) == 2.0 and sess.run([v]) == [2.0]
        assert len(sess._npu_emulation.program.plans) == 3


def test_new_op_with_a_control_dependency_on_an_old_op(graph):
    counter = tf.compat.v1.get_variable("counter", initializer=0.0, use_resource=True)
    bump = counter.assign_add(1.0).op
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(counter.initializer)
        sess.run(bump)
        with tf.control_dependencies([bump]):
            after_bump = tf.identity(tf.constant(7.0), name="after_bump")
        assert sess.run(after_bump) == 7.0
        assert sess.run(counter.read_value()) == 2.0


def test_an_extension_remembers_the_control_inputs_of_the_ops_it_added(graph):
    """Keras 2 fit on a v1 graph adds update ops with control inputs on earlier ops between runs. The running
    session must remember them with those inputs, else a later growth finds them "changed" and rebuilds it, which
    restarts the input pipeline. A new Cast of an old tensor grows the graph by a full rewrite; the op with the
    control input is rewritten alone."""
    iterator = tf.compat.v1.data.make_initializable_iterator(tf.data.Dataset.range(100))
    item = iterator.get_next()
    counter = tf.compat.v1.get_variable("counter", initializer=0.0, use_resource=True)
    bump = counter.assign_add(1.0).op
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run([counter.initializer, iterator.initializer])
        seen = [sess.run(item)]
        program = sess._npu_emulation.current_program()
        seen.append(sess.run(tf.cast(item, tf.int32, name="as_int32")))
        with tf.control_dependencies([bump]):
            after_bump = tf.identity(tf.constant(7.0), name="after_bump")
        assert sess.run(after_bump) == 7.0
        seen.append(sess.run(tf.cast(item, tf.float64, name="as_float64")))
        assert sess._npu_emulation.current_program() is program, "extended each time, never rebuilt"
        assert seen == [0, 1, 2], "the iterator kept its position"
        assert sess.run(counter.read_value()) == 1.0


def test_user_casts_added_later_keep_variable_values_whatever_the_path(graph):
    # A user Cast to float16 added after the first run lets the pass reuse it for an existing conversion; the
    # existing MatMul's inputs change, so the inner session is rebuilt and the variable must survive that.
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    v = tf.compat.v1.get_variable("v", initializer=np.full((2, 2), 0.5, np.float32), use_resource=False)
    y = tf.matmul(x, v, name="y")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(v.initializer)
        sess.run(tf.compat.v1.assign(v, np.full((2, 2), 0.25, np.float32)))
        np.testing.assert_array_equal(sess.run(y, {x: np.ones((2, 2))}), np.full((2, 2), 0.5))
        as_half = [tf.cast(x, tf.float16, name="x_half"), tf.cast(v, tf.float16, name="v_half")]
        value, x_half, v_half = sess.run([y] + as_half, {x: np.ones((2, 2))})
    np.testing.assert_array_equal(value, np.full((2, 2), 0.5))
    np.testing.assert_array_equal(v_half, np.full((2, 2), 0.25, np.float16))
    assert x_half.dtype == np.float16


def test_rebuild_warns_that_iterators_and_queues_start_over(graph, caplog):
    items = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(10)).get_next()
    x = tf.cast(tf.fill([2, 2], items), tf.float32)
    v = tf.compat.v1.get_variable("v", initializer=np.full((2, 2), 0.5, np.float32), use_resource=False)
    y = tf.matmul(x, v, name="y")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(v.initializer)
        assert [sess.run(y)[0, 0] for _ in range(2)] == [0.0, 1.0]
        program = sess._npu_emulation.program
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            sess.run(tf.cast(v, tf.float16, name="v_half"))
        assert sess._npu_emulation.program is not program, "the user Cast changed the existing MatMul's inputs"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("start over" in message and "OneShotIterator" in message for message in warnings), warnings


def test_a_rebuild_initializes_again_the_iterators_the_user_initialized(graph):
    """tf.keras fit runs its dataset iterator's initializer, then adds its train function: when that rebuilds the
    inner session, an initialized iterator restarts from its first element (with the values its initializer was fed)
    instead of failing as never initialized; one the user never initialized stays so."""
    limit = tf.compat.v1.placeholder(tf.int64, [], name="limit")
    fed = tf.compat.v1.data.make_initializable_iterator(tf.data.Dataset.range(limit))
    untouched = tf.compat.v1.data.make_initializable_iterator(tf.data.Dataset.range(5))
    items = fed.get_next()
    v = tf.compat.v1.get_variable("v", initializer=np.full((2, 2), 0.5, np.float32), use_resource=False)
    y = tf.matmul(tf.cast(tf.fill([2, 2], items), tf.float32), v, name="y")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run([v.initializer, fed.initializer], {limit: 3})
        program = sess._npu_emulation.current_program()
        sess.run(tf.cast(v, tf.float16, name="v_half"))
        assert sess._npu_emulation.program is not program, "the user Cast changed the existing MatMul's inputs"
        assert [sess.run(y)[0, 0] for _ in range(3)] == [0.0, 1.0, 2.0]
        with pytest.raises(tf.errors.OutOfRangeError):      # the fed limit of 3 holds after the rebuild
            sess.run(y)
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(untouched.get_next())


def test_the_customize_dtypes_file_is_read_once_when_the_session_is_created(graph, tmp_path):
    """Rewrites after the graph grows use the rules read at creation: editing or deleting the file later changes
    nothing, and its warnings are not repeated on every rewrite."""
    path = tmp_path / "customize.cfg"
    path.write_text("OpType::MatMulV2:OutputDtype:float32\nOpType::MatMulV2:OutputDtype:float16\n")
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    first = tf.matmul(x, tf.ones([2, 2]), name="first")
    config = npu_config("mixed_float16", customize_dtypes=str(path))
    with pytest.warns(NpuConfigWarning, match="already set on line 1") as caught:
        sess = tf.compat.v1.Session(config=config)
    with sess:
        sess.run(first, {x: np.ones((2, 2), np.float32)})
        path.unlink()
        second = tf.matmul(first, tf.ones([2, 2]), name="second")      # the graph grows: rewritten again
        with warnings.catch_warnings():
            warnings.simplefilter("error", NpuConfigWarning)
            sess.run(second, {x: np.ones((2, 2), np.float32)})
        report = last_report(sess)
    assert len([w for w in caught if "already set" in str(w.message)]) == 1
    for name in ("first", "second"):
        assert "customize_dtypes line 1" in report.by_name(name).reason


def test_grouping_a_train_op_after_the_initializers_ran_keeps_the_iterator(graph):
    """tf.group marks the grouped op with _has_manual_control_dependencies, which changes nothing it does: a graph
    grown that way (set_iteration_per_loop after the iterator's initializer, as ModelZoo scripts call it) extends
    the running session instead of rebuilding it and losing the iterator's position."""
    from npu_bridge.estimator.npu import util

    iterator = tf.compat.v1.data.make_initializable_iterator(tf.data.Dataset.range(100))
    total = tf.compat.v1.get_variable("total", initializer=tf.constant(0, tf.int64), use_resource=True)
    step = tf.group(total.assign_add(iterator.get_next()), name="train")
    with tf.compat.v1.Session(config=npu_config("mixed_float16", iterations_per_loop=4)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(iterator.initializer)
        program = sess._npu_emulation.current_program()
        loop = util.set_iteration_per_loop(sess, step, 4)
        sess.run(loop)
        assert sess.run(total.read_value()) == 0 + 1 + 2 + 3
        assert sess._npu_emulation.current_program() is program       # extended, not rebuilt


def test_a_constant_that_rounds_away_is_warned_about_once_per_session(graph, caplog):
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    guarded = tf.math.add(tf.matmul(x, tf.ones([2, 2])), tf.constant(1e-8, name="epsilon"), name="guarded")
    with caplog.at_level(logging.WARNING, logger="tensorflow"), \
            tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        sess.run(guarded, {x: np.ones((2, 2), np.float32)})
        sess.run(tf.nn.relu(guarded), {x: np.ones((2, 2), np.float32)})     # grown: rewritten again
        assert "epsilon" in last_report(sess).by_name("guarded").reason
    warnings = [r.getMessage() for r in caplog.records if "constant 'epsilon'" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].startswith("NpuOptimizer mixed_float16: constant 'epsilon' (1e-08 is 0 in float16) where op "
                                  "'guarded' reads it in float16; built at " + __file__ + ":")
