"""npu_ops, npu_unary_ops, hccl_ops, npu_scope, util and npu_plugin."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core import contract
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import npu_plugin, npu_scope, util
from npu_bridge.estimator.npu_unary_ops import npu_unary_ops
from npu_bridge.hccl import hccl_ops
from npu_bridge.npu_init import npu_config_proto

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


def test_dropout_keep_prob_one_is_identity():
    x = tf.ones([3])
    assert npu_ops.dropout(x, 1.0) is x


@pytest.mark.parametrize("keep_prob", [0.0, -0.5, 1.5])
def test_dropout_rejects_keep_prob_outside_the_unit_interval(keep_prob):
    with pytest.raises(ValueError, match=r"keep_prob must be a scalar tensor or a float in the range \(0, 1\]"):
        npu_ops.dropout(tf.ones([3]), keep_prob)
    with pytest.raises(ValueError, match="range"):
        npu_ops.dropout(tf.ones([3]), tf.constant(keep_prob))


def test_dropout_rejects_integer_input():
    with pytest.raises(ValueError, match="floating point tensor"):
        npu_ops.dropout(tf.ones([3], tf.int32), 0.5)


def test_dropout_scales_kept_units_by_the_inverse_keep_prob():
    keep_prob = v1.placeholder(tf.float32, [])
    y = npu_ops.dropout(tf.ones([20000]), keep_prob, seed=1)
    with v1.Session() as sess:
        values = sess.run(y, {keep_prob: 0.25})
        assert sess.run(y, {keep_prob: 1.0}) == pytest.approx(np.ones(20000))
    assert set(np.unique(values)) <= {0.0, 4.0}
    assert values.mean() == pytest.approx(1.0, abs=0.05)


def test_dropout_noise_shape_shares_the_mask():
    y = npu_ops.dropout(tf.ones([50, 8]), 0.5, noise_shape=[50, 1], seed=2)
    with v1.Session() as sess:
        values = sess.run(y)
    assert all(len(set(row)) == 1 for row in values)


def test_initialize_and_shutdown_system_run_as_no_ops():
    with v1.Session(config=npu_config_proto()) as sess:
        sess.run([npu_ops.initialize_system(), npu_ops.shutdown_system()])


def test_gelu_is_the_tanh_approximation():
    x = np.linspace(-4, 4, 33).astype(np.float32)
    y = npu_unary_ops.gelu(tf.constant(x))
    with v1.Session() as sess:
        got = sess.run(y)
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(got, tanh_form, rtol=1e-5, atol=1e-6)


def test_gelu_follows_its_input_like_the_gray_gelu_op():
    """The NPU's Gelu is gray: after a white MatMul it computes in float16. No op of ours may be black (tf.nn.gelu's
    Pow is), or the function would stay float32 where the NPU's one op does not."""
    from npu_bridge.runtime import last_report

    config = npu_config_proto()
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["precision_mode"].s = \
        b"allow_mix_precision"
    x = v1.placeholder(tf.float32, [4, 4])
    y = npu_unary_ops.gelu(tf.matmul(x, x, name="mm"), name="gelu")
    with v1.Session(config=config) as sess:
        sess.run(y, {x: np.linspace(-2, 2, 16, dtype=np.float32).reshape(4, 4)})
        records = [r for r in last_report(sess).records if r.name.startswith("gelu/") and r.list != "-"]
    assert records and all(r.list == "gray" and r.decision == "float16" for r in records), \
        [(r.name, r.list, r.decision) for r in records]


def test_gelu_grad_is_the_derivative_of_gelu():
    """npu_unary_ops.gelu_grad(dy, x, y), the op hand-written gradients call, agrees with TensorFlow's own gradient
    of gelu and with a central difference of the tanh form."""
    x_value = np.linspace(-3, 3, 13).astype(np.float32)
    x = tf.constant(x_value)
    y = npu_unary_ops.gelu(x)
    dy = tf.constant(np.full(13, 2.0, np.float32))
    auto, = tf.gradients(y, [x], grad_ys=dy)
    manual = npu_unary_ops.gelu_grad(dy, x, y)
    with v1.Session() as sess:
        auto_value, manual_value = sess.run([auto, manual])

    def tanh_form(v):
        return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))

    step = 1e-3
    central = 2.0 * (tanh_form(x_value.astype(np.float64) + step) - tanh_form(x_value.astype(np.float64) - step)) \
        / (2 * step)
    np.testing.assert_allclose(manual_value, auto_value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(manual_value, central, rtol=1e-4, atol=1e-5)


def test_hccl_collectives_are_identities_on_one_rank():
    x = tf.constant([1.0, 2.0])
    reduced = hccl_ops.allreduce(x, "sum")
    broadcast = hccl_ops.broadcast([x, x * 2], root_rank=0)
    gathered = hccl_ops.allgather(x, rank_size=1)
    scattered = hccl_ops.reduce_scatter(x * 3, "sum", rank_size=1)
    rooted = hccl_ops.reduce(x * 4, "max", root_rank=0)
    with v1.Session() as sess:
        r, (b0, b1), g, s, m = sess.run([reduced, broadcast, gathered, scattered, rooted])
    np.testing.assert_array_equal(r, [1, 2])
    np.testing.assert_array_equal(b1, [2, 4])
    np.testing.assert_array_equal(g, [1, 2])
    np.testing.assert_array_equal(s, [3, 6])
    np.testing.assert_array_equal(m, [4, 8])


def test_hccl_rejects_bad_arguments():
    with pytest.raises(NpuConfigError, match="reduction 'avg' is invalid"):
        hccl_ops.allreduce(tf.constant(1.0), "avg")
    with pytest.raises(NpuConfigError, match="root_rank 3"):
        hccl_ops.broadcast([tf.constant(1.0)], root_rank=3)
    with pytest.raises(NpuConfigError, match="rank_size 8"):
        hccl_ops.reduce_scatter(tf.constant([1.0]), "sum", rank_size=8)
    with pytest.raises(NpuConfigError, match="root_rank 1"):
        hccl_ops.reduce(tf.constant(1.0), "sum", root_rank=1)


def test_keep_dtype_scope_tags_the_ops_inside_only(fresh_graph):
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    with npu_scope.keep_dtype_scope():
        inside = tf.matmul(x, x, name="inside")
    outside = tf.matmul(x, x, name="outside")
    assert inside.op.get_attr("_keep_dtype") == 1
    with pytest.raises(ValueError):
        outside.op.get_attr("_keep_dtype")
    node, = [n for n in fresh_graph.as_graph_def().node if n.name == "inside"]
    assert node.attr["_keep_dtype"].i == 1


def test_without_npu_compile_scope_tags_ops():
    with npu_scope.without_npu_compile_scope():
        y = tf.identity(tf.constant(1.0), name="host_op")
    assert y.op.get_attr("_without_npu_compile") is True


def test_keep_tensors_dtypes_tags_producers(fresh_graph):
    x = v1.placeholder(tf.float32, [2], name="x")
    a = tf.square(x, name="a")
    b = tf.exp(x, name="b")
    util.keep_tensors_dtypes(fresh_graph, ["a:0", b])
    assert a.op.get_attr("_keep_dtype") == 1 and b.op.get_attr("_keep_dtype") == 1
    with pytest.raises(ValueError, match="tuple or list"):
        util.keep_tensors_dtypes(fresh_graph, "a:0")
    with pytest.raises(ValueError, match="tf.Graph"):
        util.keep_tensors_dtypes(None, ["a:0"])


def _loop_config(iterations):
    config = npu_config_proto()
    custom_op, = config.graph_options.rewrite_options.custom_optimizers
    custom_op.parameter_map["iterations_per_loop"].i = iterations
    return config


def test_set_iteration_per_loop_runs_the_step_n_times_per_run():
    counter = v1.Variable(0, name="counter")
    step = v1.assign_add(counter, 1).op
    with v1.Session(config=_loop_config(5)) as sess:
        sess.run(v1.global_variables_initializer())
        train_op = util.set_iteration_per_loop(sess, step, 5)
        assert train_op.name == "IterationOp"
        assert train_op.get_attr(contract.ITERATIONS_PER_LOOP_ATTR) == 5
        assert train_op.node_def.attr[contract.ITERATIONS_PER_LOOP_ATTR].i == 5
        sess.run(train_op)
        assert sess.run(counter) == 5


def test_iteration_count_must_match_the_session_option():
    counter = v1.Variable(0)
    with v1.Session(config=_loop_config(2)) as sess:
        sess.run(v1.global_variables_initializer())
        train_op = util.set_iteration_per_loop(sess, v1.assign_add(counter, 1).op, 3)
        with pytest.raises(NpuConfigError, match="iterations_per_loop"):
            sess.run(train_op)


def test_create_and_load_iteration_per_loop_var():
    counter = v1.Variable(0)
    iteration = util.IterationPerLoop()
    train_op = iteration.create_iteration_per_loop_var(v1.assign_add(counter, 1))
    with v1.Session(config=_loop_config(3)) as sess:
        sess.run(v1.global_variables_initializer())
        iteration.load_iteration_per_loop_var(sess, 3)
        sess.run(train_op)
        assert sess.run(counter) == 3
        loop_var, = [v for v in v1.local_variables() if v.op.name == "npu_runconfig/iterations_per_loop"]
        assert sess.run(loop_var) == 3


def test_one_iteration_per_loop_is_the_train_op_itself():
    counter = v1.Variable(0)
    step = v1.assign_add(counter, 1).op
    with v1.Session(config=_loop_config(1)) as sess:
        sess.run(v1.global_variables_initializer())
        assert util.set_iteration_per_loop(sess, step, 1) is step
        sess.run(step)
        assert sess.run(counter) == 1


def test_set_iteration_per_loop_wants_an_operation():
    counter = v1.Variable(0)
    with v1.Session() as sess:
        with pytest.raises(ValueError, match="train_op must be an Operation .* got Tensor 'AssignAdd:0' of type "
                                             "int32_ref; pass its .op"):
            util.set_iteration_per_loop(sess, v1.assign_add(counter, 1), 2)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_set_iteration_per_loop_rejects_non_positive_counts(bad):
    with v1.Session() as sess:
        with pytest.raises(ValueError, match="positive integer"):
            util.set_iteration_per_loop(sess, tf.no_op(), bad)


def test_set_device_sat_mode_validates_its_argument():
    with pytest.raises(NpuConfigError, match="should be 0 \\(saturation\\) or 1"):
        npu_plugin.set_device_sat_mode(2)
