"""Numbers: rewritten graphs in real sessions against float32 and against numpy + ml_dtypes references."""
import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.precision import rewrite
from precision_helpers import build, fetch_user_tensor, mode, run

F16 = np.float16
BF16 = ml_dtypes.bfloat16
UNIT_ROUNDOFF = {F16: 2.0 ** -11, BF16: 2.0 ** -8}    # half the distance between 1 and the next value


def _grid_values(rng, shape):
    """float32 values just off multiples of 1/16 in [-2, 2].

    Their float16/bfloat16 rounding is exactly k/16 (the perturbation is below half an ulp of either), so every
    product and sum of the chain below is exact in float32 whatever order the CPU kernel adds in, and the only
    rounding left is at the points the pass inserted, which the reference reproduces one by one.
    """
    k = rng.integers(-32, 33, size=shape).astype(np.float32)
    return (k / 16 * (1 + rng.uniform(-2 ** -13, 2 ** -13, size=shape))).astype(np.float32)


def _chain(x, w1, b, w2):
    def fn():
        xp = tf.compat.v1.placeholder(tf.float32, x.shape, name="x")
        mm = tf.matmul(xp, tf.constant(w1), name="mm")
        relu = tf.nn.relu(tf.nn.bias_add(mm, tf.constant(b), name="bias"), name="relu")
        tf.matmul(relu, tf.constant(w2), name="out")
    return build(fn)


def _chain_reference(x, w1, b, w2, low):
    """MatMul (cube: low inputs, float32 accumulate, low output) -> BiasAdd, Relu in low -> MatMul (cube)."""
    f32 = np.float32
    m1 = (x.astype(low).astype(f32) @ w1.astype(low).astype(f32)).astype(low)
    biased = (m1.astype(f32) + b.astype(low).astype(f32)).astype(low)
    relu = np.maximum(biased, low(0))
    return (relu.astype(f32) @ w2.astype(low).astype(f32)).astype(low)


@pytest.mark.parametrize("low, options", [(F16, ("mixed_float16", None)), (BF16, ("mixed_bfloat16", "Ascend910B3"))],
                         ids=["float16", "bfloat16"])
def test_matmul_biasadd_relu_matmul_matches_reference_exactly(low, options):
    rng = np.random.default_rng(11)
    x, w1, b, w2 = _grid_values(rng, (4, 8)), _grid_values(rng, (8, 8)), _grid_values(rng, (8,)), \
        _grid_values(rng, (8, 3))
    result = rewrite(_chain(x, w1, b, w2), mode(options[0], soc=options[1]))
    got = fetch_user_tensor(result, "out:0", {"x:0": x})
    want = _chain_reference(x, w1, b, w2, low)
    assert got.dtype == np.dtype(low)
    np.testing.assert_array_equal(got, want)
    # The rounding points matter: a float32 run of the same graph gives other numbers.
    plain = run(_chain(x, w1, b, w2), "out:0", {"x:0": x})
    assert not np.array_equal(plain.astype(low), want)


def _mlp(rng, width=64):
    def fn():
        h = tf.compat.v1.placeholder(tf.float32, [16, width], name="x")
        for layer in range(3):
            w = tf.constant(rng.normal(0, 1 / np.sqrt(width), (width, width)).astype(np.float32))
            b = tf.constant(rng.uniform(-0.1, 0.1, width).astype(np.float32))
            h = tf.nn.tanh(tf.nn.bias_add(tf.matmul(h, w), b), name=f"act{layer}")
        tf.nn.softmax(h, name="probs")
    return build(fn)


@pytest.mark.parametrize("v2, soc, low", [("mixed_float16", None, F16), ("fp16", None, F16),
                                          ("mixed_bfloat16", "Ascend910B3", BF16)])
def test_mlp_matches_float32_within_rounding_bound(v2, soc, low):
    """Relative error bound: each rounding point adds at most u (unit roundoff) relative error, and errors pass
    through tanh (slope <= 1) and matmuls whose weights have unit row norm without growing. A layer has four
    rounding points (matmul operands, product, bias sum; tanh rounds its own result), three layers make 12, so
    the normwise error stays below 12u (measured: about 1.4u). It must also be clearly non-zero, or the pass
    did not round anything."""
    rng = np.random.default_rng(5)
    graph_def = _mlp(rng)
    feeds = {"x:0": rng.uniform(-1, 1, (16, 64)).astype(np.float32)}
    want = run(graph_def, "act2:0", feeds)
    got = fetch_user_tensor(rewrite(graph_def, mode(v2, soc=soc)), "act2:0", feeds).astype(np.float32)
    u = UNIT_ROUNDOFF[low]
    relative = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert u / 8 < relative < 12 * u
    probs = fetch_user_tensor(rewrite(graph_def, mode(v2, soc=soc)), "probs:0", feeds).astype(np.float32)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=64 * u)


def test_force_fp32_cube_output_is_not_rounded():
    rng = np.random.default_rng(3)
    x, w = _grid_values(rng, (4, 8)), _grid_values(rng, (8, 8))
    w = w * np.float32(1.0001)   # off the grid: products need more than float16 to hold

    def fn():
        tf.matmul(tf.compat.v1.placeholder(tf.float32, x.shape, name="x"), tf.constant(w), name="mm")

    got = fetch_user_tensor(rewrite(build(fn), mode("cube_fp16in_fp32out")), "mm:0", {"x:0": x})
    want = x.astype(F16).astype(np.float32) @ w.astype(F16).astype(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert not np.array_equal(got, got.astype(F16).astype(np.float32))
