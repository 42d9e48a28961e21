"""Black/white/gray lists: the operator library's precision_reduce flags, edited by a modify_mixlist file.

A modify_mixlist file moves op types between lists (docs/BEHAVIOUR.md §3):

    {"black-list": {"to-add": ["ReduceSumD"]}, "white-list": {"to-remove": ["Conv2D"]}}

We parse and check it like the Ascend fusion engine (same structure rules, same legal combinations per op,
same messages), then apply it the same way: removals first and only when the op's built-in list is the one
named, then black additions, then white ones. Names that match no op type are silently dropped by the real
engine; we warn, because a misspelt name (MatMu1V2) or a TensorFlow name (MatMul, Sum) is the usual reason a
mixlist "does nothing".
"""
import json
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING

from npu_bridge.core.errors import NpuConfigError, did_you_mean
from npu_bridge.core.oplib import OpLibrary, load_op_library
from npu_bridge.core.options import config_warning
from npu_bridge.core.tf_to_ir import ir_candidates, reachable_ir_types, renamed_tf_types

if TYPE_CHECKING:
    from npu_bridge.core.options import NpuOptions


class ListName(str, Enum):
    WHITE = "white"
    BLACK = "black"
    GRAY = "gray"


_LISTS = ("black-list", "white-list", "gray-list")
_ACTIONS = ("to-add", "to-remove")
_LIST_OF_FLAG = {"true": ListName.WHITE, "false": ListName.BLACK, None: ListName.GRAY}

# The only per-op combinations the fusion engine accepts (each a set of "<list>.<action>").
_LEGAL = {frozenset(combo) for combo in (
    ("black-list.to-remove",), ("white-list.to-remove",), ("gray-list.to-add",),
    ("gray-list.to-add", "black-list.to-remove"), ("gray-list.to-add", "white-list.to-remove"),
    ("white-list.to-add",), ("white-list.to-add", "gray-list.to-remove"),
    ("white-list.to-add", "black-list.to-remove"),
    ("black-list.to-add",), ("black-list.to-add", "gray-list.to-remove"),
    ("black-list.to-add", "white-list.to-remove"),
)}
_ACTION_WORDS = {"black-list.to-add": "add black list", "white-list.to-add": "add white list",
                 "gray-list.to-add": "add gray list", "black-list.to-remove": "remove black list",
                 "white-list.to-remove": "remove white list", "gray-list.to-remove": "remove gray list"}


def _read_text(path):
    """The file's text; a UTF-8 byte order mark (Windows editors write one) is skipped, as the real JSON parser does."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError, ValueError) as err:     # ValueError: a NUL byte in the path
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise NpuConfigError(f"modify_mixlist: cannot open file [{path}]: {reason}.") from None


def _parse(path, text, strict):
    if not text.strip():
        raise NpuConfigError(f"modify_mixlist: The file at path [{path}] is empty.")
    try:
        return json.loads(text, object_pairs_hook=_DuplicateKeys(path, strict))
    except RecursionError:
        raise NpuConfigError(
            f"modify_mixlist [{path}]: The configuration file is not in JSON format or its content is invalid "
            "(arrays or objects nested too deeply to read; a mixlist has three levels).") from None
    except json.JSONDecodeError as err:
        hint = ""
        if text.startswith("//", err.pos):       # the parser stopped at a comment, not at a '//' inside a string
            hint = (" JSON has no comments: remove the // comments (the documentation's example shows them, "
                    "but the real parser rejects them too).")
        raise NpuConfigError(
            f"modify_mixlist [{path}]: The configuration file is not in JSON format or its content is invalid "
            f"(line {err.lineno}, column {err.colno}: {err.msg}).{hint}") from None


class _DuplicateKeys:
    """json object hook: a key written twice in one object keeps only its last value, in Python's parser as in
    the engine's, which silently drops the first block ("black-list" twice): warn, naming the key."""

    def __init__(self, path, strict):
        self.path = path
        self.strict = strict

    def __call__(self, pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                config_warning(f"modify_mixlist [{self.path}]: key '{key}' appears twice in one object; like the "
                               "Ascend parser, only its last value is read and the first is dropped. Merge the two "
                               "blocks into one.", strict=self.strict)
            seen[key] = value
        return seen


def _actions_per_op(path, data):
    """{op type: set of "<list>.<action>"} with the parser's structure checks."""
    if not isinstance(data, dict):
        raise NpuConfigError(f"modify_mixlist [{path}]: Top level of json [{path}] should be an object with "
                             "'gray-list', 'white-list' or 'black-list' keys.")
    actions: dict[str, set[str]] = {}
    for list_key, body in data.items():
        if list_key not in _LISTS:
            raise NpuConfigError(f"modify_mixlist: Top level of json [{path}] should be 'gray-list' or "
                                 f"'white-list' or 'black-list'. (found '{list_key}')")
        if not isinstance(body, dict):
            raise NpuConfigError(f"modify_mixlist [{path}]: '{list_key}' should be an object whose keys are "
                                 "to-add and/or to-remove.")
        for action_key, names in body.items():
            if action_key not in _ACTIONS:
                raise NpuConfigError(f"modify_mixlist [{path}]: second level key '{list_key}.{action_key}' "
                                     "should be either to-add or to-remove.")
            if not isinstance(names, list):
                raise NpuConfigError(f"modify_mixlist [{path}]: '{list_key}.{action_key}': The third level of "
                                     "the JSON should be an array.")
            for name in names:
                if not isinstance(name, str):
                    raise NpuConfigError(f"modify_mixlist [{path}]: '{list_key}.{action_key}' holds {name!r}; "
                                         "every entry must be an op type string such as \"MatMulV2\".")
                actions.setdefault(name, set()).add(f"{list_key}.{action_key}")
    return actions


def _check_legal(path, actions):
    for op_type, combo in actions.items():
        if frozenset(combo) not in _LEGAL:
            words = ", ".join(_ACTION_WORDS[a] for a in sorted(combo))
            raise NpuConfigError(
                f"modify_mixlist [{path}]: Operation <{words}> for op <{op_type}> is invalid. The mix list value "
                f"of op type[{op_type}] is invalid: an op may be added to one list and removed from another, "
                "never added to two lists or removed from two.")


def _tf_name_note(name, library):
    """For a TF op type that the engine renames: 'TF MatMul ops become Ascend IR type MatMulV2 on ascend910'.

    Empty for every other name. Two IR types are named when a constant axis picks the "...D" form.
    """
    if name not in renamed_tf_types():
        return ""
    preferred = (ir_candidates(name)[0], ir_candidates(name, True)[0])
    irs = [ir for ir in dict.fromkeys(preferred) if ir in library.types]
    if not irs or irs == [name]:
        return ""
    return f"TF {name} ops become Ascend IR type {' / '.join(irs)} on {library.soc}"


def warn_about_op_types(entries: Iterable[tuple[str, str]], library: OpLibrary) -> None:
    """Warn about op type names a file gives that act on no TF op here or on hardware: TensorFlow names the engine
    renames (MatMul is MatMulV2) and names the library does not know (the closest one suggested).

    entries: (where, name) pairs; `where` starts the message, e.g. "modify_mixlist [path]". After
    _MAX_NAME_WARNINGS warnings the rest are counted in one last warning (a list copied from another soc's library
    can name thousands of types).
    """
    unheard: list[str] = []
    for where, name in entries:
        # The nearest-name search costs milliseconds per name: past the cap only whether a name acts is checked.
        if len(unheard) >= _MAX_NAME_WARNINGS:
            if _acts(name, library):
                continue
        else:
            message = _name_problem(where, name, library)
            if message is None:
                continue
            config_warning(message, strict=library.strict)
        unheard.append(name)
    if len(unheard) > _MAX_NAME_WARNINGS:
        rest = unheard[_MAX_NAME_WARNINGS:]
        config_warning(f"{len(rest)} more op type names act on no op on {library.soc}, as above: "
                       f"{', '.join(rest[:5])}, ...", strict=library.strict)


_MAX_NAME_WARNINGS = 20


def _acts(name, library):
    """Does a list entry name an IR type some TensorFlow op becomes here (what _name_problem accepts)?"""
    return name in library.types and name in reachable_ir_types() and not _tf_name_note(name, library)


def _name_problem(where, name, library):
    note = _tf_name_note(name, library)
    if note:
        also = " (also an IR type of its own, which TF graphs do not produce)" if name in library.types else ""
        return f"{where}: '{name}' is a TensorFlow op type{also}: {note}; name that IR type to change them."
    if name in library.types:
        if name in reachable_ir_types():
            return None
        return (f"{where}: IR type '{name}' is in the {library.soc} operator library, but no TensorFlow op becomes "
                "it in the emulation (on the NPU it comes from a graph fusion pass over several ops, or from another "
                "framework's parser, which npu_bridge does not reproduce), so this entry changes nothing here.")
    close = library.close_matches(name)
    hint = ""
    if close:
        closest_note = _tf_name_note(close[0], library)
        hint = did_you_mean(close) + (f" ({close[0]}: {closest_note})" if closest_note else "")
    return (f"{where}: op type '{name}' is not in the {library.soc} operator library, so this entry has no effect "
            f"(the real adapter ignores it silently).{hint}")


def load_mixlist(path: str, library: OpLibrary) -> dict[str, frozenset[str]]:
    """{op type: frozenset of "<list>.<action>"} from a modify_mixlist file; raises NpuConfigError when bad."""
    data = _parse(path, _read_text(path), library.strict)
    actions = _actions_per_op(path, data)
    _check_legal(path, actions)
    warn_about_op_types(((f"modify_mixlist [{path}]", name) for name in actions), library)
    return {op_type: frozenset(combo) for op_type, combo in actions.items()}


class PrecisionLists:
    """Final list of every IR op type for one session, and why it is there."""

    def __init__(self, library: OpLibrary, mixlist: Mapping[str, frozenset[str]] | None = None,
                 mixlist_path: str | None = None) -> None:
        self.library = library
        self.mixlist_path = mixlist_path
        self._overrides: dict[str, tuple[ListName, str]] = {}
        for op_type, combo in (mixlist or {}).items():
            self._apply(op_type, combo)

    def _builtin(self, ir_type):
        return _LIST_OF_FLAG[self.library.precision_reduce(ir_type)]

    def _builtin_origin(self, ir_type):
        flag = self.library.precision_reduce(ir_type)
        if flag is not None:
            return f"{self.library.describe()} precision_reduce={flag}"
        if ir_type in self.library.types:
            return f"{self.library.describe()}: no precision_reduce (gray)"
        return f"not in the {self.library.describe()} library (gray)"

    def _apply(self, op_type, combo):
        builtin = self._builtin(op_type)
        current, origin = builtin, None
        for list_name in ListName:
            if f"{list_name.value}-list.to-remove" not in combo:
                continue
            if builtin is list_name:
                current, origin = ListName.GRAY, f"{list_name.value}-list.to-remove"
            elif op_type in self.library.types:
                config_warning(f"modify_mixlist [{self.mixlist_path}]: The remove list for op_type [{op_type}] "
                               f"does not match the precision_reduce [{builtin.value}]: "
                               f"{list_name.value}-list.to-remove has no effect.", strict=self.library.strict)
        for list_name in (ListName.BLACK, ListName.WHITE):
            if f"{list_name.value}-list.to-add" in combo and origin is None and builtin is list_name:
                config_warning(f"modify_mixlist [{self.mixlist_path}]: {list_name.value}-list.to-add of '{op_type}' "
                               f"has no effect: it is already {list_name.value} ({self._builtin_origin(op_type)}).",
                               strict=self.library.strict)
        if "black-list.to-add" in combo:
            current, origin = ListName.BLACK, "black-list.to-add"
        elif "white-list.to-add" in combo:
            current, origin = ListName.WHITE, "white-list.to-add"
        elif "gray-list.to-add" in combo and origin is None and builtin is ListName.GRAY:
            config_warning(f"modify_mixlist [{self.mixlist_path}]: gray-list.to-add of '{op_type}' has no effect: "
                           f"it is already gray ({self._builtin_origin(op_type)}).", strict=self.library.strict)
        elif "gray-list.to-add" in combo and origin is None:
            config_warning(f"modify_mixlist [{self.mixlist_path}]: gray-list.to-add of '{op_type}' is accepted "
                           f"but has no effect on the real engine; it stays {builtin.value}. Use "
                           f"{builtin.value}-list.to-remove to make it gray.", strict=self.library.strict)
        if origin is not None:
            self._overrides[op_type] = (current, f"modify_mixlist {self.mixlist_path}: {origin}")

    def list_of(self, ir_type: str) -> ListName:
        if ir_type in self._overrides:
            return self._overrides[ir_type][0]
        return self._builtin(ir_type)

    def edited(self, ir_type: str) -> bool:
        """Did the modify_mixlist file change this op type's list?"""
        return ir_type in self._overrides

    def origin(self, ir_type: str) -> str:
        if ir_type in self._overrides:
            return self._overrides[ir_type][1]
        return self._builtin_origin(ir_type)

    def members(self, list_name: ListName | str) -> frozenset[str]:
        """Every op type of the library (plus mixlist-only names) that ends in list_name."""
        names = self.library.types | set(self._overrides)
        return frozenset(name for name in names if self.list_of(name) is ListName(list_name))


def build_precision_lists(options: "NpuOptions") -> PrecisionLists:
    """The lists a session uses: its soc's operator library plus its modify_mixlist file, if any."""
    settings = options.settings
    library = load_op_library(options.soc, settings.opp_path, settings.strict)
    if options.modify_mixlist is None:
        return PrecisionLists(library)
    return PrecisionLists(library, load_mixlist(options.modify_mixlist, library), options.modify_mixlist)
