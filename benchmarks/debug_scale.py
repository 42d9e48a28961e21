"""npu-debug compare and suggest on a ~500-op and a ResNet-50-size training graph: time, memory, what they write.

    python -m benchmarks.debug_scale             # full: ResNet-50 at 224x224, base width 64, batch 2
    python -m benchmarks.debug_scale --quick     # ResNet-50 topology at 32x32, base width 16 (a check that it runs)

Each (tool, graph) runs in its own child process (`--child TOOL GRAPH`), so its peak RSS is its own:
- compare: one training step compared as `npu-debug compare` compares it (the step, the float32 reference built
  on first use, the local measurements), then the CSV and .vis written; the time of that compared step against
  the plain emulated step, and the bytes written;
- suggest: the recording of 2 steps and the search (`--max-replays`, full 200, quick 6); its time, replays and
  bound, and the recording's size (variables and per-step feeds held in memory).
Writes `benchmarks/results/debug-scale-<mode>-tf<version>.md`. Not a test.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

GRAPHS = ("mlp_500", "resnet50")


def _model(name, quick):
    from benchmarks import models

    if name == "mlp_500":
        return models.mlp_stack(models.depth_for_nodes(models.mlp_stack, 500))
    if quick:
        return models.resnet50(batch=2, image=32, base_width=16, classes=10)
    return models.resnet50(batch=2, image=224, base_width=64)


def _folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(folder) for name in names)


def _child_compare(model):
    import tensorflow as tf

    from benchmarks.debug_common import npu_config, timed
    from npu_bridge.debug import comparing
    from npu_bridge.debug.compare import write_outputs

    with model.graph.as_default(), tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        fetches = [model.train_op, model.loss]
        sess.run(fetches, model.feeds)
        (plain,) = timed(lambda: sess.run(fetches, model.feeds))
        with comparing() as seen:
            (compared,) = timed(lambda: sess.run(fetches, model.feeds))
        (comparison,) = seen.comparisons
        with tempfile.TemporaryDirectory() as out:
            write_outputs(comparison, out, "training", plot=False)
            written = _folder_bytes(out)
    return {"ops": model.n_nodes, "seconds": compared, "plain_step_seconds": plain, "rows": len(comparison.rows),
            "bytes": written}


def _child_suggest(model, max_replays):
    import numpy as np
    import tensorflow as tf

    from benchmarks.debug_common import npu_config, recorded, searched

    with model.graph.as_default(), tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        recording, recording_seconds = recorded(
            2, lambda: [sess.run([model.train_op, model.loss], model.feeds) for _ in range(2)])
    size = sum(np.asarray(v).nbytes for v in recording.variables.values()) + \
        sum(np.asarray(v).nbytes for step in recording.steps for v in step.values())
    with tempfile.TemporaryDirectory() as work:
        search, _, outcome, search_seconds = searched(recording, work, max_replays)
    return {"ops": model.n_nodes, "seconds": recording_seconds + search_seconds, "replays": search.replay.count,
            "bound": search.bound, "bytes": size, "candidates": len(search.candidates), "outcome": outcome}


def child(tool, graph, quick):
    import npu_bridge.runtime

    npu_bridge.runtime.activate()
    model = _model(graph, quick)
    result = _child_compare(model) if tool == "compare" else _child_suggest(model, 6 if quick else 200)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _run_child(tool, graph, quick, timeout):
    command = [sys.executable, "-m", "benchmarks.debug_scale", "--child", tool, graph] + (["--quick"] if quick else [])
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return {"error": f"exit code {done.returncode}: {lines[-1] if lines else ''}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.debug_scale")
    parser.add_argument("--quick", action="store_true", help="ResNet-50 at 32x32, base width 16; 6 replays")
    parser.add_argument("--child", nargs=2, metavar=("TOOL", "GRAPH"), help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=3600, help="per child, seconds (default 3600)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    if args.child:
        tool, graph = args.child
        if tool not in ("compare", "suggest") or graph not in GRAPHS:
            parser.error(f"--child {tool} {graph}: expected compare|suggest and one of {', '.join(GRAPHS)}")
        child(tool, graph, args.quick)
        return 0
    import tensorflow as tf

    from benchmarks.debug_common import write_results

    mode = "quick" if args.quick else "full"
    lines = ["| tool | graph | graph ops | time s | peak RSS MB | data | detail |", "|---|---|---|---|---|---|---|"]
    for tool in ("compare", "suggest"):
        for graph in GRAPHS:
            result = _run_child(tool, graph, args.quick, args.timeout)
            if "error" in result:
                lines.append(f"| {tool} | {graph} | | | | | {result['error']} |")
                continue
            if tool == "compare":
                detail = (f"one compared step, {result['rows']} tensors; the plain emulated step "
                          f"{result['plain_step_seconds']:.3f} s")
                data = f"{result['bytes'] / 1e6:.2f} MB written (CSV + .vis)"
            else:
                detail = (f"2 steps recorded, {result['replays']} replays (bound {result['bound']}, "
                          f"{result['candidates']} candidate ops): {result['outcome']}")
                data = f"{result['bytes'] / 1e6:.2f} MB recorded (variables + feeds)"
            lines.append(f"| {tool} | {graph} | {result['ops']} | {result['seconds']:.1f} | "
                         f"{result['peak_rss_mb']:.0f} | {data} | {detail} |")
    write_results(f"npu-debug compare and suggest at scale ({mode})", lines, args.out,
                  f"debug-scale-{mode}-tf{tf.__version__}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
