"""`npu-debug`: precision debugging tools, one subcommand each.

- `npu-debug compare [options] script.py [args]`: one run of the script, chosen steps compared op by op with
  float32 (CSV in msaccucmp's columns, local errors, the first op breaking accuracy and its source line).
- `npu-debug suggest [options] script.py [args]`: ops to keep in float32 so a fetched tensor stays within a
  tolerance of float32; writes a modify_mixlist and a customize_dtypes file and proves them by rerunning.
- `npu-debug convert -d DUMP -out DIR`: dump files (npu_bridge.debug's, or the NPU's) to .npy files named as
  Ascend's msaccucmp converter names them.

The subcommands are npu_bridge.console Commands: the functions adding their arguments and running them are
imported only once a subcommand is chosen, so `npu-debug --help` and `--version` answer without TensorFlow.
"""
import sys

from npu_bridge.console import Command, Tool
from npu_bridge.console import main as console_main


def add_convert_arguments(parser):
    parser.add_argument("-d", "--dump", required=True, metavar="DUMP",
                        help="a dump file, or a folder searched recursively (dump_path or any folder below it)")
    parser.add_argument("-out", "--output", required=True, metavar="DIR", help="folder for the .npy files")


def run_convert(args):
    from npu_bridge.debug import convert as convert_module

    try:
        result = convert_module.convert(args.dump, args.output)
    except FileNotFoundError as error:
        print(f"npu-debug convert: -d {error}", file=sys.stderr)
        return 2
    for path, why in result.skipped:
        print(f"skipped {path}: {why}", file=sys.stderr)
    print(f"converted {len(result.converted)} dump files from {args.dump} into {len(result.written)} files "
          f"in {args.output}")
    return 0 if result.converted or not result.skipped else 1


_COMMANDS = "npu_bridge.debug.commands"
TOOL = Tool("npu-debug", "Precision debugging for the emulated NPU.", (
    Command("compare", "run a script once and compare chosen steps op by op with float32 ground truth",
            f"{_COMMANDS}:add_compare_arguments", f"{_COMMANDS}:run_compare"),
    Command("suggest", "find ops to keep in float32 so a fetched tensor stays within a tolerance of float32, write "
                       "a modify_mixlist and a customize_dtypes file, and prove them by rerunning the script",
            f"{_COMMANDS}:add_suggest_arguments", f"{_COMMANDS}:run_suggest"),
    Command("convert", "convert dump files to .npy, named as Ascend's msaccucmp converter names them",
            f"{__name__}:add_convert_arguments", f"{__name__}:run_convert"),
))


def main(argv=None):
    """Entry point of `npu-debug` and `python -m npu_bridge.debug.cli`; returns the exit code."""
    return console_main(TOOL, argv)


if __name__ == "__main__":
    sys.exit(main())
