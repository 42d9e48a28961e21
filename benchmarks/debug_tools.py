"""Cost of the precision-debugging tools (npu-debug compare / suggest); not a test.

    python -m benchmarks.debug_tools            # about 2 minutes on 2 cores; writes benchmarks/results/debug-tf<v>.md

a. compare: wall time of one compared step (the step, the float32 reference and the local measurements)
   against one plain float32 step and one emulated step of the same ~200-op training graph, in the same
   process: a single compare_step call (which builds its reference session and local plans), and steps compared
   inside one `comparing` block as `npu-debug compare` runs them (first, then the median of later ones).
b. suggest: replays the search needs on a ~200-op training graph with 1 and with 3 planted culprits (a
   normalization x / sqrt(x*x + 1e-8) after a Relu: 1e-8 is 0 in float16, zeros give 0/0), against the bound
   3n + 3 for n candidate ops, and the search's wall time.
"""
import argparse
import os
import statistics
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_v2_behavior()

import npu_bridge  # noqa: E402
from benchmarks.debug_common import TOLERANCE, npu_config, recorded, searched, timed, write_results  # noqa: E402
from npu_bridge.debug import compare_step, comparing  # noqa: E402

npu_bridge.activate()
LAYERS = 8
WIDTH = 64
BATCH = 32


def build(culprits=()):
    """A LAYERS-deep MLP trained with SGD; layers in `culprits` end in an epsilon normalization."""
    rng = np.random.RandomState(0)
    x = tf.compat.v1.placeholder(tf.float32, [BATCH, WIDTH], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [BATCH, 1], name="y")
    hidden = x
    for layer in range(LAYERS):
        w = tf.compat.v1.get_variable(f"w{layer}", initializer=(rng.randn(WIDTH, WIDTH) / np.sqrt(WIDTH)).astype(
            np.float32))
        b = tf.compat.v1.get_variable(f"b{layer}", initializer=np.zeros(WIDTH, np.float32))
        hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(hidden, w), b))
        if layer in culprits:
            hidden = hidden / tf.sqrt(tf.square(hidden) + 1e-8) * 0.5
    w = tf.compat.v1.get_variable("head", initializer=(rng.randn(WIDTH, 1) * 0.1).astype(np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w) - y), name="loss")
    train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    feeds = {x: rng.randn(BATCH, WIDTH).astype(np.float32), y: rng.randn(BATCH, 1).astype(np.float32)}
    return train, loss, feeds


def bench_compare(repeats):
    rows = {}
    for label, mixed in (("plain float32 step", False), ("emulated step (allow_mix_precision)", True)):
        with tf.Graph().as_default():
            train, loss, feeds = build()
            with tf.compat.v1.Session(config=npu_config(mixed)) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                for _ in range(3):
                    sess.run([train, loss], feeds)
                rows[label] = statistics.median(timed(lambda: sess.run([train, loss], feeds), repeats * 5))
                if mixed:
                    n_ops = npu_bridge.runtime.last_report(sess).n_ops
                    rows["compare_step (one call: builds the reference)"] = timed(
                        lambda: compare_step(sess, [train, loss], feeds), 1)[0]
                    with comparing() as seen:      # every step, as npu-debug compare does for its --steps
                        times = timed(lambda: sess.run([train, loss], feeds), repeats + 1)
                    assert len(seen.comparisons) == repeats + 1
                    rows["compared step (npu-debug compare), first"] = times[0]
                    rows["compared step (npu-debug compare), median of later"] = statistics.median(times[1:])
    return n_ops, rows


def bench_suggest(culprits, steps):
    with tf.Graph().as_default():
        train, loss, feeds = build(culprits)
        with tf.compat.v1.Session(config=npu_config(True)) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            recording, _ = recorded(steps, lambda: [sess.run([train, loss], feeds) for _ in range(steps)])
            n_ops = npu_bridge.runtime.last_report(sess).n_ops
    with tempfile.TemporaryDirectory() as work:
        search, suggestion, outcome, elapsed = searched(recording, work, max_replays=1000)
    if suggestion is None:
        raise RuntimeError(outcome)
    return {"n_ops": n_ops, "candidates": len(search.candidates), "replays": suggestion.replays,
            "bound": suggestion.bound, "blocked": suggestion.blocked, "seconds": elapsed,
            "fixed": TOLERANCE.holds(suggestion.fixed, suggestion.float32)}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.debug_tools")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3, help="steps suggest records and replays")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    n_ops, rows = bench_compare(args.repeats)
    plain = rows["plain float32 step"]
    lines = [f"## a. compare: one compared step against one float32 step ({n_ops}-op MLP training graph, "
             f"{LAYERS} layers of {WIDTH}, batch {BATCH})", "", "| step | ms | x plain float32 |", "|---|---|---|"]
    lines += [f"| {label} | {seconds * 1e3:.2f} | {seconds / plain:.1f} |" for label, seconds in rows.items()]
    lines += ["", f"## b. suggest: replays of {args.steps} recorded steps (bound 3n + 3 for n candidate ops)", "",
              "| planted culprits | graph ops | candidates n | replays | bound | kept in float32 | within tolerance "
              "after | search s |", "|---|---|---|---|---|---|---|---|"]
    for culprits in ((3,), (1, 4, 6)):
        result = bench_suggest(culprits, args.steps)
        lines.append(f"| {len(culprits)} (layers {', '.join(map(str, culprits))}) | {result['n_ops']} | "
                     f"{result['candidates']} | {result['replays']} | {result['bound']} | "
                     f"{', '.join(result['blocked'])} | {result['fixed']} | {result['seconds']:.1f} |")
    write_results("npu-debug cost", lines, args.out, f"debug-tf{tf.__version__}.md")


if __name__ == "__main__":
    main()
