"""`npu-debug compare` and `npu-debug suggest`: argument parsing and what each prints; the work is elsewhere.

Both run the user's unmodified script in this process (npu_bridge.launcher.run_script) with a run observer
registered; `suggest` also reruns it in subprocesses to prove its answer.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.options import _parse_dump_step
from npu_bridge.settings import OVERRIDES_ENV
from npu_bridge.debug import scan as scan_module
from npu_bridge.debug.compare import COSINE_ALERT, CompareObserver, write_outputs
from npu_bridge.debug.progress import ops
from npu_bridge.launcher import run_script
from npu_bridge.runtime import observers

MAX_COMPARED_STEPS = 1000
# The float32 run suggest compares with: every op keeps its graph dtype, the script's precision files unset.
FLOAT32_OVERRIDES = {"precision_mode": "must_keep_origin_dtype", "modify_mixlist": "", "customize_dtypes": ""}


class StopScript(BaseException):
    """Raised from an observer to end the script once the tool has what it needs (not an Exception, so the
    script's own `except Exception` does not swallow it)."""


def parse_steps(text):
    """'0|5|10-20' (the adapter's dump_step format and message) -> frozenset of step numbers."""
    ranges = _parse_dump_step(text)
    count = sum(end - start + 1 for start, end in ranges)
    if count > MAX_COMPARED_STEPS:
        raise NpuConfigError(f"--steps '{text}' names {count} steps; compare writes one CSV per step, at most "
                             f"{MAX_COMPARED_STEPS}")
    return frozenset(step for start, end in ranges for step in range(start, end + 1))


def add_script_arguments(parser):
    parser.add_argument("script", help="the training or inference script, run unmodified")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")


def add_compare_arguments(parser):
    parser.add_argument("--steps", metavar="STEPS",
                        help="compare exactly these steps of every graph, in dump_step's format '0|5|10-20' (a step "
                             "is one run of a fetch signature, one loop iteration with iterations_per_loop, counted "
                             "from 0); by default compare scans (see --scan)")
    parser.add_argument("--scan", type=int, default=scan_module.DEFAULT_SCAN, metavar="N",
                        help="without --steps: compare the first N applied steps of the graph that trains (default "
                             f"{scan_module.DEFAULT_SCAN}; steps loss scaling skips are not judged and do not count) "
                             f"and the first {scan_module.OTHER_GRAPH_STEPS} of every other graph, each until an op "
                             "breaks accuracy")
    parser.add_argument("--output", "-out", default="npu_debug_compare", metavar="DIR",
                        help="folder for <graph>_step<N>.csv, .vis (tb-graph-ascend) and .png (with matplotlib): "
                             "graph 'training', or 'graph<K>_fetching_<first fetch>'")
    parser.add_argument("--no-plot", action="store_true", help="write no plot even when matplotlib is installed")
    parser.add_argument("--run-to-end", action="store_true",
                        help="let the script finish (by default it is stopped once the training graph's steps are "
                             "compared)")
    parser.add_argument("-m", "--my-dump", metavar="DUMP",
                        help="instead of running a script, compare two dumps as msaccucmp does: the dump to check "
                             "(an NPU's or the emulation's; a file or folder, the NPU's layout or npu_bridge's older "
                             "one)")
    parser.add_argument("-g", "--golden-dump", metavar="DUMP",
                        help="with -m: the reference dump, matched by op name (e.g. the script dumped with "
                             "precision_mode must_keep_origin_dtype: float32)")
    parser.add_argument("script", nargs="?", help="the training or inference script, run unmodified")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")


def run_compare(args):
    if args.my_dump or args.golden_dump or args.script is None:
        return run_dump_compare(args)
    try:
        steps = None if args.steps is None else parse_steps(args.steps)
        if args.scan < 1:
            raise NpuConfigError(f"--scan {args.scan}: the number of steps must be at least 1")
    except NpuConfigError as error:
        print(f"npu-debug compare: {error}", file=sys.stderr)
        return 2
    scan = scan_module.Scan(args.scan, steps)
    written = []

    def write(comparison):
        name = scan.graphs[comparison.signature].name
        paths = write_outputs(comparison, args.output, name, plot=not args.no_plot)
        written.extend(paths)
        return paths

    def stop_when_done():
        if scan.training_done() and not args.run_to_end:
            raise StopScript()

    def on_compared(comparison):
        done = scan.compared(comparison)
        graph = scan.graphs[comparison.signature]
        if steps is not None or comparison.culprit is not None:
            print(comparison.summary(), flush=True)
            print(f"    written: {', '.join(write(comparison))}", flush=True)
        else:
            print(f"{graph.name} step {comparison.step}: no reduced op breaks the local-error threshold or "
                  "overflows on its own", flush=True)
        if done:
            stop_when_done()

    def on_skipped(comparison):
        done = scan.skipped(comparison)
        graph = scan.graphs[comparison.signature]
        if len(graph.skipped) <= SKIPPED_SHOWN:
            more = " (further skipped steps are summed up at the end)" if len(graph.skipped) == SKIPPED_SHOWN else ""
            print(f"{graph.name}: {comparison.skipped}: not judged{more}", flush=True)
        if done:
            stop_when_done()

    observer = CompareObserver(scan, on_compared, None if steps is not None else on_skipped)
    code = run_observed(observer, args.script, args.script_args, "npu-debug compare")
    if code == 2 and not os.path.isfile(args.script):
        return 2
    if not scan.graphs or not any(graph.compared for graph in scan.graphs.values()):
        if scan.graphs:
            print("looked at:\n" + "\n".join(f"  {graph.describe()}" for graph in scan.graphs.values()))
        print(f"npu-debug compare: {no_steps_message(observer, args.script, steps)}", file=sys.stderr)
        return 1 if code in (0, None) else code
    for graph in scan.graphs.values():
        if steps is None and graph.culprit is None and graph.last is not None:
            print(graph.last.summary())
            print(f"    written: {', '.join(write(graph.last))}")
    print(_looked_at(scan, args))
    return 0 if code in (0, None) else code


SKIPPED_SHOWN = 3


def _looked_at(scan, args):
    """What compare looked at, the verdict per graph, and how to look further."""
    lines = ["looked at:"]
    for graph in scan.graphs.values():
        lines.append(f"  {graph.describe()}")
        if graph.culprit is not None:
            row = graph.culprit.culprit
            lines.append(f"    first op breaking accuracy at step {graph.culprit.step}: {row['NPUDump']} "
                         f"({row['OpType']}), created at {row['SourceLine'] or 'an unknown line'}")
    if args.steps is None:
        lines.append(f"to look further: --scan {max(4 * args.scan, 100)} (more applied steps of the training graph), "
                     "or --steps '0-50' --run-to-end (chosen steps of every graph, to the script's end)")
    return "\n".join(lines)


DUMPS_NAME = "compare"     # file stem of a two-dump comparison: compare_step<N>.csv


def run_dump_compare(args):
    """`npu-debug compare -m MY_DUMP -g GOLDEN_DUMP`: the CSV and .vis of two dumps (dumpcompare.py)."""
    from npu_bridge.debug.dumpcompare import compare_dumps

    if not (args.my_dump and args.golden_dump) or args.script is not None:
        print("npu-debug compare: give a script to run and compare with float32, or two dumps as -m MY_DUMP "
              "-g GOLDEN_DUMP (not both)", file=sys.stderr)
        return 2
    try:
        comparison, skipped = compare_dumps(args.my_dump, args.golden_dump)
    except (FileNotFoundError, ValueError) as error:
        print(f"npu-debug compare: {error}", file=sys.stderr)
        return 2
    for op_name, why in skipped:
        print(f"npu-debug compare: {op_name} not compared: {why}", file=sys.stderr)
    paths = write_outputs(comparison, args.output, DUMPS_NAME, plot=not args.no_plot)
    print(f"{len(comparison.rows)} output tensors of {args.my_dump} compared with {args.golden_dump}")
    culprit, overflow, divergence = comparison.culprit, comparison.first_overflow(), comparison.first_divergence()
    if culprit is not None:
        print(f"first op overflowing from normal inputs: {culprit['NPUDump']} ({culprit['OpType']})")
    if overflow is not None:
        print(f"first tensor holding an overflow: {overflow['TensorIndex']} ({overflow['OpType']})")
    if divergence is not None:
        print(f"first tensor with cosine similarity < {COSINE_ALERT}: {divergence['TensorIndex']} "
              f"({float(divergence['CosineSimilarity']):.6f})")
    if culprit is None and overflow is None and divergence is None:
        print(f"no overflow, every output's cosine similarity >= {COSINE_ALERT}")
    print(f"    written: {', '.join(paths)}")
    return 0 if comparison.rows else 1


def run_observed(observer, script, script_args, program, seed=None):
    """Run the script with `observer` registered, from a fresh state (isolation.py: seeds when `seed` is given,
    a fresh model_dir for each Estimator); the script's exit code (0 when an observer stopped it)."""
    if not os.path.isfile(script):
        print(f"{program}: can't open file {script!r}: [Errno 2] No such file or directory", file=sys.stderr)
        return 2
    from npu_bridge.debug import isolation

    observers.add_observer(observer)
    try:
        with isolation.fresh_state(seed):
            return run_script(script, script_args,
                              None if seed is None else lambda: isolation.seed_everything(seed))
    except StopScript:
        return 0
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        observers.remove_observer(observer)
        observer.close()


def no_steps_message(observer, script, steps):
    if not observer.steps_seen:
        return (f"{script} ran no emulated NPU session: no tf.compat.v1 Session with an NpuOptimizer custom "
                "optimizer (use_off_line true) ran a step, so there is nothing to compare")
    if steps is None:
        return f"{script} ran no step that computes reduced ops and was applied (steps count from 0)"
    steps = sorted(steps)
    reached = ", ".join(f"{count} steps" for count in sorted(set(observer.steps_seen.values()), reverse=True))
    return (f"{script} never reached the chosen steps {steps} of a run that computes reduced ops (its runs took "
            f"{reached}; steps count from 0)")


def add_suggest_arguments(parser):
    parser.add_argument("--fetch", metavar="TENSOR",
                        help="the tensor to keep close to float32 (default: the scalar float the training graph "
                             "fetches with its update, i.e. the loss); graphs without it are skipped and named")
    parser.add_argument("--steps", type=int, default=5, metavar="N",
                        help="steps recorded and compared (default 5), from step 0 or, under dynamic loss scaling, "
                             "from the first step the scale lets through")
    parser.add_argument("--rtol", type=float, default=1e-2, help="relative tolerance against float32 (default 0.01)")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default 1e-5)")
    parser.add_argument("--strict", action="store_true",
                        help="judge against float32 alone, even where reduced ops without a float32 kernel keep "
                             "every setting outside the tolerance (default: widen it by the gap they leave)")
    parser.add_argument("--max-replays", type=int, default=200, metavar="N",
                        help="cap on replays of the recorded steps (default 200; the search needs at most 3n+3 "
                             "for n reduced ops, untested ops stay float32 past the cap)")
    parser.add_argument("--output", "-out", default="npu_debug_suggest", metavar="DIR",
                        help="folder for modify_mixlist.json and customize_dtypes.cfg")
    parser.add_argument("--seed", type=int, default=0, help="seed for the script's unseeded random generators")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the reruns of the script (3 subprocesses: float32, each file)")
    parser.add_argument("--rerun-timeout", type=float, default=600, metavar="SECONDS",
                        help="time limit of each verifying rerun (default 600)")
    add_script_arguments(parser)


def run_suggest(args):
    from npu_bridge.debug.capture import CaptureObserver
    from npu_bridge.debug.progress import Progress
    from npu_bridge.debug.suggest import Search, SuggestError, Tolerance, write_files

    if args.steps < 1:
        print(f"npu-debug suggest: --steps {args.steps}: the number of steps must be at least 1", file=sys.stderr)
        return 2

    def stop(_):
        raise StopScript()

    progress = Progress()
    progress.line(f"recording {args.steps} steps of {args.script} (seed {args.seed})")
    observer = CaptureObserver(args.steps, args.fetch, on_done=stop)
    code = run_observed(observer, args.script, args.script_args, "npu-debug suggest", seed=args.seed)
    recording = observer.recording
    if recording is None:
        if code == 2 and not os.path.isfile(args.script):
            return 2
        if code not in (0, None):
            print(f"npu-debug suggest: {args.script} failed (exit code {code}) before {args.steps} steps were "
                  "recorded: its error is above", file=sys.stderr)
            return code
        print(f"npu-debug suggest: {observer.failure(args.script)}", file=sys.stderr)
        return 1
    if recording.partial:
        print(f"npu-debug suggest: {args.script} ended (exit code {code}) after {len(recording.steps)} of the "
              f"{args.steps} steps asked for: the search uses the steps recorded", file=sys.stderr)
    _print_recording(recording, observer, args)
    tolerance = Tolerance(args.rtol, args.atol)
    with tempfile.TemporaryDirectory(prefix="npu-debug-suggest-") as work_dir:
        search = Search(recording, tolerance, work_dir, args.max_replays, progress=progress.replay,
                        within_reach=not args.strict)
        try:
            suggestion = search.run()
        except SuggestError as error:
            progress.close()
            print(f"npu-debug suggest: {error}", file=sys.stderr)
            return 1
        finally:
            progress.close()
    print(f"{len(search.candidates)} reduced ops with a float32 kernel; {suggestion.replays} replays of the "
          f"recorded steps (bound {suggestion.bound}), {progress.elapsed():.0f} s")
    tolerance = search.tolerance
    _print_metric("float32", suggestion.float32, suggestion.float32)
    if suggestion.floor:
        _print_metric("all that can be in float32", suggestion.floor, suggestion.float32)
        print(f"    outside the tolerance even so: {search.hardware_note()}; judged from here on by "
              f"{tolerance.describe()} (--strict: float32 alone)")
    _print_metric("as configured", suggestion.mixed, suggestion.float32, tolerance)
    if not suggestion.blocked:
        print("already within tolerance: nothing needs to stay in float32")
        return 0
    print(f"keep in float32 ({len(suggestion.blocked)}): {', '.join(suggestion.blocked)}")
    for name in suggestion.blocked[:SOURCES_SHOWN]:
        print(f"    {name} created at {recording.sources.get(name) or 'an unknown line'}")
    if suggestion.range_blocked:
        print(f"    of which beyond the {recording.reduced_dtype} range in float32: "
              f"{', '.join(suggestion.range_blocked)}")
    if suggestion.untested:
        print(f"    of which untested (--max-replays reached): {', '.join(suggestion.untested)}")
    _print_metric("with them in float32", suggestion.fixed, suggestion.float32, tolerance)
    graph = search.graph
    mixlist, customize = write_files(suggestion, graph, args.output, recording.mixlist_allowed)
    if mixlist is not None:
        print(f"written: {mixlist} (op types {', '.join(suggestion.types)}), {customize} (op names)")
        for ir_type, names in suggestion.moved.items():
            print(f"    note: black-listing {ir_type} also keeps {ops(len(names))} more in float32 that were fine: "
                  f"{', '.join(names[:8])}{' ...' if len(names) > 8 else ''}; customize_dtypes keeps only those "
                  "found")
    else:
        print(f"written: {customize} (op names); no modify_mixlist.json: the script's precision mode "
              f"{recording.mode_name} does not accept one (modify_mixlist needs precision_mode "
              "allow_mix_precision* or precision_mode_v2 mixed_float16 / mixed_bfloat16), customize_dtypes works "
              "in every mode")
    if args.no_verify:
        return 0
    return _verify(args, recording, suggestion, [path for path in (mixlist, customize) if path], tolerance)


SOURCES_SHOWN = 10


def _print_recording(recording, observer, args):
    """What was recorded: which graph, which metric, which steps, and what was passed over."""
    steps = recording.step_numbers
    role = "the training graph" if recording.trains else "the graph running most reduced ops (none trains)"
    print(f"recorded {role} (fetches {', '.join(recording.fetches)}): metric {recording.metric}, steps "
          f"{steps[0]}-{steps[-1]}; tolerance |value - float32| <= {args.atol:g} + {args.rtol:g} * |float32|")
    if recording.skipped:
        first, last = recording.skipped[0], recording.skipped[-1]
        more = f" ... {last}" if len(recording.skipped) > 1 else ""
        print(f"    {len(recording.skipped)} steps before it were skipped by loss scaling ({first}{more}): "
              "dynamic loss scaling expects them; the recording starts at the first step applied")
    for skipped in observer.skipped_graphs:
        print(f"    skipped {skipped}")


def _print_metric(label, values, reference, tolerance=None):
    worst = max(float(abs(v - r).max()) if v.size else 0.0 for v, r in zip(values, reference))
    shown = ", ".join(f"{float(v.mean()):.6g}" for v in values)
    verdict = "" if tolerance is None else \
        ("  within tolerance" if tolerance.holds(values, reference) else "  OUTSIDE tolerance")
    print(f"  {label:<34} [{shown}]  max |difference| {worst:.4g}{verdict}")


def _verify(args, recording, suggestion, files, tolerance):
    """Rerun the script in subprocesses (float32, then with each file) from the recording's state (same seed,
    fresh model_dirs, the same window of steps) and print the metric of each against the float32 rerun."""
    import numpy as np

    runs = [("rerun float32", FLOAT32_OVERRIDES)]
    for path in files:
        key = "modify_mixlist" if path.endswith(".json") else "customize_dtypes"
        runs.append((f"rerun with {os.path.basename(path)}", {key: os.path.abspath(path)}))
    steps = recording.step_numbers
    print(f"verifying: {len(runs)} reruns of {args.script} (seed {args.seed}), steps {steps[0]}-{steps[-1]} each",
          flush=True)
    results = reruns(args, recording, runs)
    reference = results.pop("rerun float32")
    if isinstance(reference, str):
        print(f"npu-debug suggest: the float32 rerun failed: {reference}", file=sys.stderr)
        return 1
    reference = [np.asarray(v, np.float64) for v in reference]
    _print_metric("rerun float32", reference, reference)
    _print_metric("recording's float32 replay", suggestion.float32, reference, tolerance)
    if recording.skipped:
        print(f"    the float32 rerun applies the {len(recording.skipped)} steps loss scaling skipped before the "
              "recording, so its values can differ from the replay's by that training")
    elif not tolerance.holds(suggestion.float32, reference):
        print("    the float32 rerun does not reproduce the recording's float32 values: the script's runs do not "
              "start from the same state (an unseeded generator, or data read in a different order)")
    _print_metric("this run, as configured", recording.metric_values, reference, tolerance)
    fixed = False
    for label, values in results.items():
        if isinstance(values, str):
            print(f"  {label:<34} failed: {values}")
            continue
        values = [np.asarray(v, np.float64) for v in values]
        _print_metric(label, values, reference, tolerance)
        fixed = fixed or tolerance.holds(values, reference)
    return 0 if fixed else 1


def reruns(args, recording, runs):
    """{label: the metric per step of its rerun, or its real error}: each of `runs` ((label, overrides)) in a
    subprocess (npu_bridge.debug.probe), all at once: they are independent, and each spends most of its time
    importing TensorFlow and building the script's graph, which the machine's cores share out."""
    from npu_bridge.debug.suggest import merged_overrides

    with tempfile.TemporaryDirectory(prefix="npu-debug-rerun-") as folder:
        started = {}
        for index, (label, overrides) in enumerate(runs):
            out = os.path.join(folder, f"metric{index}.json")
            command = [sys.executable, "-m", "npu_bridge.debug.probe", "--steps", str(len(recording.steps)),
                       "--fetch", recording.metric, "--start", str(recording.start), "--seed", str(args.seed),
                       "--json", out, args.script, *args.script_args]
            env = dict(os.environ)
            env[OVERRIDES_ENV] = json.dumps(merged_overrides(overrides))
            started[label] = (subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                               text=True), out)
        deadline = time.monotonic() + args.rerun_timeout
        return {label: _finished(process, out, deadline, args.rerun_timeout)
                for label, (process, out) in started.items()}


def _finished(process, out, deadline, timeout):
    """The metric per step a rerun wrote to `out`, or why it has none (killed at `deadline`)."""
    try:
        _, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return f"timed out after {timeout:g} s"
    if process.returncode != 0 or not os.path.exists(out):
        return _real_error(stderr) or f"exit code {process.returncode}"
    with open(out) as handle:
        return json.load(handle)["values"]


def _real_error(stderr):
    """The line naming the exception of a traceback in `stderr` (else its last line)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith((" ", "Traceback")) and
              (line.split(":", 1)[0].rsplit(".", 1)[-1].endswith(("Error", "Exception")))]
    if errors:
        return errors[-1]
    return lines[-1] if lines else ""
