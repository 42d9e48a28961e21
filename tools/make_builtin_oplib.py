"""Generate npu_bridge's built-in operator libraries (ops-info JSON) from the fact tables in ../shared/data.

    python tools/make_builtin_oplib.py [--data ../shared/data] [--check]

What each library is based on:

ascend910 (aic-ascend910-ops-info.json)
    The 613 op types of the real CANN Ascend910 TBE op-info file described in ../shared/data/README.md, with
    their precision_reduce flags (33 true, 85 false, the rest absent = gray). The fact table keeps only the
    SET of floating dtypes an op declares on its inputs and on its outputs, not the per-position lists nor
    the non-float dtypes, so every inputN gets the op's input float set and every outputN its output float
    set ("float16,float" in the real spelling). A side that declares dtypes but no float one is written
    with an empty dtype list. The 74 ops that declare no dtype at all get "dynamicFormat": {"flag": "true"}
    and no "dtype" field, exactly like the real file: their kernel picks the dtype at compile time.
    Input/output "name" fields are x0.. / y0.. (the real parameter names are not in the table).

ascend910b (aic-ascend910b-ops-info-legacy.json + aic-ascend910b-ops-info.json)
    No public copy of the 910B built-in file exists (docs/BEHAVIOUR.md §3). We build it as:
    - the same op set and flags as ascend910, with "bfloat16" added wherever "float16" is declared (910B
      kernels of the classic TBE ops gained bf16); written to the "-legacy" file, as real CANN splits it;
    - the precision_reduce flags that the open-source op definitions set for "ascend910b" (26 true, 2 false:
      docs/BEHAVIOUR.md §3) override those ops; ops new on 910B (MatMulV3, BatchMatMulV3, ...)
      are added with no declared dtype. Those entries go to aic-ascend910b-ops-info.json, which the loader
      reads after the legacy file.
"""
import argparse
import csv
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "npu_bridge" / "core" / "opp" / "built-in" / "op_impl" / "ai_core" / "tbe" / "config"

# docs/BEHAVIOUR.md §3, "ascend910b" configs of hicann/ops-nn + ops-math.
ASCEND910B_TRUE = (
    "AddExample", "AddExampleCApi", "ApplyAdamWV2", "BatchMatMulV3", "BatchNormGradV3", "BesselI1e",
    "Conv3DBackpropFilterV2", "Conv3DBackpropInputV2", "Conv3DTransposeV2", "DynamicBlockQuant",
    "DynamicQuantUpdateScatter", "FusedQuantMatMul", "GLU", "GroupedBiasAddGrad", "MaskedScatter",
    "MaskedSoftmaxWithRelPosBias", "MatMulV3", "QuantBatchMatmulV3", "QuantBatchMatmulV4", "RotateQuant", "STFT",
    "ScatterList", "ScatterNdUpdate", "Sparse4to2QuantMatmul", "TransQuantParamV2", "WeightQuantBatchMatmulV2",
)
ASCEND910B_FALSE = ("QuantMatmulReduceSum", "SmoothL1Loss")

FLOAT_ORDER = ("float16", "float", "bfloat16", "double")


def read_table(data_dir):
    with open(data_dir / "ascend910-ops-info.tsv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    undeclared = set((data_dir / "ascend910-ops-dtype-undeclared.txt").read_text(encoding="utf-8").split())
    return rows, undeclared


def dtype_list(cell, add_bf16):
    found = set(filter(None, cell.split(",")))
    if add_bf16 and "float16" in found:
        found.add("bfloat16")
    return ",".join(d for d in FLOAT_ORDER if d in found)


def op_entry(row, undeclared, add_bf16=False, flag=None):
    entry = {}
    flag = flag if flag is not None else row["precision_reduce"]
    if flag:
        entry["precision_reduce"] = {"flag": flag}
    declared = row["op_type"] not in undeclared
    for side, prefix, column, count in (("in", "input", "float_dtypes_in", "n_inputs"),
                                        ("out", "output", "float_dtypes_out", "n_outputs")):
        for index in range(int(row[count])):
            port = {"name": f"{'x' if side == 'in' else 'y'}{index}"}
            if declared:
                port["dtype"] = dtype_list(row[column], add_bf16)
            entry[f"{prefix}{index}"] = port
    if not declared:
        entry["dynamicFormat"] = {"flag": "true"}
    return entry


def build_libraries(data_dir):
    """{relative file path: library dict} for every built-in soc."""
    rows, undeclared = read_table(data_dir)
    ascend910 = {row["op_type"]: op_entry(row, undeclared) for row in rows}

    flags_910b = {**{op: "true" for op in ASCEND910B_TRUE}, **{op: "false" for op in ASCEND910B_FALSE}}
    legacy_910b, new_910b = {}, {}
    for row in rows:
        op = row["op_type"]
        target = new_910b if op in flags_910b else legacy_910b
        target[op] = op_entry(row, undeclared, add_bf16=True, flag=flags_910b.get(op))
    for op, flag in flags_910b.items():
        new_910b.setdefault(op, {"precision_reduce": {"flag": flag}, "dynamicFormat": {"flag": "true"}})

    return {
        "ascend910/aic-ascend910-ops-info.json": ascend910,
        "ascend910b/aic-ascend910b-ops-info-legacy.json": legacy_910b,
        "ascend910b/aic-ascend910b-ops-info.json": dict(sorted(new_910b.items())),
    }


def render(library):
    return json.dumps(library, indent=4, ensure_ascii=False) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--check", action="store_true", help="fail if the committed files are out of date")
    args = parser.parse_args(argv)
    stale = []
    for relative, library in build_libraries(args.data).items():
        path = CONFIG / relative
        text = render(library)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({len(library)} op types)")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
