"""Measurements that run inside a child process: `python -m benchmarks.child <task> <json arguments>`.

Each configuration runs in its own process so that a crash (TF 2.21's auto_mixed_precision_cpu segfaults on a
ResNet-50 training graph) is recorded instead of ending the benchmark, and so that peak RSS belongs to one
session only. Results go to stdout as lines `@@BENCH <json>`; anything else on stdout or stderr is TensorFlow's.
"""
import cProfile
import gc
import io
import json
import os
import pstats
import re
import resource
import statistics
import sys
import tempfile
import time

MARK = "@@BENCH "


def emit(**record):
    print(MARK + json.dumps(record), flush=True)


def _quiet_tf():
    import tensorflow as tf

    tf.compat.v1.disable_v2_behavior()
    return tf


def environment():
    """What decides the speed of TensorFlow on this machine: versions, thread pools, oneDNN."""
    import numpy as np
    import tensorflow as tf

    variables = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                 "TF_NUM_INTEROP_THREADS", "TF_ENABLE_ONEDNN_OPTS", "KMP_AFFINITY", "KMP_BLOCKTIME")
    try:
        from tensorflow.python.util import _pywrap_util_port

        onednn = bool(_pywrap_util_port.IsMklEnabled())
    except (ImportError, AttributeError):
        onednn = None
    return {
        "tensorflow": tf.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "thread_env": {name: os.environ.get(name) for name in variables},
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "onednn_enabled": onednn,
        "cpu_count": os.cpu_count(),
    }


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---------------------------------------------------------------------------------------------- rewrite graphs

def task_build_graphs(spec):
    """Write one MetaGraphDef per (family, target size) so that both passes rewrite byte-identical graphs."""
    tf = _quiet_tf()
    from benchmarks import models

    emit(kind="environment", **environment())
    for family, targets in spec["families"].items():
        builder = models.REWRITE_FAMILIES[family]
        for target in targets:
            depth = models.depth_for_nodes(builder, target)
            model = builder(depth)
            meta = tf.compat.v1.train.export_meta_graph(graph=model.graph)
            meta.collection_def["train_op"].node_list.value.append(model.train_op.name)
            path = os.path.join(spec["out_dir"], f"{family}-{depth}.pb")
            with open(path, "wb") as f:
                f.write(meta.SerializeToString())
            emit(kind="graph", family=family, depth=depth, target=target, nodes=len(meta.graph_def.node),
                 path=path)


def _load_meta(path):
    from tensorflow.core.protobuf import meta_graph_pb2

    meta = meta_graph_pb2.MetaGraphDef()
    with open(path, "rb") as f:
        meta.ParseFromString(f.read())
    return meta


def task_rewrite_ours(spec):
    """Time npu_bridge.core.precision.rewrite on each graph: one cold call, then the median of warm calls."""
    _quiet_tf()
    try:
        from npu_bridge.core.options import options_from_config
        from npu_bridge.core.precision import rewrite
    except ImportError as error:
        emit(kind="unavailable", reason=f"{type(error).__name__}: {error}")
        return
    from benchmarks.configs import npu_config

    options = options_from_config(npu_config({"precision_mode_v2": spec["mode"]}))
    for path in spec["paths"]:
        graph_def = _load_meta(path).graph_def
        gc.collect()  # start every graph from a clean heap, not from the previous graph's garbage
        emit(kind="start", path=path)
        try:
            start = time.perf_counter()
            result = rewrite(graph_def, options)
            cold = time.perf_counter() - start
            times, deadline = [], time.perf_counter() + spec.get("budget_s", float("inf"))
            while len(times) < spec["repeats"] and (len(times) < 3 or time.perf_counter() < deadline):
                start = time.perf_counter()
                rewrite(graph_def, options)
                times.append(time.perf_counter() - start)
        except Exception as error:  # a failed rewrite is a result to report, not the end of the benchmark
            emit(kind="rewrite", path=path, error=f"{type(error).__name__}: {error}")
            continue
        report = result.report
        emit(kind="rewrite", path=path, cold_s=cold, times_s=times, min_s=min(times), median_s=statistics.median(times),
             nodes_out=len(result.graph_def.node), n_casts=report.n_casts, n_reduced=report.n_reduced,
             summary=report.summary())
    if spec.get("profile_path") and spec["paths"]:
        graph_def = _load_meta(spec["paths"][-1]).graph_def
        profiler = cProfile.Profile()
        profiler.runcall(rewrite, graph_def, options)
        _write_profile(profiler, spec["profile_path"], f"rewrite({spec['paths'][-1]}, {spec['mode']})")


def _write_profile(profiler, path, title):
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    text.write(f"cProfile of {title}\n\n== by cumulative time\n")
    stats.sort_stats("cumulative").print_stats(30)
    text.write("\n== by own time\n")
    stats.sort_stats("tottime").print_stats(30)
    with open(path, "w") as f:
        f.write(text.getvalue())


# TensorFlow's meta optimizer logs each pass's own time at TF_CPP_VMODULE=meta_optimizer=1, on 2.15 and 2.21:
#   meta_optimizer.cc:973] auto_mixed_precision_cpu: Graph size after: 133 nodes (62), 159 edges (62), time = 4.075ms.
TF_PASS_LINE = re.compile(r"auto_mixed_precision_cpu: Graph size after: (\d+) nodes \((-?\d+)\), (\d+) edges "
                          r"\((-?\d+)\), time = ([0-9.]+) ?ms")
TF_CASTS_LINE = re.compile(r"Converted (\d+)/(\d+) nodes to \w+ precision using (\d+) cast")


def _optimize_capturing_log(config, meta):
    """Run grappler once with fd 2 redirected to a file; return the meta optimizer's log text."""
    from tensorflow.python.grappler import tf_optimizer

    with tempfile.TemporaryFile(mode="w+b") as log:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            output = tf_optimizer.OptimizeGraph(config, meta)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        return output, log.read().decode("utf-8", "replace")


def _tf_amp_only_config():
    """A ConfigProto whose grappler runs auto_mixed_precision_cpu once and nothing else."""
    from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2

    config = config_pb2.ConfigProto()
    rewrite = config.graph_options.rewrite_options
    rewrite.optimizers.append("auto_mixed_precision_cpu")
    rewrite.meta_optimizer_iterations = rewriter_config_pb2.RewriterConfig.ONE
    rewrite.min_graph_nodes = -1
    return config


def task_rewrite_tf(spec):
    """Time TensorFlow's auto_mixed_precision_cpu pass alone, as grappler reports it (the pass's own time)."""
    _quiet_tf()
    config = _tf_amp_only_config()
    for path in spec["paths"]:
        meta = _load_meta(path)
        emit(kind="start", path=path)
        times, walls, nodes_out, casts = [], [], None, None
        deadline = time.perf_counter() + spec["budget_s"]
        while len(times) < spec["repeats"] + 1 and (len(times) < 4 or time.perf_counter() < deadline):
            start = time.perf_counter()
            output, log = _optimize_capturing_log(config, meta)
            walls.append(time.perf_counter() - start)
            match = TF_PASS_LINE.search(log)
            if match is None:
                emit(kind="rewrite", path=path, error="no auto_mixed_precision_cpu timing line in the grappler "
                     "log (is TF_CPP_VMODULE=meta_optimizer=1 and TF_CPP_MIN_LOG_LEVEL=0 set?)")
                break
            times.append(float(match.group(5)) / 1000.0)
            nodes_out = len(output.node)
            cast_match = TF_CASTS_LINE.search(log)
            casts = int(cast_match.group(3)) if cast_match else None
        else:
            emit(kind="rewrite", path=path, cold_s=times[0], times_s=times[1:], min_s=min(times[1:]),
                 median_s=statistics.median(times[1:]),
                 wall_median_s=statistics.median(walls[1:]), nodes_out=nodes_out, n_casts=casts)


def _callgrind_instrumentation(state):
    """Switch callgrind's instrumentation of this process "on" or "off" (the process runs under valgrind).

    callgrind_control asks asynchronously; the sleep lets the request land before the measured call starts or
    after it ends, and sleeping executes no instructions, so the counts do not depend on its length.
    """
    import subprocess

    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], capture_output=True, check=True)
    time.sleep(1.5)


def task_instructions(spec):
    """One warm rewrite of one graph, ours or TensorFlow's pass, with callgrind counting only that call.

    For TensorFlow, valgrind's --toggle-collect (set by the parent) narrows the count to the pass's own
    AutoMixedPrecision::Optimize, the same scope as the time grappler logs; for ours it is rewrite() itself.
    """
    _quiet_tf()
    meta = _load_meta(spec["path"])
    if spec["side"] == "ours":
        from benchmarks.configs import npu_config
        from npu_bridge.core.options import options_from_config
        from npu_bridge.core.precision import rewrite

        options = options_from_config(npu_config({"precision_mode_v2": "mixed_float16"}))

        def run():
            rewrite(meta.graph_def, options, log=False)
    else:
        from tensorflow.python.grappler import tf_optimizer

        config = _tf_amp_only_config()

        def run():
            tf_optimizer.OptimizeGraph(config, meta)
    run()                       # warm: lazy imports, op registry and op-library caches
    _callgrind_instrumentation("on")
    run()
    _callgrind_instrumentation("off")
    emit(kind="instructions", path=spec["path"], side=spec["side"])


# ------------------------------------------------------------------------------------------------- step time

def build_step_model(name, size):
    """`size` holds the builder's arguments; for a stack, {"nodes": n} asks for the depth giving about n nodes."""
    from benchmarks import models

    builder = getattr(models, name)
    if "nodes" in size:
        return builder(models.depth_for_nodes(builder, size["nodes"]))
    return builder(**size)


def _training_model(spec):
    """The step model `spec` names, and its variables' initializer."""
    import tensorflow as tf

    model = build_step_model(spec["model"], spec["size"])
    with model.graph.as_default():
        init = tf.compat.v1.global_variables_initializer()
    return model, init


def task_step(spec):
    """One model, one session configuration: first step, then the median of timed steps, then peak RSS."""
    tf = _quiet_tf()
    from benchmarks.configs import is_emulated, session_config

    if is_emulated(spec["config"]):
        import npu_bridge
        npu_bridge.activate()
    v1 = tf.compat.v1
    model, init = _training_model(spec)
    emit(kind="start", model=spec["model"], config=spec["config"], nodes=model.n_nodes)
    rss_before = _peak_rss_mb()
    with v1.Session(graph=model.graph, config=session_config(spec["config"])) as sess:
        sess.run(init)
        fetches = [model.train_op, model.loss]
        start = time.perf_counter()
        _, first_loss = sess.run(fetches, model.feeds)
        first = time.perf_counter() - start
        for _ in range(spec["warmup"]):
            sess.run(fetches, model.feeds)
        times, budget_end = [], time.perf_counter() + spec["budget_s"]
        while len(times) < spec["min_steps"] or (time.perf_counter() < budget_end and len(times) < spec["max_steps"]):
            start = time.perf_counter()
            _, loss = sess.run(fetches, model.feeds)
            times.append(time.perf_counter() - start)
        emulated, report = _emulation_summary(sess) if is_emulated(spec["config"]) else (None, None)
    emit(kind="step", model=spec["model"], config=spec["config"], nodes=model.n_nodes, first_step_s=first,
         steps=len(times), median_s=statistics.median(times), min_s=min(times), first_loss=float(first_loss),
         last_loss=float(loss),
         peak_rss_mb=_peak_rss_mb(), rss_before_session_mb=rss_before, emulated=emulated, emulation=report)


def _emulation_summary(sess):
    """(emulated?, summary): the runtime's report is the proof that the session ran the rewritten graph."""
    try:
        from npu_bridge.runtime import last_report

        report = last_report(sess)
    except Exception as error:  # whatever the runtime raises, the row must say it was not emulated
        return False, f"not emulated: no report ({type(error).__name__}: {error})"
    if report is None:
        return False, "not emulated: last_report returned None"
    return True, report.summary()


def task_saturation(spec):
    """Saturation mode's step-time cost on one model, mixed_float16: one session rewritten in saturation mode (the
    ascend910 default) and one in INF/NaN mode (set_device_sat_mode(1) before its first run), in one process,
    stepping in alternation so load from other processes hits both alike. Reports the ratio of the medians."""
    tf = _quiet_tf()
    import npu_bridge
    npu_bridge.activate()
    from benchmarks.configs import session_config
    from npu_bridge.estimator.npu import npu_plugin
    from npu_bridge.runtime import last_report

    v1 = tf.compat.v1
    model, init = _training_model(spec)
    fetches = [model.train_op, model.loss]
    sessions = {}
    for name, mode in (("saturation", npu_plugin.SATURATION_MODE), ("inf_nan", npu_plugin.INF_NAN_MODE)):
        npu_plugin.set_device_sat_mode(mode)
        sess = sessions[name] = v1.Session(graph=model.graph, config=session_config("npu_mixed_float16"))
        sess.run(init)
        for _ in range(1 + spec["warmup"]):
            sess.run(fetches, model.feeds)
    times = {name: [] for name in sessions}
    budget_end = time.perf_counter() + 2 * spec["budget_s"]
    while len(times["inf_nan"]) < spec["min_steps"] or \
            (time.perf_counter() < budget_end and len(times["inf_nan"]) < spec["max_steps"]):
        for name, sess in sessions.items():
            start = time.perf_counter()
            sess.run(fetches, model.feeds)
            times[name].append(time.perf_counter() - start)
    summaries = {name: last_report(sess).summary() for name, sess in sessions.items()}
    for sess in sessions.values():
        sess.close()
    saturation, inf_nan = statistics.median(times["saturation"]), statistics.median(times["inf_nan"])
    emit(kind="saturation", model=spec["model"], nodes=model.n_nodes, steps=len(times["inf_nan"]),
         saturation_s=saturation, inf_nan_s=inf_nan, ratio=saturation / inf_nan, summaries=summaries)


def task_step_profile(spec):
    """Where the emulated session's step time goes: cProfile of the Python side, then TensorFlow's own per-op
    timings (RunMetadata step stats) of the emulated and of the plain session, grouped by op type and dtype."""
    tf = _quiet_tf()
    import npu_bridge  # noqa: F401
    from benchmarks.configs import session_config

    v1 = tf.compat.v1
    model, init = _training_model(spec)
    fetches = [model.train_op, model.loss]
    op_tables = {}
    for config in (spec["config"], "plain_fp32"):
        with v1.Session(graph=model.graph, config=session_config(config)) as sess:
            sess.run(init)
            if config == spec["config"]:
                profiler = cProfile.Profile()
                profiler.runcall(sess.run, fetches, model.feeds)
                _write_profile(profiler, spec["first_path"], f"first step of {spec['model']} under {config}")
                profiler = cProfile.Profile()
                profiler.enable()
                for _ in range(spec["steps"]):
                    sess.run(fetches, model.feeds)
                profiler.disable()
                _write_profile(profiler, spec["steps_path"], f"{spec['steps']} steps of {spec['model']} under {config}")
            op_tables[config] = _op_times(sess, fetches, model.feeds, spec["steps"])
    with open(spec["steps_path"], "a") as f:
        for config, table in op_tables.items():
            total = sum(table.values())
            f.write(f"\n== TensorFlow per-op time under {config}, {spec['steps']} traced steps: "
                    f"{total / 1e3:.1f} ms of kernel time, by (op type, output dtype)\n")
            for (op_type, dtype), micros in sorted(table.items(), key=lambda kv: -kv[1])[:25]:
                f.write(f"{micros / 1e3:10.2f} ms {100 * micros / total:5.1f}%  {op_type} {dtype}\n")
    emit(kind="profile", paths=[spec["first_path"], spec["steps_path"]])


def _op_times(sess, fetches, feeds, steps):
    """Sum of kernel times per (op type, first output dtype) over `steps` traced runs."""
    import tensorflow as tf
    from tensorflow.core.protobuf import config_pb2

    options = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE)
    table = {}
    for _ in range(steps):
        metadata = config_pb2.RunMetadata()
        sess.run(fetches, feeds, options=options, run_metadata=metadata)
        for device in metadata.step_stats.dev_stats:
            for node in device.node_stats:
                label = node.timeline_label
                op_type = label.split(" = ", 1)[1].split("(", 1)[0] if " = " in label else node.node_name
                dtype = (tf.dtypes.as_dtype(node.output[0].tensor_description.dtype).name
                         if node.output and node.output[0].tensor_description.dtype else "-")
                key = (op_type, dtype)
                table[key] = table.get(key, 0) + node.op_end_rel_micros - node.op_start_rel_micros
    return table


# ------------------------------------------------------------------------------------------ time to first step

class _PartTimer:
    """Exclusive wall time per part: a wrapped call's time, minus the time of wrapped calls made inside it."""

    def __init__(self):
        self.parts = {}
        self._stack = []

    def wrap(self, owner, attribute, part):
        original = getattr(owner, attribute, None)
        if original is None:
            return
        timer = self

        def timed(*args, **kwargs):
            timer._stack.append(0.0)
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.perf_counter() - start
                inner = timer._stack.pop()
                timer.parts[part] = timer.parts.get(part, 0.0) + spent - inner
                if timer._stack:
                    timer._stack[-1] += spent

        setattr(owner, attribute, timed)


def _time_parts():
    """Wrap the calls that make up a first step, in TensorFlow and in the emulated session, to time each part.

    The parts: serializing the user's graph, our rewrite, the import into the inner graph (C++ import and the
    Python Operation objects), state transfer, TensorFlow's extension of a session's graph, its pruning +
    grappler + executor creation (TF_SessionMakeCallable; a plain Session.run does the same inside
    TF_SessionRun_wrapper, reported as "run" there), and the run itself.
    """
    import tensorflow as tf
    from tensorflow.python.client import pywrap_tf_session as c_session
    from tensorflow.python.framework import importer, ops

    timer = _PartTimer()
    timer.wrap(ops.Graph, "as_graph_def", "serialize user graph")
    timer.wrap(ops.Graph, "_as_graph_def", "serialize user graph")
    timer.wrap(importer, "_import_graph_def_internal", "import into inner graph")
    timer.wrap(ops.Graph, "_add_new_tf_operations", "import into inner graph")
    timer.wrap(c_session, "ExtendSession", "extend session graph (TF)")
    timer.wrap(c_session, "TF_SessionMakeCallable", "optimise + create executors (TF)")
    timer.wrap(c_session, "TF_SessionRunCallable", "run")
    timer.wrap(c_session, "TF_SessionRun_wrapper", "run")
    try:
        from npu_bridge.runtime import emulated, state_transfer

        timer.wrap(emulated, "rewrite", "rewrite (our pass)")
        timer.wrap(state_transfer, "read_variables", "state transfer")
        timer.wrap(state_transfer, "write_variables", "state transfer")
    except ImportError:
        pass
    del tf
    return timer


def task_first_step(spec):
    """Time to first step in a fresh process: session creation + the initializer run + the first training run,
    each a part of what a user waits for before training starts; with the time split into its parts."""
    tf = _quiet_tf()
    from benchmarks.configs import is_emulated, session_config

    if is_emulated(spec["config"]):
        import npu_bridge
        npu_bridge.activate()
    v1 = tf.compat.v1
    model, init = _training_model(spec)
    nodes = model.n_nodes
    emit(kind="start", model=spec["model"], config=spec["config"], nodes=nodes)
    timer = _time_parts()
    gc.collect()
    start = time.perf_counter()
    sess = v1.Session(graph=model.graph, config=session_config(spec["config"]))
    created = time.perf_counter()
    sess.run(init)
    initialized = time.perf_counter()
    _, loss = sess.run([model.train_op, model.loss], model.feeds)
    first = time.perf_counter()
    parts = dict(timer.parts)
    emulated, report = _emulation_summary(sess) if is_emulated(spec["config"]) else (None, None)
    sess.close()
    parts["other"] = (first - start) - sum(parts.values())
    emit(kind="first_step", model=spec["model"], config=spec["config"], nodes=nodes, total_s=first - start,
         create_s=created - start, init_s=initialized - created, first_run_s=first - initialized,
         parts=parts, first_loss=float(loss), emulated=emulated, emulation=report)


# ------------------------------------------------------------------------------------------------------ cliffs

def task_cliff_fetch_sets(spec):
    """Cycle `sets` distinct fetch sets over one graph, `passes` times; time per run of the later passes
    (the first pass builds each plan / executor, as any session must)."""
    tf = _quiet_tf()
    from benchmarks.configs import base_config, npu_config

    import numpy as np

    if spec["emulated"]:
        import npu_bridge  # noqa: F401
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [4], name="x")
        outputs = [x * float(i) + 1.0 for i in range(spec["sets"])]
    config = npu_config({"precision_mode_v2": "mixed_float16"}) if spec["emulated"] else base_config()
    value = np.arange(4, dtype=np.float32)
    with v1.Session(graph=graph, config=config) as sess:
        start = time.perf_counter()
        for output in outputs:
            sess.run(output, {x: value})
        first_pass = (time.perf_counter() - start) / len(outputs)
        later = []
        for _ in range(spec["passes"]):
            start = time.perf_counter()
            for output in outputs:
                sess.run(output, {x: value})
            later.append((time.perf_counter() - start) / len(outputs))
        emulated, report = _emulation_summary(sess) if spec["emulated"] else (None, None)
    emit(kind="cliff", cliff="fetch_sets", emulated=spec["emulated"], sets=spec["sets"], first_pass_s=first_pass,
         per_run_s=statistics.median(later), passes_s=later, emulation=report, emulated_ok=emulated)


def task_cliff_grow(spec):
    """A script that adds an op to a trained graph and runs it, `additions` times: time per addition + run."""
    tf = _quiet_tf()
    from benchmarks.configs import base_config, npu_config

    if spec["emulated"]:
        import npu_bridge  # noqa: F401
    v1 = tf.compat.v1
    model = build_step_model("mlp_stack", {"nodes": spec["nodes"]})
    with model.graph.as_default():
        init = v1.global_variables_initializer()
    config = npu_config({"precision_mode_v2": "mixed_float16"}) if spec["emulated"] else base_config()
    with v1.Session(graph=model.graph, config=config) as sess:
        sess.run(init)
        sess.run([model.train_op, model.loss], model.feeds)
        times = []
        for i in range(spec["additions"]):
            start = time.perf_counter()
            with model.graph.as_default():
                added = model.loss * float(i + 2)
            sess.run(added, model.feeds)
            times.append(time.perf_counter() - start)
        emulated, report = _emulation_summary(sess) if spec["emulated"] else (None, None)
    emit(kind="cliff", cliff="grow", emulated=spec["emulated"], nodes=model.n_nodes, additions=spec["additions"],
         per_run_s=statistics.median(times), total_s=sum(times), first_s=times[0], emulation=report,
         emulated_ok=emulated)


# -------------------------------------------------------------------------------------------- wrapper overhead

def _block_us(run, x, value, runs):
    start = time.perf_counter()
    for _ in range(runs):
        run({x: value})
    return (time.perf_counter() - start) / runs * 1e6


def task_overhead(spec):
    """Microseconds per Session.run on a tiny graph.

    The emulated process alternates blocks of runs of an emulated and a plain session, so that load from other
    processes hits both alike; the overhead is the median of the paired differences. The plain process never
    imports npu_bridge: comparing it with the plain session of the emulated process gives the cost of the
    Session patch on sessions that do not use the NPU.
    """
    tf = _quiet_tf()
    from benchmarks import models
    from benchmarks.configs import base_config, npu_config

    v1 = tf.compat.v1
    graph, x, y, value = models.tiny()
    if spec["emulated"]:
        import npu_bridge  # noqa: F401
    sessions = {"plain": v1.Session(graph=graph, config=base_config())}
    if spec["emulated"]:
        sessions["emulated"] = v1.Session(graph=graph, config=npu_config({"precision_mode_v2": "mixed_float16"}))
    runners = {name: (lambda feed, sess=sess: sess.run(y, feed)) for name, sess in sessions.items()}
    if spec["emulated"]:
        # TensorFlow's fastest Python path, the raw callable under Session.make_callable (which itself costs as
        # much as Session.run): the floor any session wrapper sits on.
        from tensorflow.core.protobuf import config_pb2

        options = config_pb2.CallableOptions(feed=[x.name], fetch=[y.name])
        call = sessions["plain"]._make_callable_from_options(options)
        runners["plain_callable"] = lambda feed: call(feed[x])
    for run in runners.values():
        _block_us(run, x, value, max(20, spec["runs"] // 5))
    samples = {name: [] for name in runners}
    for _ in range(spec["repeats"]):
        for name, run in runners.items():
            samples[name].append(_block_us(run, x, value, spec["runs"]))
    record = {f"{name}_us": statistics.median(values) for name, values in samples.items()}
    record.update({f"{name}_samples_us": values for name, values in samples.items()})
    if spec["emulated"]:
        record["overhead_us"] = statistics.median(e - p for e, p in zip(samples["emulated"], samples["plain"]))
        record["over_callable_us"] = statistics.median(
            e - c for e, c in zip(samples["emulated"], samples["plain_callable"]))
        record["emulated_ok"], record["emulation"] = _emulation_summary(sessions["emulated"])
    for sess in sessions.values():
        sess.close()
    emit(kind="overhead", emulated=spec["emulated"], **record)


TASKS = {
    "saturation": task_saturation,
    "build_graphs": task_build_graphs,
    "rewrite_ours": task_rewrite_ours,
    "rewrite_tf": task_rewrite_tf,
    "instructions": task_instructions,
    "step": task_step,
    "step_profile": task_step_profile,
    "overhead": task_overhead,
    "first_step": task_first_step,
    "cliff_fetch_sets": task_cliff_fetch_sets,
    "cliff_grow": task_cliff_grow,
}

if __name__ == "__main__":
    TASKS[sys.argv[1]](json.loads(sys.argv[2]))
