"""The one structure of the three console scripts: npu-run, npu-report and npu-debug.

A tool is a program name, a description and its commands. A command names the function adding its arguments
and the function running it as "module:function" strings, imported only once that command is chosen: the help
of a tool, its --version and a bad command line answer before TensorFlow is imported (this module imports only
the standard library), and a command that needs no TensorFlow (`npu-report diff`) never imports it.

A command with an empty name is the tool's default one: `npu-run SCRIPT`, `npu-report GRAPH`; the other commands
are chosen by the first argument (`npu-report diff`, `npu-debug compare`). Every tool answers --version. A
command's run function takes the parsed arguments and returns the exit code: 0 done, 2 a bad command line
(argparse's own), the other codes each tool documents.
"""
import argparse
import importlib
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    name: str               # "" for the tool's default command
    help: str
    arguments: str          # "module:function" adding the command's arguments to an argparse.ArgumentParser
    run: str                # "module:function" taking the parsed arguments and returning the exit code


@dataclass(frozen=True)
class Tool:
    prog: str
    description: str
    commands: tuple[Command, ...]
    usage: str | None = None
    epilog: str = ""


def package_version() -> str:
    """The installed npu_bridge's version, read from its metadata (no import of the package's modules)."""
    from importlib import metadata

    try:
        return metadata.version("npu_bridge")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def main(tool: Tool, argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default sys.argv[1:]) for `tool`, run the chosen command, return its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    named = {command.name: command for command in tool.commands if command.name}
    try:
        if argv[:1] and argv[0] in named:
            command = named[argv[0]]
            args = _command_parser(tool, command).parse_args(argv[1:])
        else:
            default = next((command for command in tool.commands if not command.name), None)
            if default is None:
                _tool_parser(tool).parse_args(argv)     # help, version or a usage error: argparse exits
                return 2
            command = default
            args = _command_parser(tool, command).parse_args(argv)
    except SystemExit as exit_request:          # --help, --version, or a bad command line (argparse printed why)
        return _exit_code(exit_request.code)
    return _resolve(command.run)(args)


def _exit_code(code: Any) -> int:
    return code if isinstance(code, int) else (0 if code is None else 2)


def _version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")


def _tool_parser(tool: Tool) -> argparse.ArgumentParser:
    """The parser of a tool whose commands are all named: lists them, answers --help and --version."""
    parser = argparse.ArgumentParser(prog=tool.prog, description=tool.description, epilog=tool.epilog or None,
                                     usage=tool.usage)
    _version(parser)
    choices = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in tool.commands:
        choices.add_parser(command.name, help=command.help)
    return parser


def _command_parser(tool: Tool, command: Command) -> argparse.ArgumentParser:
    if command.name:
        parser = argparse.ArgumentParser(prog=f"{tool.prog} {command.name}", description=command.help)
    else:
        others = [textwrap.fill(f"{tool.prog} {other.name}: {other.help}", 116, subsequent_indent="    ")
                  for other in tool.commands if other.name]
        epilog = "\n\n".join(part for part in (tool.epilog, "\n".join(others)) if part)
        parser = argparse.ArgumentParser(prog=tool.prog, usage=tool.usage, description=tool.description,
                                         epilog=epilog or None, formatter_class=argparse.RawDescriptionHelpFormatter)
        _version(parser)
    _resolve(command.arguments)(parser)
    return parser


def _resolve(reference: str) -> Callable[..., Any]:
    module, _, function = reference.partition(":")
    return getattr(importlib.import_module(module), function)
