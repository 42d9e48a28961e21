"""What one rounding point costs on this CPU, kernel by kernel, and what XLA would save on it.

    python -m benchmarks.rounding_passes [--elements N] [--out FILE]     # about a minute

The steady step of the emulation is bound by the passes it makes over a tensor at each rounding point: a Cast to
float16, one back to float32 for float32 readers, and in saturation mode a clamp to +-65504 (DESIGN.md, Speed).
This times each of those kernels on N float32 elements (default one million) in one plain TensorFlow session,
against a one-pass reference (Neg), as the median of many runs minus the median of running the read alone. It also
times the whole saturating round trip (ClipByValue, Cast to float16, Cast back) as TensorFlow's kernels and as
one XLA cluster (jit_scope), reports the cluster's compile time on its first run, and checks that both give the
same bits on values that probe the edges (overflow, 65504 and 65520, NaN, infinities, float16 subnormals).
Writes benchmarks/results/rounding-passes-tf<version>.md unless --out says otherwise.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

from benchmarks.run import at_least, git_commit
from benchmarks.runner import REPO_ROOT

FLOAT16_MAX = 65504.0


_EDGES = np.array([65504.0, 65519.0, 65520.0, 65536.0, 1e6, -65504.0, -65520.0, -1e38, np.nan, np.inf, -np.inf,
                   6e-8, -6e-8, 2.9e-8, 0.0, -0.0], np.float32)
_EDGE_COUNT = _EDGES.size


def _edge_values(n, seed=0):
    """n float32 values: mostly normal draws at several scales, plus the values where saturation and rounding
    differ or NaN/inf propagate."""
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal(n) * rng.choice([1e-6, 1.0, 1e3, 1e5], n)).astype(np.float32)
    values[:_EDGE_COUNT] = _EDGES
    return values


def _median_seconds(sess, probe, runs):
    """Median time of a run fetching `probe`, one element of the measured tensor: the kernel must produce all of
    it, and the fetch copies nothing large (fetching the whole output would add a copy; running it as a target
    let XLA's cluster look free)."""
    for _ in range(5):
        sess.run(probe)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(probe)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(elements, runs):
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    graph = tf.Graph()
    with graph.as_default():
        single = tf.Variable(_edge_values(elements), name="single")
        half = tf.Variable(_edge_values(elements).astype(np.float16), name="half")
        x, h = single.read_value(), half.read_value()
        low, high = -FLOAT16_MAX, FLOAT16_MAX

        def round_trip(t):
            return tf.cast(tf.cast(tf.clip_by_value(t, low, high), tf.float16), tf.float32)

        unfused = round_trip(x)
        # name -> (the variable read it starts from, its output): the read's own time is subtracted.
        kernels = {
            "Neg float32 (one pass, reference)": (x, -x),
            "Cast float32 -> float16": (x, tf.cast(x, tf.float16)),
            "Cast float16 -> float32": (h, tf.cast(h, tf.float32)),
            "ClipByValue float32 (+-65504)": (x, tf.clip_by_value(x, low, high)),
            "Minimum + Maximum float32": (x, tf.maximum(tf.minimum(x, high), low)),
            "Minimum + Maximum float16": (h, tf.maximum(tf.minimum(h, np.float16(high)), np.float16(low))),
            "ClipByValue float16": (h, tf.clip_by_value(h, np.float16(low), np.float16(high))),
            "round trip: ClipByValue, Cast, Cast (TensorFlow's kernels)": (x, unfused),
        }
        xla_error = None
        try:
            from tensorflow.python.compiler.xla import jit

            with jit.experimental_jit_scope(True):
                fused = round_trip(tf.identity(x))
        except (ImportError, AttributeError) as error:
            fused, xla_error = None, str(error)
        init = tf.compat.v1.global_variables_initializer()
        read_probes = {read.name: read[0] for read in (x, h)}
        probes = {name: (read.name, output[0]) for name, (read, output) in kernels.items()}
        fused_probe = None if fused is None else fused[0]
    sess = tf.compat.v1.Session(graph=graph)
    sess.run(init)
    read_seconds = {name: _median_seconds(sess, probe, runs) for name, probe in read_probes.items()}
    rows = []
    for name, (read, probe) in probes.items():
        rows.append((name, (_median_seconds(sess, probe, runs) - read_seconds[read]) * 1e3 * 1e6 / elements, ""))
    if fused is None:
        rows.append(("round trip as one XLA cluster", None, f"XLA unavailable: {xla_error}"))
    else:
        start = time.perf_counter()
        try:
            sess.run(fused_probe)
        except tf.errors.OpError as error:
            rows.append(("round trip as one XLA cluster", None, f"XLA failed: {error.message.splitlines()[0]}"))
        else:
            compile_ms = (time.perf_counter() - start) * 1e3
            ours, xla = sess.run([unfused, fused])
            same = np.array_equal(ours.view(np.uint32), xla.view(np.uint32))
            note = (f"first run (compiles) {compile_ms:.0f} ms; "
                    f"{'same bits as' if same else 'DIFFERENT bits from'} TensorFlow's kernels")
            rows.append(("round trip as one XLA cluster",
                         (_median_seconds(sess, fused_probe, runs) - read_seconds[x.name]) * 1e3 * 1e6 / elements, note))
    return tf.__version__, rows


def render(version, rows, elements, runs):
    lines = ["# Cost of one rounding point's passes", "",
             f"- TensorFlow {version}, {os.cpu_count()} logical cores, npu_bridge commit {git_commit()}; "
             f"command `python -m benchmarks.rounding_passes {' '.join(sys.argv[1:])}`",
             f"- {elements:,} elements; median of {runs} runs minus the median of reading the variable alone; "
             "one plain TensorFlow session (TensorFlow's default threads)", "",
             "| kernel | ms per million elements | note |", "|---|---|---|"]
    for name, cost, note in rows:
        lines.append(f"| {name} | {'-' if cost is None else f'{cost:.3f}'} | {note} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rounding_passes", description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=at_least(_EDGE_COUNT), default=1 << 20,
                        help=f"float32 elements per kernel (at least {_EDGE_COUNT}, the edge values)")
    parser.add_argument("--runs", type=at_least(1), default=200, help="timed runs per kernel, median kept")
    parser.add_argument("--out", help="file to write (default benchmarks/results/rounding-passes-tf<version>.md)")
    args = parser.parse_args(argv)
    version, rows = measure(args.elements, args.runs)
    text = render(version, rows, args.elements, args.runs)
    print(text)
    out = args.out or os.path.join(REPO_ROOT, "benchmarks", "results", f"rounding-passes-tf{version}.md")
    with open(out, "w") as handle:
        handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
