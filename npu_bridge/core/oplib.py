"""The operator information library: which IR op types exist on a soc, their precision_reduce flag, their dtypes.

This is what makes an op white, black or gray. We read it the way the Ascend fusion engine does, so a user
who edits the library (the documented, if discouraged, way of changing the lists) can do the same here:
copy the tree, edit "precision_reduce", and point ASCEND_OPP_PATH at the copy.

    $ASCEND_OPP_PATH/built-in/op_impl/ai_core/tbe/config/<soc>/aic-<soc>-ops-info*.json

Every *.json file in the soc folder is loaded: files whose name contains "legacy" first, then shorter names
first; an op type defined again in a later file replaces the earlier definition. Older CANN put the same
folder under op_impl/built-in/ai_core/tbe/config; that layout is accepted too. Without ASCEND_OPP_PATH the
libraries shipped in npu_bridge/core/opp are used (see tools/make_builtin_oplib.py for their provenance).
"""
import json
from pathlib import Path

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.options import config_warning

BUILTIN_ROOT = Path(__file__).resolve().parent / "opp"
_CONFIG_DIRS = (
    Path("built-in", "op_impl", "ai_core", "tbe", "config"),
    Path("op_impl", "built-in", "ai_core", "tbe", "config"),
)
# Ascend spellings of float dtypes -> the names OpLibrary answers with.
_FLOAT_SPELLINGS = {"float": "float", "float32": "float", "fp32": "float", "float16": "float16", "fp16": "float16",
                    "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16", "double": "double",
                    "float64": "double"}


class OpLibrary:
    """One soc's operator library, merged from the JSON files of its folder."""

    def __init__(self, soc: str, source: str, entries: dict[str, dict], builtin: bool, strict: bool = False) -> None:
        self.soc = soc
        self.source = source
        self.builtin = builtin
        # Warnings about this library and about the files read against it (modify_mixlist, customize_dtypes) are
        # NpuConfigErrors when strict (CoreSettings.strict).
        self.strict = strict
        self.types = frozenset(entries)
        self._entries = entries
        # Flags are read now, so a malformed one is reported when the library loads. Ports are read per op type
        # on first use: a graph asks about a few dozen of the library's ~600 types, and reading them all was
        # half of the built-in library's 5 ms load, paid in every process's first step.
        self._flags = {ir_type: _flag_of(ir_type, entry, source, strict) for ir_type, entry in entries.items()}
        self._ports: dict[str, tuple] = {}
        self._by_lower = {name.lower(): name for name in self.types}

    def __repr__(self):
        return f"OpLibrary({self.soc!r}, {len(self.types)} op types from {self.source})"

    def describe(self) -> str:
        """How reasons name this library: "built-in ascend910" or "ascend910 library in /path"."""
        return f"built-in {self.soc}" if self.builtin else f"{self.soc} library in {self.source}"

    def _ports_of(self, ir_type):
        """(declared dtypes, declared float dtypes, declared inputs) of an op type; all None if it is unknown."""
        ports = self._ports.get(ir_type)
        if ports is None:
            entry = self._entries.get(ir_type)
            if entry is None:
                return None, None, None
            dtypes = _dtypes_of(entry)
            inputs = sum(1 for key, port in entry.items() if key.startswith("input") and isinstance(port, dict))
            ports = self._ports[ir_type] = (dtypes or None, _float_dtypes_of(dtypes), inputs or None)
        return ports

    def precision_reduce(self, ir_type: str) -> str | None:
        """"true" (white), "false" (black) or None (no flag: gray, or not in the library)."""
        return self._flags.get(ir_type)

    def declared_float_dtypes(self, ir_type: str) -> frozenset[str] | None:
        """Float dtypes the op declares ({"float", "float16", "bfloat16", "double"}); None if it declares none."""
        return self._ports_of(ir_type)[1]

    def declared_dtypes(self, ir_type):
        """Every dtype the op's ports declare, in TensorFlow names ("float32", "float16", "int8", ...); None if the
        op declares none (dynamicFormat ops, ops the library lacks)."""
        return self._ports_of(ir_type)[0]

    def declared_inputs(self, ir_type):
        """How many inputs (input0, input1, ...) the op's entry declares, optional ones included; None if none."""
        return self._ports_of(ir_type)[2]

    def supports(self, ir_type: str, dtype: str) -> bool:
        """Whether the op's kernel takes this float dtype. Undeclared (dynamicFormat) and unknown ops: yes."""
        declared = self._ports_of(ir_type)[1]
        if declared is None:
            return True
        return _FLOAT_SPELLINGS.get(dtype, dtype) in declared

    def close_matches(self, name: str, limit: int = 3) -> list[str]:
        """Up to `limit` known IR types near `name`, nearest first: a case-insensitive match alone, else by edit
        distance (a swap of neighbouring letters is one edit: Tahn -> Tanh), ties going to the same letters
        rearranged, then to the closer length. Empty when nothing is close."""
        if name in self.types:
            return [name]
        lowered = name.lower()
        if lowered in self._by_lower:
            return [self._by_lower[lowered]]
        budget = max(1, len(name) // 4)
        scored = []
        for candidate_lower, candidate in self._by_lower.items():
            length_gap = abs(len(candidate_lower) - len(lowered))
            if length_gap > budget:
                continue
            distance = _edit_distance(lowered, candidate_lower)
            if distance <= budget:
                scored.append((distance, sorted(candidate_lower) != sorted(lowered), length_gap, candidate))
        return [candidate for *_, candidate in sorted(scored)[:limit]]

    def closest(self, name: str) -> str | None:
        """The known IR type nearest to name (see close_matches), or None if none is close."""
        matches = self.close_matches(name, 1)
        return matches[0] if matches else None


def _edit_distance(a, b):
    """Edits (insert, delete, replace, swap of neighbours) turning a into b."""
    rows = [list(range(len(b) + 1))]
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            cost = min(rows[-1][j] + 1, current[j - 1] + 1, rows[-1][j - 1] + (char_a != char_b))
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                cost = min(cost, rows[-2][j - 2] + 1)
            current.append(cost)
        rows.append(current)
    return rows[-1][-1]


def _flag_of(ir_type, entry, source, strict):
    reduce = entry.get("precision_reduce")
    if reduce is not None and not isinstance(reduce, dict):
        config_warning(f"operator library {source}: {ir_type}.precision_reduce is {reduce!r}, not an object such as "
                       f'{{"flag": "{reduce if reduce in ("true", "false") else "true"}"}}; the Ascend fusion engine '
                       "reads no flag from it, so the op is gray", strict=strict)
        return None
    flag = reduce.get("flag") if reduce is not None else None
    if flag is None or flag in ("true", "false"):
        return flag
    message = (f"operator library {source}: {ir_type}.precision_reduce.flag is {flag!r}; only \"true\" and "
               "\"false\" mean anything to the Ascend fusion engine, so the op is gray")
    config_warning(message, strict=strict)
    return None


# Ascend dtype spellings whose TensorFlow name differs.
_TF_NAMES = {"float": "float32", "fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16",
             "double": "float64"}


def _dtypes_of(entry):
    """Every dtype the entry's ports declare, in TensorFlow names; None when no port has a "dtype" key."""
    declared = False
    found = set()
    for key, port in entry.items():
        if (key.startswith("input") or key.startswith("output")) and isinstance(port, dict) and "dtype" in port:
            declared = True
            for token in str(port["dtype"]).split(","):
                token = token.strip().lower()
                if token:
                    found.add(_TF_NAMES.get(token, token))
    return frozenset(found) if declared else None


def _float_dtypes_of(dtypes):
    """The float dtypes among `dtypes` (from _dtypes_of), in the names OpLibrary answers with."""
    if dtypes is None:
        return None
    return frozenset(_FLOAT_SPELLINGS[dtype] for dtype in dtypes if dtype in _FLOAT_SPELLINGS)


def _file_order(path):
    return ("legacy" not in path.name, len(path.name), path.name)


def _soc_folder(root, soc):
    for config in _CONFIG_DIRS:
        folder = Path(root) / config / soc
        if folder.is_dir():
            return folder
    return None


def available_socs(root: str | Path) -> list[str]:
    """Soc folders that exist under an OPP root."""
    found: set[str] = set()
    for config in _CONFIG_DIRS:
        folder = Path(root) / config
        if folder.is_dir():
            found.update(child.name for child in folder.iterdir() if child.is_dir() and any(child.glob("*.json")))
    return sorted(found)


def _read_json(path):
    try:
        text = path.read_text(encoding="utf-8-sig")     # a byte order mark is skipped, as by the real parser
    except (OSError, UnicodeDecodeError) as err:
        raise NpuConfigError(f"operator library file {path} cannot be read: {err}") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise NpuConfigError(f"operator library file {path} is not valid JSON that can be read: arrays or objects "
                             "nested too deeply (an op entry nests at most a few levels)") from None
    except json.JSONDecodeError as err:
        raise NpuConfigError(
            f"operator library file {path} is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})"
        ) from None
    if not isinstance(data, dict) or not all(isinstance(value, dict) for value in data.values()):
        raise NpuConfigError(
            f"operator library file {path} must be one JSON object mapping each op type to an object "
            '(e.g. {"MatMulV2": {"precision_reduce": {"flag": "true"}, ...}})'
        )
    return data


_cache: dict[tuple, OpLibrary] = {}


def load_op_library(soc: str, opp_path: str | None = None, strict: bool = False) -> OpLibrary:
    """The operator library of a soc folder name, from the OPP root `opp_path` (CoreSettings.opp_path, i.e.
    ASCEND_OPP_PATH), else the built-in copy. `strict`: its warnings are NpuConfigErrors.

    Cached per (root, soc, file names and modification times, strict), so an edited library is picked up.
    """
    builtin = not opp_path
    root = Path(opp_path) if opp_path else BUILTIN_ROOT
    folder = _soc_folder(root, soc)
    if folder is None:
        available = available_socs(root)
        if builtin:
            raise NpuConfigError(
                f"npu_bridge has no built-in operator library for soc '{soc}'; built-in libraries: "
                f"{', '.join(available)}. Choose one of those (soc_config / NPU_BRIDGE_SOC) or set ASCEND_OPP_PATH "
                f"to an OPP root that has built-in/op_impl/ai_core/tbe/config/{soc}/aic-{soc}-ops-info.json."
            )
        raise NpuConfigError(
            f"ASCEND_OPP_PATH {root} has no operator library folder for soc '{soc}' (looked for "
            f"{root / _CONFIG_DIRS[0] / soc}); socs found there: {', '.join(available) or 'none'}."
        )
    files = sorted(folder.glob("*.json"), key=_file_order)
    if not files:
        raise NpuConfigError(f"operator library folder {folder} has no *.json file for soc '{soc}'.")
    key = (str(root), soc, tuple((path.name, path.stat().st_mtime_ns, path.stat().st_size) for path in files), strict)
    if key not in _cache:
        entries = {}
        for path in files:
            entries.update(_read_json(path))
        _cache[key] = OpLibrary(soc, str(folder), entries, builtin, strict)
    return _cache[key]
