"""Where a first step's time goes inside TensorFlow's C++: a `perf` profile of one time-to-first-step.

    python -m benchmarks.perf_first_step small_cnn                 # plain float32 and mixed_float16, full size
    python -m benchmarks.perf_first_step resnet50 npu_force_fp16 --out FILE

Part f times the first step by the calls that make it up; what happens inside TensorFlow's session calls (grappler,
oneDNN's layout pass, executor creation) needs a native profiler. For each configuration (plain_fp32 first, as the
baseline) one fresh process builds the model of part f's full mode, then runs session creation + the initializer
run + the first training run with `perf record` switched on around exactly that (perf's --control fifo, so
importing TensorFlow and building the graph are not sampled). The report lists, per configuration, the first
step's wall time and the inclusive share of the C++ frames that bound it. Needs Linux perf (`perf` on PATH, e.g.
Debian's linux-perf) and permission to sample the process (perf_event_paranoid <= 2 for one's own processes).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.configs import CONFIGS
from benchmarks.run import SETTINGS, at_least, git_commit

# Frames whose inclusive share answers "where does the first step go", by substring of the symbol.
FRAMES = (
    ("DirectSession::CreateExecutors", "callable creation: pruning, grappler, passes, executors"),
    ("RunMetaOptimizer", "grappler"),
    ("MklLayoutRewritePass::Run", "oneDNN layout pass"),
    ("mkl_op_registry::IsMklOp", "  of which kernel-registry lookups per (op type, dtype)"),
    ("GetRegisteredKernelsForOp(", "every scan of the whole kernel registry"),
    ("TF_GetRegisteredKernelsForOp", "  of which npu_bridge's own kernel queries"),
    ("DirectSession::Extend", "graph extension"),
    ("TF_GraphImportGraphDefWithResults", "import of the inner graph"),
    ("ExecutorState", "running the ops"),
)
PYTHON = "libpython (self)"   # samples whose own frame is the Python interpreter: Python code, ours and TensorFlow's


def _child(model, config):
    """Runs inside `perf record`: build the model, then the first step with sampling switched on around it."""
    from benchmarks.child import _quiet_tf, _training_model
    from benchmarks.configs import is_emulated, session_config

    tf = _quiet_tf()
    if is_emulated(config):
        import npu_bridge
        npu_bridge.activate()
    name, size = SETTINGS["full"]["first_models"][model]
    built, init = _training_model({"model": name, "size": size})
    with open(os.environ["PERF_CTL"], "w") as control, open(os.environ["PERF_ACK"]) as ack:
        def perf(command):
            control.write(command + "\n")
            control.flush()
            ack.readline()

        perf("enable")
        start = time.perf_counter()
        sess = tf.compat.v1.Session(graph=built.graph, config=session_config(config))
        sess.run(init)
        sess.run([built.train_op, built.loss], built.feeds)
        seconds = time.perf_counter() - start
        perf("disable")
    print(f"@@FIRST {seconds:.4f} {tf.__version__}", flush=True)


def _median_run(profiles):
    """(median wall time, {frame: median share}) over rounds: one sampled first step moves by several percent."""
    keys = {key for _, shares, _ in profiles for key in shares}
    return (statistics.median(seconds for seconds, _, _ in profiles),
            {key: statistics.median(shares.get(key, 0.0) for _, shares, _ in profiles) for key in keys})


def _profile(model, config, prefix):
    control, ack, data = (f"{prefix}.{suffix}" for suffix in ("ctl", "ack", "data"))
    os.mkfifo(control)
    os.mkfifo(ack)
    env = dict(os.environ, PERF_CTL=control, PERF_ACK=ack, TF_CPP_MIN_LOG_LEVEL="2")
    command = ["perf", "record", "-q", "-g", "--call-graph=fp", "-F", "5000", "-D", "-1",
               "--control", f"fifo:{control},{ack}", "-o", data,
               sys.executable, "-m", "benchmarks.perf_first_step", "--child", model, config]
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    marks = [line for line in run.stdout.splitlines() if line.startswith("@@FIRST ")]
    if run.returncode != 0 or not marks:
        raise SystemExit(f"perf record of {model} under {config} failed (exit {run.returncode}):\n"
                         f"{run.stderr[-2000:]}")
    report = subprocess.run(["perf", "report", "-i", data, "--children", "--sort", "symbol", "-q", "-g", "none"],
                            capture_output=True, text=True, check=True).stdout
    shares = _shares(report)
    by_library = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso", "-q", "-g", "none"],
                                capture_output=True, text=True, check=True).stdout
    shares[PYTHON] = sum(float(line.split()[0].rstrip("%")) for line in by_library.splitlines()
                         if "libpython" in line)
    _, seconds, version = marks[0].split()
    return float(seconds), shares, version


def _shares(report):
    """The largest inclusive share of a symbol containing each FRAMES substring (perf lists each symbol once per
    distinct name; templated duplicates take the largest)."""
    shares = {}
    for line in report.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[0].endswith("%"):
            continue
        share = float(fields[0].rstrip("%"))
        for key, _ in FRAMES:
            if key in line and share > shares.get(key, 0.0):
                shares[key] = share
    return shares


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf_first_step", description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(SETTINGS["full"]["first_models"]))
    parser.add_argument("configs", nargs="*", default=["npu_mixed_float16"],
                        metavar="CONFIG", help="configurations after plain_fp32 (default: npu_mixed_float16; one of "
                                               f"{', '.join(sorted(CONFIGS))})")
    parser.add_argument("--rounds", type=at_least(1), default=3, help="profiles per configuration, medians reported")
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [config for config in args.configs if config not in CONFIGS]
    if unknown:     # not argparse's choices: with nargs="*" it also checks the default list as one value
        parser.error(f"unknown configuration {', '.join(unknown)} (choose from {', '.join(sorted(CONFIGS))})")
    if args.child:
        _child(args.model, args.configs[0])
        return 0
    if shutil.which("perf") is None:
        raise SystemExit("perf is not on PATH: install Linux perf (Debian: linux-perf) to profile the first step")
    configs = ["plain_fp32"] + [c for c in args.configs if c != "plain_fp32"]
    runs = {config: [] for config in configs}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            for config in configs:
                runs[config].append(_profile(args.model, config, os.path.join(folder, f"{round_}-{config}")))
    results = {config: _median_run(profiles) for config, profiles in runs.items()}
    version = runs["plain_fp32"][0][2]
    lines = [f"# perf profile of one first step: {args.model} (part f's full size)", "",
             "Inclusive share of the first step's samples (perf record -F 5000 --call-graph=fp, sampling on only "
             "around session creation + initializer run + first training run), each a median of "
             f"{args.rounds} fresh processes, configurations in alternation; TensorFlow {version}, "
             f"npu_bridge commit {git_commit()}; command `python -m benchmarks.perf_first_step "
             f"{' '.join(sys.argv[1:])}`.", "",
             "| frame | what | " + " | ".join(configs) + " |",
             "|---|---|" + "---|" * len(configs),
             "| (wall time of the first step) | | " + " | ".join(f"{results[c][0]:.3f} s" for c in configs) + " |"]
    for key, what in FRAMES:
        cells = [f"{results[c][1][key]:.1f}%" if results[c][1].get(key) else "-" for c in configs]
        lines.append(f"| `{key}` | {what} | " + " | ".join(cells) + " |")
    lines.append(f"| `{PYTHON}` | the Python interpreter itself | "
                 + " | ".join(f"{results[c][1][PYTHON]:.1f}%" for c in configs) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
