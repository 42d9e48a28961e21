"""Operator library: built-in content, the real loading rules, ASCEND_OPP_PATH, errors and caching."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning
from npu_bridge.core.oplib import BUILTIN_ROOT, load_op_library

REPO = Path(__file__).resolve().parents[2]
CONFIG = Path("built-in", "op_impl", "ai_core", "tbe", "config")


@pytest.fixture(autouse=True)
def no_opp_env(monkeypatch):
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)


def test_builtin_910_matches_the_real_counts():
    library = load_op_library("ascend910")
    assert len(library.types) == 613
    flags = [library.precision_reduce(t) for t in library.types]
    assert flags.count("true") == 33 and flags.count("false") == 85 and flags.count(None) == 495
    assert library.precision_reduce("MatMulV2") == "true"
    assert library.precision_reduce("ReduceSumD") == "false"
    assert library.precision_reduce("Add") is None
    assert library.builtin and library.soc == "ascend910"
    assert "built-in ascend910" == library.describe()


def test_builtin_910_dtypes():
    library = load_op_library("ascend910")
    assert library.declared_float_dtypes("MatMulV2") == {"float", "float16"}
    assert library.declared_float_dtypes("Conv2DBackpropInputD") == {"float16"}
    assert not library.supports("Conv2DBackpropInputD", "float")
    assert not library.supports("Conv2DBackpropInputD", "float32")
    assert library.supports("Conv2DBackpropInputD", "float16")
    assert library.declared_float_dtypes("Add") is None  # dynamicFormat: kernel chooses, so anything goes
    assert library.supports("Add", "bfloat16")
    assert library.declared_float_dtypes("LogicalAnd") == frozenset()
    assert not library.supports("MatMulV2", "bfloat16")
    assert library.supports("NotAnOp", "float16")


def test_builtin_json_has_the_real_layout():
    path = BUILTIN_ROOT / CONFIG / "ascend910" / "aic-ascend910-ops-info.json"
    data = json.loads(path.read_text())
    assert data["MatMulV2"]["precision_reduce"] == {"flag": "true"}
    assert data["MatMulV2"]["input0"]["dtype"] == "float16,float"
    assert data["MatMulV2"]["output0"]["name"] == "y0"
    assert data["Add"]["dynamicFormat"] == {"flag": "true"}
    assert "dtype" not in data["Add"]["input0"]
    assert "precision_reduce" not in data["Add"]


def test_generator_output_is_committed_up_to_date():
    data_dir = REPO.parent / "shared" / "data"
    if not data_dir.is_dir():
        pytest.skip("../shared/data is not beside the repository")
    result = subprocess.run([sys.executable, str(REPO / "tools" / "make_builtin_oplib.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_builtin_910b():
    library = load_op_library("ascend910b")
    assert library.declared_float_dtypes("MatMulV2") == {"float", "float16", "bfloat16"}
    assert library.declared_float_dtypes("Conv2DBackpropInputD") == {"float16", "bfloat16"}
    assert library.precision_reduce("MatMulV2") == "true"          # 910 flags carried over
    assert library.precision_reduce("ReduceSumD") == "false"
    assert library.precision_reduce("MatMulV3") == "true"          # docs/BEHAVIOUR.md §3
    assert library.precision_reduce("BatchMatMulV3") == "true"
    assert library.precision_reduce("ScatterNdUpdate") == "true"   # gray on 910, white on 910b
    assert library.precision_reduce("QuantMatmulReduceSum") == "false"
    assert library.declared_float_dtypes("ScatterNdUpdate") == {"float", "float16", "bfloat16"}
    assert len(library.types) == 613 + 25
    assert (BUILTIN_ROOT / CONFIG / "ascend910b" / "README.md").is_file()


def test_soc_without_builtin_library_lists_available():
    with pytest.raises(NpuConfigError) as info:
        load_op_library("ascend310p")
    message = str(info.value)
    assert "ascend310p" in message and "ascend910, ascend910b" in message and "ASCEND_OPP_PATH" in message


def copy_library(tmp_path, soc="ascend910"):
    root = tmp_path / "opp"
    shutil.copytree(BUILTIN_ROOT / CONFIG / soc, root / CONFIG / soc)
    return root


def test_seed_method_edit_precision_reduce_in_a_copy(tmp_path):
    """The documented way: copy the library, change precision_reduce, point ASCEND_OPP_PATH at the copy."""
    root = copy_library(tmp_path)
    path = root / CONFIG / "ascend910" / "aic-ascend910-ops-info.json"
    data = json.loads(path.read_text())
    data["Reduction"]["precision_reduce"]["flag"] = "true"
    data["Add"]["precision_reduce"] = {"flag": "false"}
    path.write_text(json.dumps(data))
    library = load_op_library("ascend910", str(root))
    assert library.precision_reduce("Reduction") == "true"
    assert library.precision_reduce("Add") == "false"
    assert not library.builtin and str(root) in library.source
    assert str(root) in library.describe()
    assert load_op_library("ascend910").precision_reduce("Add") is None


def test_every_json_in_the_folder_loads_legacy_first_then_shorter_names(tmp_path):
    folder = tmp_path / "opp" / CONFIG / "ascend310p"
    folder.mkdir(parents=True)
    (folder / "aic-ascend310p-ops-info-legacy.json").write_text(json.dumps(
        {"Foo": {"precision_reduce": {"flag": "true"}}, "Bar": {}, "Baz": {"precision_reduce": {"flag": "true"}}}))
    (folder / "aic-ascend310p-ops-info.json").write_text(json.dumps({"Foo": {"precision_reduce": {"flag": "false"}}}))
    (folder / "aic-ascend310p-ops-info-zz.json").write_text(json.dumps({"Foo": {}, "Qux": {}}))
    (folder / "notes.txt").write_text("not json, not loaded")
    library = load_op_library("ascend310p", str(tmp_path / "opp"))
    assert library.types == {"Foo", "Bar", "Baz", "Qux"}
    assert library.precision_reduce("Foo") is None       # the longest name is read last and wins
    assert library.precision_reduce("Baz") == "true"


def test_older_cann_layout_is_accepted(tmp_path):
    folder = tmp_path / "op_impl" / "built-in" / "ai_core" / "tbe" / "config" / "ascend910"
    folder.mkdir(parents=True)
    (folder / "aic-ascend910-ops-info.json").write_text(json.dumps({"MatMulV2": {"precision_reduce": {"flag": "false"}}}))
    assert load_op_library("ascend910", str(tmp_path)).precision_reduce("MatMulV2") == "false"


def test_malformed_json_names_the_file(tmp_path):
    root = tmp_path / "opp"
    folder = root / CONFIG / "ascend910"
    folder.mkdir(parents=True)
    bad = folder / "aic-ascend910-ops-info.json"
    bad.write_text('{"MatMulV2": {"precision_reduce": {"flag": "true"}},}')
    with pytest.raises(NpuConfigError) as info:
        load_op_library("ascend910", str(root))
    assert str(bad) in str(info.value) and "not valid JSON" in str(info.value)
    bad.write_text('["MatMulV2"]')
    with pytest.raises(NpuConfigError, match="must be one JSON object"):
        load_op_library("ascend910", str(root))


def test_missing_soc_folder_under_opp_path(tmp_path):
    root = copy_library(tmp_path)
    with pytest.raises(NpuConfigError) as info:
        load_op_library("ascend910b", str(root))
    assert "ascend910b" in str(info.value) and "socs found there: ascend910" in str(info.value)
    empty = tmp_path / "empty"
    (empty / CONFIG / "ascend910").mkdir(parents=True)
    with pytest.raises(NpuConfigError, match=r"has no \*\.json"):
        load_op_library("ascend910", str(empty))


def test_unknown_flag_value_warns_and_is_gray(tmp_path):
    folder = tmp_path / CONFIG / "ascend910"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text(json.dumps({"Foo": {"precision_reduce": {"flag": "True"}}}))
    with pytest.warns(NpuConfigWarning, match="only \"true\" and \"false\""):
        library = load_op_library("ascend910", str(tmp_path))
    assert library.precision_reduce("Foo") is None


def test_cache_reloads_after_an_edit(tmp_path):
    folder = tmp_path / CONFIG / "ascend910"
    folder.mkdir(parents=True)
    path = folder / "aic-ascend910-ops-info.json"
    path.write_text(json.dumps({"Foo": {"precision_reduce": {"flag": "true"}}}))
    first = load_op_library("ascend910", str(tmp_path))
    assert load_op_library("ascend910", str(tmp_path)) is first
    path.write_text(json.dumps({"Foo": {"precision_reduce": {"flag": "false"}}, "Bar": {}}))
    os.utime(path, ns=(first_ns := path.stat().st_mtime_ns + 10**9, first_ns))
    second = load_op_library("ascend910", str(tmp_path))
    assert second is not first and second.precision_reduce("Foo") == "false"


def test_closest():
    library = load_op_library("ascend910")
    assert library.closest("MatMu1V2") == "MatMulV2"
    assert library.closest("matmulv2") == "MatMulV2"
    assert library.closest("reducesumd") == "ReduceSumD"
    assert library.closest("SoftmaxV2") == "SoftmaxV2"
    assert library.closest("CompletelyDifferentThing") is None
