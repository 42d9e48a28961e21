"""customize_dtypes: a text file that pins the dtypes of single ops, by node name or by IR op type.

    conv1/Conv2D::InputDtype:float16,float16,OutputDtype:float32
    OpType::MatMulV2:InputDtype:float16,float16,float32,OutputDtype:float32

Format and rules follow the Ascend parser (docs/BEHAVIOUR.md §4): the name or type is the text before the first
':' after the prefix; "InputDtype" must come before "OutputDtype", either may be left out; an empty dtype
token keeps that port's dtype; a node-name line beats a type line; a later line for the same name or type is
ignored with a warning; a bad line or dtype fails the whole file with "The content format of the
customization file is incorrect" and its line number. Two leniencies, both stated in the messages: blank
lines are skipped (the real parser's handling of them is unverified) and a '#' comment line is rejected with
a hint, since the documentation's example shows such lines but the parser has no comment syntax.
"""
from collections.abc import Iterable
from dataclasses import dataclass

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.mixlist import warn_about_op_types
from npu_bridge.core.oplib import OpLibrary
from npu_bridge.core.options import config_warning

_TYPE_PREFIX = "OpType::"
_INPUT = "InputDtype:"
_OUTPUT = "OutputDtype:"
_MAX_LINE = 1024
_FORMAT = ("The content format of the customization file is incorrect")
_EXPECTED = ("expected '<NodeName>::InputDtype:<d>,...,OutputDtype:<d>,...' or "
             "'OpType::<IRType>:InputDtype:<d>,...,OutputDtype:<d>,...'")

# Ascend dtype names (upper-cased and prefixed DT_ by the real parser) -> TF dtype names.
_DTYPES = {
    "float": "float32", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16",
    "double": "float64", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "bool": "bool",
    "complex64": "complex64", "complex128": "complex128",
}


@dataclass(frozen=True)
class DtypeRule:
    """Dtypes for one node or op type; None keeps that port's dtype. Dtypes are TF names."""

    inputs: tuple[str | None, ...]
    outputs: tuple[str | None, ...]
    line: int
    by: str          # "name" or "type"
    target: str = ""  # the node name or IR type the line names


class CustomizeDtypes:
    """The rules of one customize_dtypes file."""

    def __init__(self, path: str, by_name: dict[str, DtypeRule], by_type: dict[str, DtypeRule]) -> None:
        self.path = path
        self.by_name = dict(by_name)
        self.by_type = dict(by_type)

    def rule_for(self, node_name: str, ir_types: Iterable[str]) -> DtypeRule | None:
        """The rule for a node: its name's line if any, else the line of the first of its IR types that has one."""
        if node_name in self.by_name:
            return self.by_name[node_name]
        for ir_type in ir_types:
            if ir_type in self.by_type:
                return self.by_type[ir_type]
        return None


def _line_error(path, number, reason):
    return NpuConfigError(f"customize_dtypes [{path}] line {number}: {_FORMAT}: {reason}; {_EXPECTED}.")


def _dtypes(path, number, text):
    tokens = text.split(",")
    result: list[str | None] = []
    for token in tokens:
        token = token.strip()
        if not token:
            result.append(None)
            continue
        if token.lower() not in _DTYPES:
            raise _line_error(path, number, f"{token} is an invalid dtype (valid: {', '.join(_DTYPES)})")
        result.append(_DTYPES[token.lower()])
    return tuple(result)


def _split_dtypes(path, number, spec):
    """'InputDtype:a,b,OutputDtype:c' -> ((a, b), (c,))."""
    in_at, out_at = spec.find(_INPUT), spec.find(_OUTPUT)
    if in_at < 0 and out_at < 0:
        raise _line_error(path, number, f"'{spec}' has neither InputDtype: nor OutputDtype:")
    if in_at >= 0 and 0 <= out_at < in_at:
        raise _line_error(path, number, "Invalid customize file, inputDtype must on the left of outputDtype.")
    if min(at for at in (in_at, out_at) if at >= 0) != 0:
        raise _line_error(path, number, f"unexpected text '{spec[:min(a for a in (in_at, out_at) if a >= 0)]}' "
                                        "before the dtypes")
    inputs, outputs = (), ()
    if in_at >= 0:
        end = out_at if out_at >= 0 else len(spec)
        input_text = spec[len(_INPUT):end]
        if out_at >= 0:
            if not input_text.endswith(","):
                raise _line_error(path, number, "InputDtype list and OutputDtype: must be separated by ','")
            input_text = input_text[:-1]
        inputs = _dtypes(path, number, input_text)
    if out_at >= 0:
        outputs = _dtypes(path, number, spec[out_at + len(_OUTPUT):])
    return inputs, outputs


def _parse_line(path, number, line):
    if len(line) > _MAX_LINE:
        raise _line_error(path, number, f"the line is {len(line)} characters long, at most {_MAX_LINE} are read")
    if line.lstrip().startswith("#"):
        raise _line_error(path, number, "comment lines are not supported by the Ascend parser; remove them")
    if line.startswith(_TYPE_PREFIX):
        target, sep, spec = line[len(_TYPE_PREFIX):].partition(":")
        by = "type"
    else:
        target, sep, spec = line.partition("::")
        by = "name"
    if not sep or not target.strip():
        raise _line_error(path, number, f"'{line}' does not start with a node name or OpType::<IRType>")
    inputs, outputs = _split_dtypes(path, number, spec.strip())
    return DtypeRule(inputs=inputs, outputs=outputs, line=number, by=by, target=target.strip())


def load_customize_dtypes(path: str, library: OpLibrary | None = None, *, strict: bool = False) -> CustomizeDtypes:
    """Parse a customize_dtypes file; raises NpuConfigError naming the file and line when it is wrong.

    With the session's operator `library`, OpType lines naming a TensorFlow op type the engine renames, or a type
    the library does not know, are warned about: they pin nothing, here as on hardware. Warnings are
    NpuConfigErrors when `strict`, or when the library was loaded strict.
    """
    strict = strict or (library is not None and library.strict)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError, ValueError) as err:     # ValueError: a NUL byte in the path
        raise NpuConfigError(f"customize_dtypes [{path}]: The customize file does not exist or its access "
                             f"permission is denied ({err}).") from None
    if text.startswith("\ufeff"):
        config_warning(f"customize_dtypes [{path}]: the file starts with a UTF-8 byte order mark; it is skipped here, "
                       "but save the file without one: otherwise line 1's node name or OpType starts with it.",
                       strict=strict)
        text = text[1:]
    by_name: dict[str, DtypeRule] = {}
    by_type: dict[str, DtypeRule] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        rule = _parse_line(path, number, line.strip())
        table = by_name if rule.by == "name" else by_type
        if rule.target in table:
            first = table[rule.target].line
            config_warning(f"customize_dtypes [{path}] line {number}: {rule.by} '{rule.target}' was already set on "
                           f"line {first}; like the Ascend parser, the later line is ignored.", strict=strict)
            continue
        table[rule.target] = rule
    if library is not None:
        warn_about_op_types(((f"customize_dtypes [{path}] line {rule.line}", name) for name, rule in by_type.items()),
                            library)
    return CustomizeDtypes(path, by_name, by_type)
