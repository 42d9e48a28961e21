"""What the two debug-tool benchmarks (debug_tools.py, debug_scale.py) measure the same way.

- `npu_config`: the session config both time (allow_mix_precision, or plain float32);
- `timed`: wall seconds of each of `repeats` calls;
- `recorded`: a CaptureObserver's recording of the steps a function runs, as `npu-debug suggest` records them;
- `searched`: suggest's search over a recording, timed, its answer or why there is none;
- `write_results`: the markdown table under a header naming the TensorFlow version, time and load average.
"""
import os
import sys
import time

import tensorflow as tf

from npu_bridge.debug.capture import CaptureObserver
from npu_bridge.debug.suggest import Search, SuggestError, Tolerance
from npu_bridge.runtime import observers

TOLERANCE = Tolerance(1e-2, 1e-5)       # suggest's default --rtol / --atol


def npu_config(mixed=True):
    config = tf.compat.v1.ConfigProto()
    if mixed:
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["use_off_line"].b = True
        custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
    return config


def timed(function, repeats=1):
    """[seconds] of `repeats` calls of `function`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def recorded(steps, run):
    """(recording, seconds): `run()` under a CaptureObserver of `steps` steps."""
    observer = CaptureObserver(steps)
    observers.add_observer(observer)
    try:
        (seconds,) = timed(run)
    finally:
        observers.remove_observer(observer)
        observer.close()
    return observer.recording, seconds


def searched(recording, work_dir, max_replays):
    """(search, suggestion or None, outcome text, seconds) of suggest's search over `recording`."""
    search = Search(recording, TOLERANCE, work_dir, max_replays)
    start = time.perf_counter()
    try:
        suggestion = search.run()
        outcome = f"{len(suggestion.blocked)} ops kept in float32"
    except SuggestError as error:       # a row too: how long it took to say so
        suggestion, outcome = None, f"no suggestion ({str(error)[:160]}...)"
    return search, suggestion, outcome, time.perf_counter() - start


def write_results(title, lines, out_dir, name):
    """Print and write `# title (TensorFlow v, time, load average)` and `lines` to out_dir/name."""
    header = (f"# {title} (TensorFlow {tf.__version__}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
              f"load average {os.getloadavg()[0]:.1f})")
    text = "\n".join([header, "", *lines]) + "\n"
    print(text)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    with open(path, "w") as handle:
        handle.write(text)
    print(f"written {path}", file=sys.stderr)
    return path
