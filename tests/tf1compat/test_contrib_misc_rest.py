"""The rest of tf.contrib's non-rnn names: compiler (xla, jit), tpu.core, learn's monitored_session path,
tensorrt and cloud on a CPU-only machine, image.dense_image_warp, all_reduce's builders, graph_editor's subset,
quantize's graph_matcher and opt.ScipyOptimizerInterface, each checked against TF 1.15's documented behaviour and
built the way ported ModelZoo scripts build them."""
import logging

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.tf1compat.contrib.removed import ContribRemovedError

_v1 = tf.compat.v1


pytestmark = pytest.mark.usefixtures("installed")


def test_tpu_core_names_the_replicated_core_device_as_tf_1_15_did():
    assert _v1.contrib.tpu.core(3) == "device:TPU_REPLICATED_CORE:3"


def test_learns_monitored_session_path_gives_tf_v1_trains_classes_and_they_run():
    from tensorflow.contrib.learn.python.learn import monitored_session as ms

    assert ms.MonitoredSession is _v1.train.MonitoredSession
    assert ms.ChiefSessionCreator is _v1.train.ChiefSessionCreator
    with tf.Graph().as_default():
        step = _v1.train.get_or_create_global_step()
        increment = _v1.assign_add(step, 1)
        with ms.MonitoredSession(session_creator=ms.ChiefSessionCreator()) as sess:
            assert [sess.run(increment) for _ in range(2)] == [1, 2]


def test_xla_compile_builds_the_computation_as_ordinary_ops_with_tf_1_15s_names_and_results():
    from tensorflow.contrib.compiler import xla

    with tf.Graph().as_default() as graph:
        def computation(x, y):
            weight = _v1.get_variable("w", initializer=2.0)
            return x * weight + y, tf.no_op(name="side_effect")

        summed = xla.compile(computation, [tf.constant(3.0), tf.constant(1.0)])
        lone = xla.compile(lambda: tf.constant(5.0))     # GNMT's xla.compile(pure_fn): a lone value, as a list
        nested = xla.compile(lambda x: {"double": 2 * x, "pair": (x, x + 1)}, [tf.constant(4.0)])
        only_op = xla.compile(lambda: tf.no_op())
        assert isinstance(summed, list) and len(summed) == 1 and summed[0].op.name == "output_0"
        assert [op.name for op in summed[0].op.control_inputs] == ["side_effect"]
        assert graph.get_operation_by_name("input_0").type == "Identity"
        assert isinstance(lone, list) and len(lone) == 1
        assert only_op.name.startswith("output_0") and only_op.type == "NoOp"
        assert not [op for op in graph.get_operations() if op.type.startswith("Xla")]
        assert graph.get_operation_by_name("w").type == "VarHandleOp"    # resource variables inside, as TF 1.15
        assert not _v1.get_variable_scope().use_resource                  # and the scope restored after
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            assert sess.run(summed) == [7.0] and sess.run(lone) == [5.0]
            assert sess.run(nested) == {"double": 8.0, "pair": (4.0, 5.0)}
        with pytest.raises(ValueError, match="zero or more tensors followed by zero or more operations"):
            xla.compile(lambda: (tf.no_op(), tf.constant(1.0)))
        with pytest.raises(TypeError, match="inputs must be a list or tuple"):
            xla.compile(lambda x: x, tf.constant(1.0))


def test_xla_estimator_model_fn_is_the_model_fn_itself_as_function_and_as_decorator():
    from tensorflow.contrib.compiler import xla

    def model_fn(features, labels, mode, params):
        return features

    assert xla.estimator_model_fn(model_fn) is model_fn         # NCF: model_fn = xla.estimator_model_fn(model_fn)
    assert xla.estimator_model_fn()(model_fn) is model_fn        # @xla.estimator_model_fn()


def test_jit_scope_builds_ops_without_xla_marks():
    with tf.Graph().as_default():
        with _v1.contrib.compiler.jit.experimental_jit_scope():
            product = tf.constant(2.0) * 3.0
        with pytest.raises(ValueError):
            product.op.get_attr("_XlaCompile")


def _frozen_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = _v1.placeholder(tf.float32, [None, 2], name="x")
        tf.nn.relu(tf.matmul(x, tf.constant([[1.0, -1.0], [2.0, 0.5]])), name="y")
    return graph.as_graph_def()


def test_tensorrt_create_inference_graph_returns_the_graph_unconverted_with_one_warning(caplog):
    import tensorflow.contrib.tensorrt as trt

    from npu_bridge.tf1compat.contrib import tensorrt as module

    module._warned.clear()
    frozen = _frozen_graph()
    with caplog.at_level(logging.WARNING, logger=module.__name__):
        converted = trt.create_inference_graph(input_graph_def=frozen, outputs=["y"], max_batch_size=8,
                                               max_workspace_size_bytes=1 << 29, precision_mode="FP16")
        trt.create_inference_graph(frozen, ["y"])
    assert converted == frozen and converted is not frozen
    assert len([r for r in caplog.records if "returned unconverted" in r.getMessage()]) == 1
    with tf.Graph().as_default(), _v1.Session() as sess:
        (y,) = tf.import_graph_def(converted, return_elements=["y:0"])
        np.testing.assert_allclose(sess.run(y, {"import/x:0": [[1.0, 2.0]]}), [[5.0, 0.0]])
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.tensorrt\.create_inference_graph of a SavedModel"):
        trt.create_inference_graph(None, ["y"], input_saved_model_dir="/tmp/model")
    with pytest.raises(ValueError, match="precision_mode 'INT4'"):
        trt.create_inference_graph(frozen, ["y"], precision_mode="INT4")


def test_cloud_bigtable_client_imports_and_creating_it_names_the_symbol_and_its_replacement():
    from tensorflow.contrib.cloud import BigtableClient

    assert _v1.contrib.cloud.BigtableClient is BigtableClient
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.cloud\.BigtableClient is not provided.*"
                                                  r"google-cloud-bigtable"):
        BigtableClient("project", "instance")


def _warp_reference(image, flow):
    """TF 1.15's dense_image_warp in numpy: sample at (y - dy, x - dx), corners clamped to [0, size - 2],
    weights to [0, 1]."""
    batch, height, width, _ = image.shape
    out = np.zeros_like(image)
    for b in range(batch):
        for y in range(height):
            for x in range(width):
                qy, qx = y - flow[b, y, x, 0], x - flow[b, y, x, 1]
                y0 = int(min(max(0.0, np.floor(qy)), height - 2))
                x0 = int(min(max(0.0, np.floor(qx)), width - 2))
                ay, ax = np.clip(qy - y0, 0, 1), np.clip(qx - x0, 0, 1)
                top = ax * (image[b, y0, x0 + 1] - image[b, y0, x0]) + image[b, y0, x0]
                bottom = ax * (image[b, y0 + 1, x0 + 1] - image[b, y0 + 1, x0]) + image[b, y0 + 1, x0]
                out[b, y, x] = ay * (bottom - top) + top
    return out


def test_dense_image_warp_matches_tf_1_15s_bilinear_warp_including_points_outside_the_image():
    rng = np.random.default_rng(11)
    image = rng.random((2, 5, 6, 3)).astype(np.float32)
    flow = (rng.normal(size=(2, 5, 6, 2)) * 2.5).astype(np.float32)    # some points land outside
    with tf.Graph().as_default(), _v1.Session() as sess:
        images = _v1.placeholder(tf.float32, [None, None, None, 3])
        flows = tf.constant(flow)
        warped = _v1.contrib.image.dense_image_warp(images, flows)
        (flow_gradient,) = tf.gradients(tf.reduce_sum(warped), [flows])
        identity = _v1.contrib.image.dense_image_warp(tf.constant(image), tf.zeros_like(flow))
        got, gradient, same = sess.run([warped, flow_gradient, identity], {images: image})
    assert warped.op.name.startswith("dense_image_warp/")
    np.testing.assert_allclose(got, _warp_reference(image, flow), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(same, image, rtol=1e-6)
    assert np.abs(gradient).sum() > 0         # differentiable in the flow, as optical-flow losses need
    with pytest.raises(ValueError, match="height must be at least 2"):
        _v1.contrib.image.dense_image_warp(np.zeros((1, 1, 4, 1), np.float32), np.zeros((1, 1, 4, 2), np.float32))


_DEVICES = [f"/job:localhost/replica:0/task:0/device:CPU:{index}" for index in range(4)]


def _on_devices(values):
    tensors = []
    for device, value in zip(_DEVICES, values):
        with tf.device(device):
            tensors.append(tf.constant(value))
    return tensors


def test_all_reduce_builders_give_every_device_the_reduction_on_its_own_device():
    from tensorflow.contrib.all_reduce.python import all_reduce

    rng = np.random.default_rng(2)
    values = [rng.normal(size=(3, 5)).astype(np.float32) for _ in _DEVICES]
    with tf.Graph().as_default():
        tensors = _on_devices(values)
        quarter = lambda t: t / 4                                 # noqa: E731  (a ported script's un_op)
        built = {   # GNMT's variable_mgr calls, one per --all_reduce_spec
            "xring": all_reduce.build_ring_all_reduce(tensors, 1, 2, [0, 1, 2, 3], tf.add),
            "pscpu": all_reduce.build_shuffle_all_reduce(tensors, _DEVICES[:3], tf.add_n),
            "nccl": all_reduce.build_nccl_all_reduce(tensors, tf.add),
            "nccl/xring": all_reduce.build_nccl_then_ring(tensors, 1, tf.add, un_op=quarter),
            "nccl/rechd": all_reduce.build_nccl_then_recursive_hd(tensors, tf.add),
            "nccl/pscpu": all_reduce.build_nccl_then_shuffle(tensors, _DEVICES[:1], tf.add, tf.add_n),
            "pscpu/pscpu": all_reduce.build_shuffle_then_shuffle(tensors, _DEVICES[:1], _DEVICES[1:2], tf.add_n),
            "ring_mean": all_reduce.build_ring_all_reduce(tensors, 1, 1, [0, 1, 2, 3], tf.add, un_op=quarter),
        }
        flat = [tf.reshape(tensor, [15])[:12] for tensor in tensors]
        built["rechd"] = all_reduce.build_recursive_hd_all_reduce(flat, tf.add)
        for name, outputs in built.items():
            if name != "rechd":
                assert [t.device for t in outputs] == _DEVICES, name
        with _v1.Session(config=_v1.ConfigProto(device_count={"CPU": 4})) as sess:
            got = sess.run(built)
        with pytest.raises(ValueError, match="power of 2"):
            all_reduce.build_recursive_hd_all_reduce(tensors[:3], tf.add)
        with pytest.raises(ValueError, match="NCCL reduces only with tf.add"):
            all_reduce.build_nccl_all_reduce(tensors, tf.multiply)
        with pytest.raises(ValueError, match="2 or more"):
            all_reduce.build_ring_all_reduce(tensors[:1], 1, 1, [0], tf.add)
    total = sum(values)
    for name, outputs in got.items():
        expected = {"rechd": total.reshape(-1)[:12], "nccl/xring": total / 4, "ring_mean": total / 4}.get(name, total)
        assert len(outputs) == 4
        for output in outputs:
            np.testing.assert_allclose(output, expected, rtol=1e-5, atol=1e-6, err_msg=name)


def _chain():
    """x -> a = x * 2 -> b = a + 1 -> c = tanh(b), and d = a * 3 beside it."""
    x = _v1.placeholder(tf.float32, [2], name="x")
    a = tf.multiply(x, 2.0, name="a")
    b = tf.add(a, 1.0, name="b")
    c = tf.tanh(b, name="c")
    d = tf.multiply(a, 3.0, name="d")
    return x, a, b, c, d


def test_graph_editor_walks_and_filters_select_as_tf_1_15_did():
    import tensorflow.contrib.graph_editor as ge

    with tf.Graph().as_default() as graph:
        x, a, b, c, d = _chain()
        constant_b = b.op.inputs[1].op
        backward = ge.get_backward_walk_ops([c.op], inclusive=True)
        assert backward[0] is c.op and set(backward) == {c.op, b.op, a.op, x.op, constant_b, a.op.inputs[1].op}
        assert ge.get_backward_walk_ops(c.op, stop_at_ts=[a]) == [c.op, b.op, constant_b]
        assert ge.get_backward_walk_ops([c], inclusive=False, within_ops=[c.op, b.op, a.op]) == [b.op, a.op]
        forward = ge.get_forward_walk_ops([x.op], inclusive=False)
        assert forward[0] is a.op and set(forward) == {a.op, b.op, c.op, d.op}
        assert ge.get_forward_walk_ops([a.op], within_ops=[a.op, d.op]) == [a.op, d.op]
        assert ge.get_forward_walk_ops([x.op], stop_at_ts=[b]) == [x.op, a.op, b.op, d.op]
        assert ge.filter_ts([b.op, c.op], True) == [a, constant_b.outputs[0], b, c]     # inputs, then outputs
        assert ge.filter_ts_from_regex([b.op, c.op], "^c$") == [c]
        assert ge.filter_ops([a.op, b.op, c.op], lambda op: op.type == "Tanh") == [c.op]
        assert ge.select_ops("^[bc]$", graph=graph) == [b.op, c.op]
        assert ge.select_ops("Tan", graph=graph) == []                  # regexes search op names, not types
        assert ge.select_ops([a.op, b], c.op) == [a.op, c.op]            # tensors are ignored
        assert ge.get_walks_intersection_ops([a.op], [c.op]) == [a.op, b.op, c.op]
        with pytest.raises(ValueError, match="keyword argument 'graph'"):
            ge.select_ops("a")
        with pytest.raises(TypeError, match="expected a Operation"):
            ge.add_control_inputs(c.op, [a])
        view = ge.sgv([b.op, c.op])
        assert view.inputs == (a, constant_b.outputs[0]) and view.outputs == (c,) and view.graph is graph
        with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.graph_editor\.detach is not provided"):
            ge.detach(view)


def test_graph_editor_copies_keep_names_devices_control_inputs_and_collections_as_tf_1_15_did():
    import tensorflow.contrib.graph_editor as ge

    with tf.Graph().as_default() as graph:
        x = _v1.placeholder(tf.float32, [2], name="x")
        marker = tf.no_op(name="marker")
        with tf.device("/device:CPU:0"), _v1.name_scope("dense"):
            scaled = tf.multiply(x, 2.0, name="scaled")
            with tf.control_dependencies([marker]):
                shifted = tf.add(scaled, scaled, name="shifted")
            with tf.control_dependencies([scaled.op]):
                after = tf.identity(x, name="after")
        graph.add_to_collection("checkpoints", shifted)
        graph.add_to_collection(_v1.GraphKeys.ACTIVATIONS, shifted)    # a GraphKeys name: kept
        with tf.device("/device:CPU:1"), tf.control_dependencies([marker]):    # the caller's context is not added
            copied, info = ge.copy_with_input_replacements(ge.sgv([scaled.op, shifted.op, after.op]), {})
        scaled_copy, shifted_copy = info._transformed_ops[scaled.op], info._transformed_ops[shifted.op]
        assert (scaled_copy.name, shifted_copy.name) == ("dense/scaled_1", "dense/shifted_1")
        assert scaled_copy.device == shifted_copy.device == "/device:CPU:0"
        assert list(shifted_copy.inputs) == [scaled_copy.outputs[0]] * 2 and scaled_copy.inputs[0] is x
        assert shifted_copy.control_inputs == [marker] and not scaled_copy.control_inputs     # outside: kept
        assert info.transformed(after.op).control_inputs == [scaled_copy]                      # inside: the copy
        assert shifted_copy._outputs[0] is info.transformed(shifted)       # TF 1.15's _outputs, as ported helpers read
        assert info.original(shifted_copy) is shifted.op and info.transformed([x]) == [None]
        assert graph.get_collection("checkpoints")[-1] is info.transformed(shifted)
        assert graph.get_collection(_v1.GraphKeys.ACTIVATIONS)[-1] is info.transformed(shifted)
        assert graph.get_collection(_v1.GraphKeys.ACTIVATIONS)[-1] is not graph.get_collection("checkpoints")[0]
        assert set(copied.ops) == {scaled_copy, shifted_copy, info.transformed(after.op)}
        feed = _v1.placeholder(tf.float32, [2], name="feed")
        _, scoped = ge.copy_with_input_replacements([scaled.op, shifted.op], {x: feed}, dst_scope="again")
        assert scoped.transformed(shifted).name == "again/dense/shifted:0"
        assert scoped.transformed(scaled).op.inputs[0] is feed
        assert graph.get_collection("again/checkpoints")[0] is scoped.transformed(shifted)
        replaced = ge.graph_replace(shifted, {x: feed})
        with _v1.Session() as sess:
            assert list(sess.run(replaced, {feed: [1.0, 2.0]})) == [4.0, 8.0]
        with pytest.raises(ValueError, match="into another graph is not provided"):
            ge.copy_with_input_replacements(ge.sgv([scaled.op]), {}, dst_graph=tf.Graph())


def test_graph_editor_reroute_ts_moves_only_the_allowed_consumers_and_counts_them():
    import tensorflow.contrib.graph_editor as ge

    with tf.Graph().as_default():
        x, a, b, c, d = _chain()
        other = tf.multiply(x, 10.0, name="other")
        assert ge.reroute_ts([other], [a], can_modify={b.op}) == 1        # b now reads other, d still reads a
        assert b.op.inputs[0] is other and d.op.inputs[0] is a
        assert ge.reroute_ts(other, a, cannot_modify=[d.op]) == 0
        with _v1.Session() as sess:
            assert list(sess.run(b, {x: [1.0, 2.0]})) == [11.0, 21.0]
            assert list(sess.run(d, {x: [1.0, 2.0]})) == [6.0, 12.0]
        with pytest.raises(ValueError, match="incompatible shapes"):
            ge.reroute_ts([tf.zeros([3])], [a])


def _recomputed_gradients(ge, loss, weights, checkpoint):
    """Gradient checkpointing the way ported memory-saving helpers do it with graph_editor: copy the forward ops
    after the checkpoint, feed the copies the checkpoint with its gradient stopped, take the gradients of the
    copy, then carry the checkpoint's gradient back through the original ops before it."""
    forward = ge.get_forward_walk_ops([w.op for w in weights], inclusive=True,
                                      within_ops=ge.get_backward_walk_ops([loss.op], inclusive=True))
    forward = [op for op in forward if op.inputs and "/read" not in op.name]
    assert checkpoint in set(ge.filter_ts(forward, True))
    stopped = tf.stop_gradient(checkpoint, name=checkpoint.op.name + "_sg")
    to_copy = [op for op in ge.get_backward_walk_ops([loss.op], stop_at_ts=[checkpoint]) if op in set(forward)]
    _, info = ge.copy_with_input_replacements(ge.sgv(to_copy), {})
    copies = list(info._transformed_ops.values())
    rerouted = ge.reroute_ts([stopped], [checkpoint], can_modify=copies)
    ge.add_control_inputs(copies[0], [loss.op])          # recompute only once the forward pass is done
    copied_loss = info._transformed_ops[loss.op]._outputs[0]
    after = [w for w in weights if w.op in set(ge.get_backward_walk_ops([copied_loss.op], stop_at_ts=[stopped]))]
    grads = tf.gradients(copied_loss, [stopped] + after)
    before = [w for w in weights if w not in after]
    return tf.gradients(checkpoint, before, grad_ys=grads[0]) + grads[1:], rerouted, copies


def test_graph_editor_recomputes_gradients_with_checkpoints_as_ported_memory_saving_helpers_do():
    import tensorflow.contrib.graph_editor as ge

    rng = np.random.default_rng(4)
    with tf.Graph().as_default() as graph:
        hidden = tf.constant(rng.normal(size=(4, 6)).astype(np.float32))
        weights, layers = [], []
        for index in range(3):
            weight = _v1.get_variable(f"w{index}", initializer=(rng.normal(size=(6, 6)) * 0.4).astype(np.float32))
            hidden = tf.tanh(tf.matmul(hidden, weight))
            weights.append(weight)
            layers.append(hidden)
        loss = tf.reduce_sum(tf.square(hidden))
        expected = tf.gradients(loss, weights)
        before = len(graph.get_operations())
        recomputed, rerouted, copies = _recomputed_gradients(ge, loss, weights, layers[0])
        assert rerouted == 1 and len(graph.get_operations()) > before
        assert {op.type for op in copies} >= {"MatMul", "Tanh"}
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            got, want = sess.run([recomputed, expected])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _tpu_friendly_upsampling(features, other):
    """Object detection's nearest-neighbour upsampling by 2 (reshape, multiply by ones, reshape), added to other."""
    batch, height, width, channels = features.shape.as_list()
    spread = tf.reshape(features, [batch, height, 1, width, 1, channels]) * tf.ones([1, 1, 2, 1, 2, 1])
    return tf.raw_ops.Add(x=tf.reshape(spread, [batch, height * 2, width * 2, channels]), y=other)


def test_graph_matcher_finds_the_exporters_resize_pattern_and_the_rewrite_it_drives_gives_the_same_values():
    from tensorflow.contrib.quantize.python import graph_matcher

    rng = np.random.default_rng(8)
    features = rng.normal(size=(1, 3, 4, 2)).astype(np.float32)
    other = rng.normal(size=(1, 6, 8, 2)).astype(np.float32)
    with tf.Graph().as_default() as graph:
        summed = _tpu_friendly_upsampling(tf.identity(tf.constant(features), name="projection"), tf.constant(other))
        # the detection exporter's rewrite_nn_resize_op patterns
        input_pattern = graph_matcher.OpTypePattern("*")
        reshape_1 = graph_matcher.OpTypePattern("Reshape", inputs=[input_pattern, "Const"], ordered_inputs=False)
        mul = graph_matcher.OpTypePattern("Mul", inputs=[reshape_1, "Const"], ordered_inputs=False)
        fake_quant = graph_matcher.OpTypePattern("FakeQuantWithMinMaxVars", inputs=[mul, "Identity", "Identity"],
                                                 ordered_inputs=False)
        reshape_2 = graph_matcher.OpTypePattern("Reshape", inputs=[graph_matcher.OneofPattern([fake_quant, mul]),
                                                                   "Const"], ordered_inputs=False)
        add = graph_matcher.OpTypePattern("Add", inputs=[reshape_2, "*"], ordered_inputs=False, name="root")
        matches = list(graph_matcher.GraphMatcher(add).match_graph(graph))
        assert len(matches) == 1
        match = matches[0]
        assert match.get_op(input_pattern).name == "projection" and match.get_op("root") is summed.op
        assert match.get_op(fake_quant) is None and match.get_op(mul).type == "Mul"
        assert match.get_tensor(reshape_2) is summed.op.inputs[0] and match.get_tensor(add) is None
        projection, add_op = match.get_op(input_pattern), match.get_op(add)
        resized = tf.compat.v1.image.resize_nearest_neighbor(projection.outputs[0], [6, 8])
        rewired = tf.add(resized, add_op.inputs[1])
        with _v1.Session() as sess:
            before, after = sess.run([summed, rewired])
    np.testing.assert_allclose(after, before, rtol=1e-6)
    np.testing.assert_allclose(before, np.repeat(np.repeat(features, 2, 1), 2, 2) + other, rtol=1e-6)


def test_graph_matcher_patterns_follow_tf_1_15s_rules():
    from tensorflow.contrib.quantize.python import graph_matcher as gm

    with tf.Graph().as_default():
        x = _v1.placeholder(tf.float32, [4], name="x")
        left, right = tf.split(x, 2, name="split")
        product = tf.multiply(tf.nn.relu6(right), left, name="product")
        relu = gm.OpTypePattern("Relu|Relu6", name="relu")
        split = gm.OpTypePattern("Split", name="split")
        ordered = gm.OpTypePattern("Mul", inputs=[split, relu])
        unordered = gm.OpTypePattern("Mul", inputs=[split, relu], ordered_inputs=False)
        assert gm.GraphMatcher(ordered).match_op(product.op) is None
        match = gm.GraphMatcher(unordered).match_op(product.op)
        assert match.get_op("relu").type == "Relu6" and match.get_tensor("split") is left   # the tensor consumed
        assert match.get_op("missing") is None
        assert gm.GraphMatcher(gm.OpTypePattern("Mul", inputs=["*"])).match_op(product.op) is None   # input count
        assert [m.get_op(relu) for m in gm.GraphMatcher(relu).match_ops([x.op, right.op, product.op.inputs[0].op])] \
            == [product.op.inputs[0].op]
        with pytest.raises(ValueError, match="at most 8 inputs"):
            gm.OpTypePattern("AddN", inputs=["*"] * 9)
        with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.quantize\.python\.graph_matcher\.nothing"):
            gm.nothing


def _least_squares_problem():
    rng = np.random.default_rng(6)
    features = rng.normal(size=(20, 3)).astype(np.float32)
    targets = (features @ np.array([1.5, -2.0, 0.5], np.float32) + 0.3).astype(np.float32)
    return features, targets


def _scipy_loss(features, targets):
    """The regression's loss as the graph computes it, as a function of the packed vector [weights, bias]."""
    def loss_and_gradient(x):
        residual = features @ x[:3] + x[3] - targets
        return float(np.sum(residual ** 2)), np.concatenate([2 * features.T @ residual, [2 * residual.sum()]])
    return loss_and_gradient


def test_scipy_optimizer_interface_minimises_the_loss_as_scipy_does_for_kernelnets_call():
    pytest.importorskip("scipy")
    import scipy.optimize

    features, targets = _least_squares_problem()
    with tf.Graph().as_default():
        inputs = _v1.placeholder(tf.float32, [None, 3])
        weights = _v1.get_variable("weights", initializer=np.zeros(3, np.float32))
        bias = _v1.get_variable("bias", initializer=0.0)
        loss = tf.reduce_sum(tf.square(tf.linalg.matvec(inputs, weights) + bias - targets))
        # kernelNet_ml1m: ScipyOptimizerInterface(loss, options={...}, method='L-BFGS-B'); minimize(sess, feed_dict)
        optimizer = _v1.contrib.opt.ScipyOptimizerInterface(loss, options={"maxiter": 5, "disp": False,
                                                                           "maxcor": 10}, method="L-BFGS-B")
        bounded = _v1.contrib.opt.ScipyOptimizerInterface(loss, var_to_bounds={bias: (-0.1, 0.1)})
        losses, steps = [], []
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            optimizer.minimize(sess, feed_dict={inputs: features}, fetches=[loss], loss_callback=losses.append,
                               step_callback=steps.append)
            got = np.concatenate([sess.run(weights), [sess.run(bias)]])
            sess.run(_v1.global_variables_initializer())
            bounded.minimize(sess, feed_dict={inputs: features})
            bounded_bias = sess.run(bias)
    expected = scipy.optimize.minimize(_scipy_loss(features, targets), np.zeros(4, np.float32), jac=True,
                                       method="L-BFGS-B", options={"maxiter": 5, "maxcor": 10})
    np.testing.assert_allclose(got, expected.x, rtol=1e-4, atol=1e-4)
    assert len(steps) == expected.nit and len(losses) == expected.nfev
    assert losses[-1] < losses[0]
    assert bounded_bias == pytest.approx(0.1)          # the unbounded optimum (0.3) is outside the bounds


def test_scipy_optimizer_interface_keeps_tf_1_15s_reserved_arguments_and_constraints():
    pytest.importorskip("scipy")
    with tf.Graph().as_default():
        x = _v1.get_variable("x", initializer=np.array([2.0, 3.0], np.float32))
        loss = tf.reduce_sum(tf.square(x))
        constrained = _v1.contrib.opt.ScipyOptimizerInterface(loss, equalities=[tf.reduce_sum(x) - 1.0],
                                                              method="SLSQP")
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            constrained.minimize(sess)
            np.testing.assert_allclose(sess.run(x), [0.5, 0.5], atol=1e-4)
            for reserved in ({"jac": True}, {"bounds": [(0, 1)]}):
                with pytest.raises(ValueError, match="set by the interface|var_to_bounds"):
                    _v1.contrib.opt.ScipyOptimizerInterface(loss, **reserved).minimize(sess)


def test_scipy_optimizer_interface_builds_without_scipy_and_minimize_names_it_when_missing(monkeypatch):
    with tf.Graph().as_default():
        x = _v1.get_variable("x", initializer=1.0)
        optimizer = _v1.contrib.opt.ScipyOptimizerInterface(tf.square(x))
        monkeypatch.setitem(__import__("sys").modules, "scipy.optimize", None)
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            with pytest.raises(ImportError, match="ScipyOptimizerInterface.minimize needs scipy"):
                optimizer.minimize(sess)


def test_framework_filter_variables_keeps_tf_1_15s_include_and_exclude_rules_as_the_detection_ports_call_it():
    with tf.Graph().as_default():
        for name in ("FeatureExtractor/conv1/weights", "FeatureExtractor/conv1/biases", "BoxPredictor/weights"):
            _v1.get_variable(name, shape=[1])
        names = lambda variables: [v.op.name for v in variables]          # noqa: E731
        trainable = _v1.trainable_variables()
        # object_detection's model_lib: filter_variables(trainable_variables(), include_patterns=..., ...)
        kept = _v1.contrib.framework.filter_variables(trainable, include_patterns=["FeatureExtractor"],
                                                      exclude_patterns=["biases"])
        assert names(kept) == ["FeatureExtractor/conv1/weights"]
        assert names(_v1.contrib.framework.filter_variables(trainable, include_patterns=["weights"])) == [
            "FeatureExtractor/conv1/weights", "BoxPredictor/weights"]                 # re.search by default
        assert names(_v1.contrib.framework.filter_variables(trainable, include_patterns=["weights"],
                                                            reg_search=False)) == []    # re.match from the start


def test_names_tf_1_15_did_not_have_either_give_the_clear_error_naming_where_they_are():
    import importlib

    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.filter_variables is not provided.*"
                                                  r"tf\.contrib\.framework\.filter_variables"):
        _v1.contrib.filter_variables
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.slim\.nets\.cyclegan is not provided.*"
                                                  r"research/slim/nets"):
        importlib.import_module("tensorflow.contrib.slim.nets.cyclegan")


def test_graph_editor_copies_ops_on_ref_variables_and_refuses_a_v1_while_loops_cycle_by_name():
    import tensorflow.contrib.graph_editor as ge

    with tf.Graph().as_default() as graph:
        w = _v1.Variable([1.0, 2.0], use_resource=False, name="w")
        tripled = tf.identity(w, name="y") * 3.0
        bumped = _v1.assign_add(w, [1.0, 1.0])
        _, info = ge.copy_with_input_replacements(ge.sgv([tripled.op.inputs[0].op, tripled.op, bumped.op]), {})
        assert info.transformed(bumped).op.inputs[0].dtype.name == "float32_ref"
        with _v1.Session() as sess:
            sess.run(w.initializer)
            assert list(sess.run(info.transformed(tripled))) == [3.0, 6.0]
            assert list(sess.run(info.transformed(bumped))) == [2.0, 3.0]
        was_v2 = _v1.control_flow_v2_enabled()
        _v1.disable_control_flow_v2()
        try:
            tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], name="loop")
        finally:
            if was_v2:
                _v1.enable_control_flow_v2()
        loop = [op for op in graph.get_operations() if op.name.startswith("loop/")]
        with pytest.raises(ValueError, match=r"loop/NextIteration:0 feeds an earlier op.*cycles is not provided"):
            ge.copy_with_input_replacements(ge.sgv(loop), {})
