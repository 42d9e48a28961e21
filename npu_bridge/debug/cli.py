"""`npu-debug`: precision debugging tools, one subcommand each.

- `npu-debug compare [options] script.py [args]`: one run of the script, chosen steps compared op by op with
  float32 (CSV in msaccucmp's columns, local errors, the first op breaking accuracy and its source line).
- `npu-debug suggest [options] script.py [args]`: ops to keep in float32 so a fetched tensor stays within a
  tolerance of float32; writes a modify_mixlist and a customize_dtypes file and proves them by rerunning.
- `npu-debug convert -d DUMP -out DIR`: dump files (npu_bridge.debug's, or the NPU's) to .npy files named as
  Ascend's msaccucmp converter names them.

Each subcommand is a function `(args) -> exit code` registered in `_SUBCOMMANDS` with the function adding its
arguments; add a subcommand by adding a pair there.
"""
import argparse
import sys

from npu_bridge.debug import commands
from npu_bridge.debug import convert as convert_module


def _add_convert(parser):
    parser.add_argument("-d", "--dump", required=True, metavar="DUMP",
                        help="a dump file, or a folder searched recursively (dump_path or any folder below it)")
    parser.add_argument("-out", "--output", required=True, metavar="DIR", help="folder for the .npy files")


def _run_convert(args):
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


# name -> (help, add_arguments(parser), run(args) -> exit code)
_SUBCOMMANDS = {
    "compare": ("run a script once and compare chosen steps op by op with float32 ground truth",
                commands.add_compare_arguments, commands.run_compare),
    "suggest": ("find ops to keep in float32 so a fetched tensor stays within a tolerance of float32, write a "
                "modify_mixlist and a customize_dtypes file, and prove them by rerunning the script",
                commands.add_suggest_arguments, commands.run_suggest),
    "convert": ("convert dump files to .npy, named as Ascend's msaccucmp converter names them",
                _add_convert, _run_convert),
}


def build_parser():
    parser = argparse.ArgumentParser(prog="npu-debug", description="Precision debugging for the emulated NPU.")
    commands_ = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add_arguments, run) in _SUBCOMMANDS.items():
        sub = commands_.add_parser(name, help=help_text, description=help_text)
        add_arguments(sub)
        sub.set_defaults(run=run)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
