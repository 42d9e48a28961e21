"""The runtime's speed paths give the same results as the slow ones: the plan cache past its bound, the inner
graph's import, and a graph grown between runs."""
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import graph_pb2
from tensorflow.python.framework import importer

from npu_bridge.core.precision import rewrite
from npu_bridge.runtime import observers, plans
from .conftest import npu_config


def test_plan_cache_past_its_bound_keeps_most_plans_of_a_cycle(graph, monkeypatch):
    """Cycling through more fetch sets than the bound once emptied the whole cache on every pass (each run then
    built a new TensorFlow callable); evicting one plan at a time keeps most of the cycle cached."""
    monkeypatch.setattr(plans, "_MAX_CACHED_PLANS", 8)
    x = tf.compat.v1.placeholder(tf.float32, [2])
    outputs = [x * float(i) for i in range(10)]
    with tf.compat.v1.Session(config=npu_config()) as sess:
        built = []
        original = plans.Plan.__init__

        def counting(self, *args, **kwargs):
            built.append(1)
            original(self, *args, **kwargs)

        monkeypatch.setattr(plans.Plan, "__init__", counting)
        for output in outputs:
            sess.run(output, {x: [1.0, 2.0]})
        first_pass = len(built)
        for _ in range(5):
            for i, output in enumerate(outputs):
                np.testing.assert_array_equal(sess.run(output, {x: [1.0, 2.0]}), [float(i), 2.0 * i])
        program = sess._npu_emulation.program
        assert len(program.plans) <= 8
        assert first_pass == 10
        assert len(built) - first_pass < 0.6 * 50, "most runs of the later passes must find their plan cached"


def test_a_first_step_makes_no_python_objects_and_no_fetch_casts_in_the_inner_graph(graph):
    """Plans address the inner graph by name (runtime.inner_ops): initializing, training with feeds and fetching a
    tensor the pass reduced make no Python Operation for the inner graph, and that fetch adds no Cast to it (its
    value is widened on the host; a Cast added after the first callable makes TensorFlow place the whole graph
    again). A Cast the runtime still makes in the C graph (for a fed tensor, or a tensor connection) is among the
    Python objects once they are made, one made afterwards gets its Python op at once, and both give the values
    fetched."""
    x = tf.compat.v1.placeholder(tf.float32, [4, 3], name="x")
    w = tf.compat.v1.get_variable("w", initializer=tf.constant(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)))
    hidden = tf.matmul(x, w, name="hidden")
    scaled = tf.multiply(hidden, 3.0, name="scaled")
    loss = tf.reduce_mean(tf.square(scaled), name="loss")
    train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {x: np.arange(12, dtype=np.float32).reshape(4, 3) / 7}
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train, feed)
        hidden_value, scaled_value, _ = sess.run([hidden, scaled, w], feed)
        program = sess._npu_emulation.program
        held, held_scaled = program.result.tensor_map["hidden:0"], program.result.tensor_map["scaled:0"]
        assert (held.dtype, held_scaled.dtype) == ("float16", "float16")
        assert hidden_value.dtype == scaled_value.dtype == np.float32
        assert program._graph.get_operations() == []
        inner_nodes = {n.name for n in program._graph.as_graph_def().node}
        assert inner_nodes == {n.name for n in program.result.graph_def.node}
        cast = program.fetch_name(held.name, tf.float32)
        ops = {op.name: op for op in program.graph.get_operations()}
        assert set(ops) == inner_nodes | {cast.split(":")[0]}
        assert (ops[cast.split(":")[0]].type, ops[cast.split(":")[0]].get_attr("DstT")) == ("Cast", tf.float32)
        later = program.fetch_name(held_scaled.name, tf.float32)
        assert program.graph.get_tensor_by_name(later).op.type == "Cast"
        by_cast = program.session.run([cast, later], {"x:0": feed[x]})
    np.testing.assert_array_equal(by_cast[0], hidden_value)
    np.testing.assert_array_equal(by_cast[1], scaled_value)
    np.testing.assert_array_equal(scaled_value, np.float16(hidden_value) * np.float16(3.0))


@pytest.mark.parametrize("mode", ["mixed_float16", "mixed_bfloat16"])
def test_a_reduced_fetch_is_widened_to_the_users_dtype_on_every_path(graph, observe, mode):
    """A fetched tensor the NPU holds reduced is read as held and widened on the host: a plain run, a run seen by a
    run observer (whose record holds the widened values too) and a partial run all return the user's float32, with
    exactly the reduced values."""
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    product = tf.matmul(x, tf.constant([[1.0, 2.0], [3.0, 4.0]]), name="product")
    value = np.array([[0.1, 0.2], [0.3, 1 / 3]], np.float32)
    reduced = np.float16 if mode == "mixed_float16" else tf.bfloat16.as_numpy_dtype
    extra = {"soc_config": "Ascend910B1"} if mode == "mixed_bfloat16" else {}
    with tf.compat.v1.Session(config=npu_config(mode, **extra)) as sess:
        plain = sess.run(product, {x: value})
        assert sess._npu_emulation.program.result.tensor_map["product:0"].dtype == np.dtype(reduced).name
        records = []
        observer = type("Recorder", (observers.RunObserver,), {"after_step": lambda self, r: records.append(r)})()
        observe(observer)
        observed = sess.run(product, {x: value})
        observers.remove_observer(observer)
        handle = sess.partial_run_setup([product], [x])
        partial = sess.partial_run(handle, product, {x: value})
    expected = (value.astype(reduced).astype(np.float32) @ np.float32([[1, 2], [3, 4]]).astype(reduced)
                .astype(np.float32)).astype(reduced).astype(np.float32)
    for got in (plain, observed, records[0].results[0], partial):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, expected)


def _conv_bn_training_graph():
    """Conv + BN + ReLU + dense + softmax cross-entropy + Momentum, with seeded initializers."""
    graph = tf.Graph()
    graph.seed = 3
    v1 = tf.compat.v1
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 8, 8, 3], name="x")
        labels = v1.placeholder(tf.int32, [2], name="labels")
        kernel = v1.get_variable("kernel", [3, 3, 3, 4])
        h = tf.nn.conv2d(x, kernel, [1, 1, 1, 1], "SAME")
        scale = v1.get_variable("gamma", [4], initializer=v1.ones_initializer())
        offset = v1.get_variable("beta", [4], initializer=v1.zeros_initializer())
        h, _, _ = v1.nn.fused_batch_norm(h, scale, offset, is_training=True)
        h = tf.reduce_mean(tf.nn.relu(h), axis=[1, 2])
        logits = tf.matmul(h, v1.get_variable("dense", [4, 5]))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                              name="loss")
        train = v1.train.MomentumOptimizer(0.1, 0.9).minimize(loss, name="train")
        init = v1.global_variables_initializer()
    rng = np.random.default_rng(5)
    feeds = {"x:0": rng.standard_normal((2, 8, 8, 3)).astype(np.float32),
             "labels:0": rng.integers(0, 5, 2).astype(np.int32)}
    return graph, init, train, loss, feeds


def _lstm_training_graph():
    """An LSTM recurrence in a v1 while loop (and its gradient's stacks) trained by Adam."""
    graph = tf.Graph()
    graph.seed = 4
    v1 = tf.compat.v1
    with graph.as_default():
        x = v1.placeholder(tf.float32, [5, 3, 4], name="x")
        kernel = v1.get_variable("kernel", [10, 24])

        def step(t, h, c, outputs):
            gates = tf.split(tf.matmul(tf.concat([x[t], h], 1), kernel), 4, axis=1)
            c = tf.sigmoid(gates[0]) * c + tf.sigmoid(gates[1]) * tf.tanh(gates[2])
            h = tf.sigmoid(gates[3]) * tf.tanh(c)
            return t + 1, h, c, outputs.write(t, h)

        zeros = tf.zeros([3, 6])
        _, _, _, written = v1.while_loop(lambda t, *_: t < 5, step,
                                         [tf.constant(0), zeros, zeros, tf.TensorArray(tf.float32, 5)])
        outputs = written.stack()
        loss = tf.add_n([tf.reduce_mean(outputs * outputs), tf.reduce_mean(outputs)], name="loss")
        train = v1.train.AdamOptimizer(0.01).minimize(loss, name="train")
        init = v1.global_variables_initializer()
    feeds = {"x:0": np.random.default_rng(6).standard_normal((5, 3, 4)).astype(np.float32)}
    return graph, init, train, loss, feeds


@pytest.mark.parametrize("build", [_conv_bn_training_graph, _lstm_training_graph], ids=["conv_bn", "lstm"])
@pytest.mark.parametrize("mode", ["mixed_float16", "fp16", "mixed_bfloat16"])
def test_inner_session_runs_bit_identical_to_a_plain_session_of_the_rewritten_graph(mode, build):
    """The inner graph is imported without import_graph_def's Python device pass, and its session runs only
    grappler's structural passes: training a conv/BN network or an LSTM through the emulated session gives exactly
    the values of the same rewritten GraphDef imported by tf.graph_util.import_graph_def into a plain session with
    all of TensorFlow's default passes."""
    graph, init, train, loss, feeds = build()
    extra = {"soc_config": "Ascend910B1"} if mode == "mixed_bfloat16" else {}
    with tf.compat.v1.Session(graph=graph, config=npu_config(mode, **extra)) as sess:
        sess.run(init)
        emulated = [sess.run([train, loss], {graph.get_tensor_by_name(k): v for k, v in feeds.items()})[1]
                    for _ in range(3)]
        program = sess._npu_emulation.program
        result = program.result
        variables = [v.name for v in graph.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)]
        emulated_variables = sess.run(variables)
        assert {op.name for op in program.graph.get_operations()} >= {n.name for n in result.graph_def.node}
    reference_graph = tf.Graph()
    with reference_graph.as_default():
        tf.graph_util.import_graph_def(result.graph_def, name="")
    ref = result.tensor_map.get("loss:0")
    loss_name = ref.name if ref is not None else "loss:0"
    with tf.compat.v1.Session(graph=reference_graph) as plain:
        plain.run(init.name)
        reference = [plain.run([train.name, loss_name], feeds)[1] for _ in range(3)]
        reference_variables = plain.run(variables)
    np.testing.assert_array_equal(np.asarray(emulated, np.float32), np.asarray(reference).astype(np.float32))
    assert len(variables) >= 3
    for name, got, expected in zip(variables, emulated_variables, reference_variables):
        np.testing.assert_array_equal(got, expected, err_msg=name)


@pytest.mark.parametrize("build", [_conv_bn_training_graph, _lstm_training_graph], ids=["conv_bn", "lstm"])
@pytest.mark.parametrize("mode", ["mixed_float16", "fp16", "mixed_bfloat16"])
def test_the_rewritten_graph_holds_every_default_attribute(mode, build):
    """The inner graph is imported without adding default attribute values to the rewritten GraphDef in place
    (runtime.program._imported): that GraphDef must already hold them, or the fingerprints that decide whether a
    grown graph can extend the running one would differ from what TensorFlow reports."""
    graph, *_ = build()
    extra = {"soc_config": "Ascend910B1"} if mode == "mixed_bfloat16" else {}
    with tf.compat.v1.Session(graph=graph, config=npu_config(mode, **extra)) as sess:
        options = sess._npu_emulation.options
    result = rewrite(graph.as_graph_def(), options, log=False)
    completed = graph_pb2.GraphDef()
    completed.CopyFrom(result.graph_def)
    importer._ProcessGraphDefParam(completed)
    added = [n.name for n, c in zip(result.graph_def.node, completed.node) if n != c]
    assert not added, f"nodes missing a default attribute: {added[:5]}"
    assert any(n.name.endswith("-NpuBridge") for n in result.graph_def.node)


@pytest.mark.parametrize("mode", ["must_keep_origin_dtype", "force_fp16"])
def test_the_inner_session_computes_the_rewritten_graph_op_by_op(graph, mode):
    """No algebra after the rounding points: (x * 3) * 0.7 is two products, each rounded where the NPU rounds it,
    not the single product by 2.1 that TensorFlow's constant push-down would make of it."""
    x = tf.compat.v1.placeholder(tf.float32, [64], name="x")
    y = (x * 3.0) * 0.7
    values = np.linspace(-3.0, 3.0, 64, dtype=np.float32)
    with tf.compat.v1.Session(config=npu_config(None, precision_mode=mode)) as sess:
        got = sess.run(y, {x: values})
    dtype = np.float16 if mode == "force_fp16" else np.float32
    expected = ((values.astype(dtype) * dtype(3.0)).astype(dtype) * dtype(0.7)).astype(dtype)
    np.testing.assert_array_equal(got, expected.astype(np.float32))
    assert not np.array_equal(got, (values.astype(dtype) * dtype(2.1)).astype(np.float32))


def test_the_inner_session_keeps_the_structural_passes_the_user_leaves_on():
    """Grappler's structural passes only, once and without the MLIR pipeline, unless the user's RewriterConfig
    turned one off or named its own list; remapping stays off and the NpuOptimizer entry is dropped, other custom
    optimizers kept."""
    from tensorflow.core.protobuf import rewriter_config_pb2

    from npu_bridge.runtime.emulated import inner_config

    off = rewriter_config_pb2.RewriterConfig.OFF
    config = npu_config()
    config.graph_options.rewrite_options.custom_optimizers.add().name = "pruning"
    inner = inner_config(config).graph_options.rewrite_options
    assert list(inner.optimizers) == ["pruning", "function", "dependency"]
    assert [c.name for c in inner.custom_optimizers] == ["pruning"]
    assert inner.remapping == off and not inner.disable_meta_optimizer
    assert inner.meta_optimizer_iterations == rewriter_config_pb2.RewriterConfig.ONE and inner.disable_tfg_optimizer
    config.graph_options.rewrite_options.meta_optimizer_iterations = rewriter_config_pb2.RewriterConfig.TWO
    assert inner_config(config).graph_options.rewrite_options.meta_optimizer_iterations == 2

    config.graph_options.rewrite_options.dependency_optimization = off
    config.graph_options.rewrite_options.disable_model_pruning = True
    assert list(inner_config(config).graph_options.rewrite_options.optimizers) == ["function"]

    config.graph_options.rewrite_options.function_optimization = off
    inner = inner_config(config).graph_options.rewrite_options
    assert not inner.optimizers and inner.disable_meta_optimizer

    chosen = npu_config()
    chosen.graph_options.rewrite_options.optimizers.extend(["constfold", "arithmetic"])
    inner = inner_config(chosen).graph_options.rewrite_options
    assert list(inner.optimizers) == ["constfold", "arithmetic"]
    assert inner.meta_optimizer_iterations == rewriter_config_pb2.RewriterConfig.DEFAULT_NUM_ITERS
    assert not inner.disable_tfg_optimizer


def test_the_inner_session_computes_constant_subgraphs_instead_of_folding_them(graph):
    """TensorFlow's older graph optimizer no longer folds constants in the inner session (it cost a quarter of
    ResNet-50's first step): the run computes the constant subgraph, with the values folding would give. A user
    who chose that optimizer's opt_level L0 and its flags keeps them."""
    from tensorflow.core.protobuf import config_pb2

    from npu_bridge.runtime.emulated import inner_config

    x = tf.compat.v1.placeholder(tf.float32, [4], name="x")
    y = x + tf.fill([4], 2.0, name="twos") * 3.0
    metadata = tf.compat.v1.RunMetadata()
    with tf.compat.v1.Session(config=npu_config()) as sess:
        got = sess.run(y, {x: np.ones(4, np.float32)}, run_metadata=metadata,
                       options=tf.compat.v1.RunOptions(output_partition_graphs=True))
    np.testing.assert_array_equal(got, [7.0] * 4)
    computed = [n.name for g in metadata.partition_graphs for n in g.node]
    assert "twos" in computed and not any("__cf__" in name for name in computed), computed

    options = inner_config(npu_config()).graph_options.optimizer_options
    assert options.opt_level == config_pb2.OptimizerOptions.L0
    assert options.do_common_subexpression_elimination and not options.do_constant_folding
    chosen = npu_config()
    chosen.graph_options.optimizer_options.opt_level = config_pb2.OptimizerOptions.L0
    chosen.graph_options.optimizer_options.do_constant_folding = True
    chosen.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    options = inner_config(chosen).graph_options.optimizer_options
    assert options.do_constant_folding and not options.do_common_subexpression_elimination
    assert options.global_jit_level == config_pb2.OptimizerOptions.OFF


def test_a_function_call_with_a_functional_cond_runs_as_in_a_plain_session(graph):
    """The inner session inlines function calls in its one grappler round, without the MLIR (TFG) pipeline that
    sinks ops into functional If branches: a tf.function holding a cond, called in a v1 graph, gives plain
    TensorFlow's values on both branches."""
    x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
    flag = tf.compat.v1.placeholder(tf.bool, [], name="flag")
    w = tf.constant(np.linspace(-1.0, 1.0, 16, dtype=np.float32).reshape(4, 4))

    @tf.function
    def block(a, take_relu):
        h = tf.matmul(a, w)
        return tf.cond(take_relu, lambda: tf.nn.relu(h) * 3.0, lambda: h - 1.0)

    y = block(x, flag)
    values = np.random.default_rng(8).standard_normal((4, 4)).astype(np.float32)
    results = []
    for config in (None, npu_config()):
        with tf.compat.v1.Session(config=config) as sess:
            results.append([sess.run(y, {x: values, flag: branch}) for branch in (True, False)])
            if config is not None:
                assert sess._npu_emulation.program is not None
    for plain, emulated in zip(*results):
        np.testing.assert_array_equal(emulated, plain)
    assert not np.array_equal(results[0][0], results[0][1])


def _records(report):
    return {r.name: r for r in report.records}


def _assert_same_as_full_rewrite(sess):
    """The program's result (grown incrementally) equals a full rewrite of the user's graph as it is now."""
    emulation = sess._npu_emulation
    full = rewrite(sess.graph.as_graph_def(), emulation.options, lists=emulation.lists,
                   customize=emulation.customize, log=False)
    grown = emulation.program.result
    assert {n.name: n for n in grown.graph_def.node} == {n.name: n for n in full.graph_def.node}
    assert dict(grown.tensor_map) == dict(full.tensor_map)
    assert _records(grown.report) == _records(full.report)
    assert grown.report.followed == full.report.followed
    counts = ("n_ops", "n_reduced", "n_casts", "n_clamped", "overflow_mode")
    assert [getattr(grown.report, c) for c in counts] == [getattr(full.report, c) for c in counts]
    assert set(grown.report.warnings) == set(full.report.warnings)


def _mlp_with_user_casts():
    v1 = tf.compat.v1
    v1.set_random_seed(1)
    x = v1.placeholder(tf.float32, [4, 8], name="x")
    labels = v1.placeholder(tf.int32, [4], name="labels")
    h = tf.nn.relu(tf.matmul(x, v1.get_variable("w0", [8, 8])), name="h")
    tf.nn.relu(x * 2.0, name="side")         # a Relu no gradient reads yet
    h16 = tf.cast(h, tf.float16, name="h16")
    mixed = tf.add(tf.cast(h16, tf.float32), 1.0, name="mixed")
    logits = tf.matmul(mixed, v1.get_variable("w1", [8, 3]), name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                          name="loss")
    train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    feeds = {x: np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8), labels: np.arange(4, dtype=np.int32) % 3}
    return h, logits, loss, train, feeds


GROWTHS = {
    "scalar of the loss": lambda h, logits, loss: loss * 3.0,
    "gray op after a white one": lambda h, logits, loss: tf.nn.relu(logits) + 1.0,
    "white op on a reduced tensor": lambda h, logits, loss: tf.matmul(h, tf.ones([8, 2])),
    "user Cast beside an existing one": lambda h, logits, loss: tf.cast(h, tf.float16) * 2.0,
    "gradient of an old Relu": lambda h, logits, loss: tf.gradients(tf.reduce_sum(h * h), h)[0],
    "black op": lambda h, logits, loss: tf.exp(logits),
    "user Cast an old MatMul may read": lambda h, logits, loss: tf.cast(
        h.graph.get_tensor_by_name("w1/read:0"), tf.float16) * 2.0,
    "first gradient of an old Relu": lambda h, logits, loss: tf.gradients(
        tf.reduce_sum(h.graph.get_tensor_by_name("side:0")), h.graph.get_tensor_by_name("x:0"))[0],
}


@pytest.mark.parametrize("mode", ["mixed_float16", "fp16", "mixed_bfloat16"])
@pytest.mark.parametrize("growth", list(GROWTHS))
def test_ops_added_between_runs_are_rewritten_as_a_full_rewrite_would(graph, mode, growth):
    """Added ops are rewritten alone (with what they read) only when that gives exactly the full rewrite's
    nodes, tensor map and report; values fetched after the growth are the full graph's."""
    h, logits, loss, train, feeds = _mlp_with_user_casts()
    extra = {"soc_config": "Ascend910B1"} if mode == "mixed_bfloat16" else {}
    with tf.compat.v1.Session(config=npu_config(mode, **extra)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train, feeds)
        for _ in range(2):
            added = GROWTHS[growth](h, logits, loss)
            value = sess.run(added, feeds)
            _assert_same_as_full_rewrite(sess)
        with tf.compat.v1.Session(config=npu_config(mode, **extra)) as fresh:
            fresh.run(tf.compat.v1.global_variables_initializer())
            fresh.run(train, feeds)
            np.testing.assert_array_equal(fresh.run(added, feeds), value)


def test_a_script_adding_ops_takes_the_incremental_path(graph, monkeypatch):
    """The common case (an op reading the loss, added and run again and again) never rewrites the whole graph."""
    from npu_bridge.runtime import emulated

    h, logits, loss, train, feeds = _mlp_with_user_casts()
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train, feeds)
        full = []
        original = emulated.rewrite
        monkeypatch.setattr(emulated, "rewrite", lambda *a, **k: full.append(1) or original(*a, **k))
        for i in range(5):
            assert sess.run(loss * float(i), feeds) == pytest.approx(sess.run(loss, feeds) * i, rel=1e-2)
        assert not full
        _assert_same_as_full_rewrite(sess)


@pytest.mark.parametrize("soc_name", ["ascend910", "ascend910b"])
def test_ops_added_to_a_loss_scaled_graph_in_saturation_mode_as_a_full_rewrite(graph, soc_name):
    """Saturation mode clamps every float16 output and wires loss scaling's status to the clamps upstream of it:
    new float16 outputs and new readers of clamped ones grow the graph exactly as a full rewrite would."""
    from npu_bridge.core import soc
    from npu_bridge.estimator.npu.npu_loss_scale_manager import FixedLossScaleManager
    from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer

    v1 = tf.compat.v1
    x = v1.placeholder(tf.float32, [4, 4], name="x")
    w = v1.Variable(np.full((4, 4), 0.5, np.float32), name="w")
    product = tf.matmul(x, w, name="product")
    loss = tf.reduce_mean(product)
    train = NPULossScaleOptimizer(v1.train.GradientDescentOptimizer(0.1), FixedLossScaleManager(8.0)) \
        .minimize(loss, global_step=v1.train.get_or_create_global_step())
    feed = {x: np.full((4, 4), 1000.0, np.float32)}
    try:
        with v1.Session(config=npu_config(soc_config=soc_name)) as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(train, feed)
            for added in (tf.matmul(product, w) * 100.0, tf.nn.relu(product) - loss, loss * 3.0):
                sess.run(added, feed)
                _assert_same_as_full_rewrite(sess)
            assert sess._npu_emulation.program.result.report.overflow_mode == \
                ("saturation" if soc_name == "ascend910" else "inf_nan")
    finally:
        soc.set_device_saturation(None)
