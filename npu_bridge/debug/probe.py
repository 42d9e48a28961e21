"""`python -m npu_bridge.debug.probe`: run a script, record a metric tensor over its first N steps, stop.

What `npu-debug suggest` runs in a subprocess to prove a file: the process's NpuOptimizer parameter overrides
($NPU_BRIDGE_PARAMETER_OVERRIDES, set by the caller) apply the file to the unmodified script's sessions.
Writes {"metric": name, "values": [per step]} to --json; exit code 1 with the reason on stderr otherwise.
"""
import argparse
import json
import sys

from npu_bridge.debug.capture import CaptureObserver
from npu_bridge.debug.commands import StopScript, run_observed


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m npu_bridge.debug.probe")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--fetch", required=True)
    parser.add_argument("--start", type=int, default=0, help="the step to start recording at")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", required=True)
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    def stop(_):
        raise StopScript()

    observer = CaptureObserver(args.steps, args.fetch, on_done=stop, require_reduced=False, start=args.start)
    code = run_observed(observer, args.script, args.script_args, "probe", seed=args.seed)
    if observer.recording is None:
        if code in (0, None):       # else the script's own error is what stderr ends with
            print(observer.failure(args.script), file=sys.stderr)
        return code or 1
    values = [value.tolist() for value in observer.recording.metric_values]
    with open(args.json, "w") as handle:
        json.dump({"metric": observer.recording.metric, "values": values}, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
