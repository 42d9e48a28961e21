"""Ops exact on rounded values (rules.EXACT_ON_ROUNDED): float32 consumers read their raw float32 output.

The NPU rounds at every op boundary. MaxPool computes in float32 between casts here; its inputs are rounded, so
its output is already rounded, and Cast(float32)(Cast(float16)(pool)) is the identity on values. The tests check
that skipping that pair changes no bit, and that it removes Casts and gives MaxPoolGrad MaxPool's own output.
"""
import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.precision import casts, rewrite, rules
from precision_helpers import added_casts, assert_idempotent, build, data_inputs, fetch_user_tensor, mode, nodes

F16 = np.float16
F32 = np.float32


def _values(rng, shape):
    """Multiples of 1/16 in [-2, 2], nudged below half a float16 ulp: rounding gives back k/16 exactly, and every
    float32 sum of the chain below is exact whatever order the kernel adds in."""
    k = rng.integers(-32, 33, size=shape).astype(F32)
    return (k / 16 * (1 + rng.uniform(-2 ** -13, 2 ** -13, size=shape))).astype(F32)


def _inputs():
    rng = np.random.default_rng(3)
    return _values(rng, (1, 5, 5, 1)), _values(rng, (2, 2, 1, 2)), _values(rng, (1, 1, 2, 3)), \
        _values(rng, (1, 2, 2, 3))


def _chain(x, w1, w2, g):
    """Conv2D -> Relu -> MaxPool -> Conv2D and the gradient of sum(out * g) with respect to x and w1."""
    def fn():
        xp = tf.compat.v1.placeholder(tf.float32, x.shape, name="x")
        kernel = tf.constant(w1, name="w1")
        conv1 = tf.nn.conv2d(xp, kernel, 1, "VALID", name="conv1")
        relu = tf.nn.relu(conv1, name="relu")
        pool = tf.nn.max_pool2d(relu, 2, 2, "VALID", name="pool")
        out = tf.nn.conv2d(pool, tf.constant(w2), 1, "VALID", name="out")
        loss = tf.reduce_sum(out * tf.constant(g), name="loss")
        tf.gradients(loss, [xp, kernel], name="grad")
    return build(fn)


def _conv_valid(x, w):
    """float32 VALID convolution, stride 1 (the inputs make every sum exact)."""
    kh, kw, _, cout = w.shape
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((1, oh, ow, cout), F32)
    for i in range(oh):
        for j in range(ow):
            patch = x[0, i:i + kh, j:j + kw, :]
            out[0, i, j] = np.tensordot(patch, w, axes=([0, 1, 2], [0, 1, 2]))
    return out


def _reference(x, w1, w2, low=F16):
    """Every op boundary rounded to `low`; cube ops multiply rounded operands and accumulate in float32."""
    conv1 = _conv_valid(x.astype(low).astype(F32), w1.astype(low).astype(F32)).astype(low)
    relu = np.maximum(conv1, low(0))
    pool = relu.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4))
    out = _conv_valid(pool.astype(F32), w2.astype(low).astype(F32)).astype(low)
    return {"conv1:0": conv1, "relu:0": relu, "pool:0": pool, "out:0": out}


FETCHES = ("pool:0", "out:0", "loss:0", "grad/conv1_grad/Conv2DBackpropInput:0",
           "grad/conv1_grad/Conv2DBackpropFilter:0")


def _rewrite_without_shortcut(monkeypatch, graph_def, options):
    """The pass as it was before: every float32 consumer of MaxPool reads Cast(float32)(Cast(float16)(pool))."""
    with monkeypatch.context() as patch:
        patch.setattr(casts, "EXACT_ON_ROUNDED", frozenset())
        return rewrite(graph_def, options)


def test_chain_and_its_gradient_are_bit_identical_to_rounding_at_every_boundary(monkeypatch):
    x, w1, w2, g = _inputs()
    graph_def = _chain(x, w1, w2, g)
    options = mode("mixed_float16")
    result = rewrite(graph_def, options)
    before = _rewrite_without_shortcut(monkeypatch, graph_def, options)
    feeds = {"x:0": x}
    for name in FETCHES:
        got = fetch_user_tensor(result, name, feeds)
        want = fetch_user_tensor(before, name, feeds)
        assert got.dtype == want.dtype, name
        assert got.tobytes() == want.tobytes(), name
    for name, want in _reference(x, w1, w2).items():
        got = fetch_user_tensor(result, name, feeds)
        assert got.dtype == np.dtype(F16) and got.tobytes() == want.tobytes(), name
    assert_idempotent(result, options)


@pytest.mark.parametrize("v2, soc", [("mixed_float16", None), ("mixed_bfloat16", "Ascend910B3")])
def test_float32_consumers_read_maxpool_directly(monkeypatch, v2, soc):
    x, w1, w2, g = _inputs()
    graph_def = _chain(x, w1, w2, g)
    options = mode(v2, soc=soc)
    result = rewrite(graph_def, options)
    before = _rewrite_without_shortcut(monkeypatch, graph_def, options)
    graph = nodes(result.graph_def)
    assert result.report.by_name("pool").emulated
    grad = next(n for n in graph.values() if n.op == "MaxPoolGrad")
    # orig_output is MaxPool's own output: TensorFlow's oneDNN rewrite can pair the two again.
    assert data_inputs(result.graph_def, grad.name)[1] in ("pool", "pool:0")
    assert data_inputs(result.graph_def, "out")[0] in ("pool", "pool:0")
    # The Cast pair on MaxPool's output is gone (one widening Cast served both readers before); Relu and ReluGrad
    # compute in float32 between casts too and are exact on rounded inputs: their widening Casts go as well (-3).
    assert len(added_casts(result.graph_def)) == len(added_casts(before.graph_def)) - 3
    assert result.report.n_casts == before.report.n_casts - 3
    # The user's fetch of pool still reads the rounded value in the reduced dtype.
    assert result.tensor_map["pool:0"] == before.tensor_map["pool:0"]


def test_avgpool_keeps_its_cast_pair():
    """AvgPool averages: its float32 output is not a float16 value, so readers still get the rounded one."""
    def fn():
        xp = tf.compat.v1.placeholder(tf.float32, (1, 4, 4, 1), name="x")
        conv = tf.nn.conv2d(xp, tf.constant(np.ones((1, 1, 1, 1), F32)), 1, "VALID", name="conv")
        pool = tf.nn.avg_pool2d(conv, 2, 2, "VALID", name="pool")
        tf.nn.conv2d(pool, tf.constant(np.ones((1, 1, 1, 1), F32)), 1, "VALID", name="out")

    result = rewrite(build(fn), mode("mixed_float16"))
    assert result.report.by_name("pool").emulated
    reader = nodes(result.graph_def)[data_inputs(result.graph_def, "out")[0].split(":")[0]]
    assert reader.op == "Cast" and data_inputs(result.graph_def, reader.name) == ["pool-0-CastToFp16-NpuBridge"]


@pytest.mark.parametrize("v2, soc, low", [("mixed_float16", None, F16),
                                          ("mixed_bfloat16", "Ascend910B3", ml_dtypes.bfloat16)])
def test_relu_and_relu_grad_compute_in_float32_between_casts_without_changing_a_bit(monkeypatch, v2, soc, low):
    """Relu/ReluGrad float16 CPU kernels are ~10x slower than float32 (SLOW_REDUCED_ON_CPU); relu selects, so
    computing it in float32 on rounded inputs gives the very values the in-place reduced op gave."""
    x, w1, w2, g = _inputs()
    graph_def = _chain(x, w1, w2, g)
    options = mode(v2, soc=soc)
    result = rewrite(graph_def, options)
    low_name = np.dtype(low).name
    for name, op in (("relu", "Relu"), ("grad/relu_grad/ReluGrad", "ReluGrad")):
        record = result.report.by_name(name)
        assert record.decision == low_name and record.emulated, name
        assert f"float32 kernel for {op} is far faster on CPU than its {low_name} one" in record.reason, name
        assert nodes(result.graph_def)[name].attr["T"].type == tf.float32.as_datatype_enum, name
    feeds = {"x:0": x}
    for name, want in _reference(x, w1, w2, low).items():
        got = fetch_user_tensor(result, name, feeds)
        assert got.dtype == np.dtype(low) and got.tobytes() == want.tobytes(), name
    with monkeypatch.context() as patch:
        patch.setattr(rules, "SLOW_REDUCED_ON_CPU", rules.SLOW_REDUCED_ON_CPU - {"Relu", "ReluGrad"})
        in_place = rewrite(graph_def, options)
    assert not in_place.report.by_name("relu").emulated
    for name in FETCHES + ("relu:0", "grad/relu_grad/ReluGrad:0"):
        got = fetch_user_tensor(result, name, feeds)
        want = fetch_user_tensor(in_place, name, feeds)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), name
    assert_idempotent(result, options)


def test_slow_ops_named_without_a_registry_query_have_reduced_cpu_kernels(monkeypatch):
    """why_between_casts names the slow ops' reason without asking TensorFlow's kernel registry (a scan of the
    whole registry per op type): that is only true while each has a float16 and a bfloat16 CPU kernel, checked here
    against the installed TensorFlow. The 3D pools, which lack a float16 one, are still asked about."""
    from npu_bridge.core.precision.typeattrs import DT_BFLOAT16, DT_HALF, has_cpu_kernel

    named = rules.SLOW_REDUCED_ON_CPU - rules._SLOW_KERNELS_UNSURE
    for op in sorted(named):
        for dtype in (DT_HALF, DT_BFLOAT16):
            assert has_cpu_kernel(op, (("T", dtype),)), (op, dtype)
    asked = []
    monkeypatch.setattr(rules, "has_cpu_kernel", lambda op, dtypes: asked.append(op) or op != "MaxPool3D")
    assert rules.why_between_casts("MaxPool", False, (("T", DT_HALF),)).endswith("than its float16 one")
    assert rules.why_between_casts("MaxPool3D", False, (("T", DT_HALF),)) == "no CPU kernel for MaxPool3D in float16"
    assert asked == ["MaxPool3D"]
