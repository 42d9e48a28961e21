"""modify_mixlist parsing, legality, application, name warnings; the seed document's four examples."""
import json
import re
import shutil
from pathlib import Path

import pytest

from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning
from npu_bridge.core.mixlist import ListName, PrecisionLists, build_precision_lists, load_mixlist
from npu_bridge.core.oplib import BUILTIN_ROOT, load_op_library
from npu_bridge.core.options import NpuOptions, PrecisionMode
from npu_bridge.core.settings import CoreSettings

# The seed document's example file, verbatim (// comments included).
SEED_EXAMPLE = """{
  "black-list": {                  // 黑名单
     "to-remove": [                // 黑名单算子转换为灰名单算子
     "Xlog1py"
     ],
     "to-add": [                   // 白名单或灰名单算子转换为黑名单算子
     "Matmul",
     "Cast"
     ]
  },
  "white-list": {                  // 白名单
     "to-remove": [                // 白名单算子转换为灰名单算子 
     "Conv2D"
     ],
     "to-add": [                   // 黑名单或灰名单算子转换为白名单算子
     "Bias"
     ]
  }
}
"""


@pytest.fixture(autouse=True)
def no_opp_env(monkeypatch):
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)


@pytest.fixture
def library():
    return load_op_library("ascend910")


def write(tmp_path, content, name="ops_info.json"):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def lists_for(path, mode=PrecisionMode.MIXED_FP16):
    return build_precision_lists(NpuOptions(mode=mode, mode_name="allow_mix_precision", modify_mixlist=path))


def test_builtin_lists_without_mixlist():
    lists = build_precision_lists(NpuOptions(mode=PrecisionMode.MIXED_FP16))
    assert lists.list_of("MatMulV2") is ListName.WHITE
    assert lists.list_of("ReduceSumD") is ListName.BLACK
    assert lists.list_of("Add") is ListName.GRAY
    assert lists.list_of("NotAnOp") is ListName.GRAY
    assert lists.origin("MatMulV2") == "built-in ascend910 precision_reduce=true"
    assert lists.origin("Add") == "built-in ascend910: no precision_reduce (gray)"
    assert "not in the built-in ascend910 library" in lists.origin("NotAnOp")
    assert len(lists.members("white")) == 33 and len(lists.members(ListName.BLACK)) == 85
    assert lists.library.soc == "ascend910"
    assert ListName.WHITE == "white"


def test_seed_example_with_comments_fails_like_the_real_parser(tmp_path):
    path = write(tmp_path, SEED_EXAMPLE)
    with pytest.raises(NpuConfigError) as info:
        lists_for(path)
    message = str(info.value)
    assert "The configuration file is not in JSON format or its content is invalid" in message
    assert path in message and "// comments" in message and "line 2" in message


def test_seed_example_without_comments(tmp_path):
    path = write(tmp_path, re.sub(r"//.*", "", SEED_EXAMPLE))
    with pytest.warns(NpuConfigWarning) as record:
        lists = lists_for(path)
    assert lists.list_of("Cast") is ListName.BLACK
    assert lists.origin("Cast") == f"modify_mixlist {path}: black-list.to-add"
    assert lists.list_of("Conv2D") is ListName.GRAY
    assert lists.origin("Conv2D") == f"modify_mixlist {path}: white-list.to-remove"
    assert lists.list_of("Bias") is ListName.WHITE
    assert lists.list_of("MatMulV2") is ListName.WHITE        # "Matmul" matches nothing
    assert lists.list_of("MatMul") is ListName.WHITE
    messages = [str(r.message) for r in record]
    matmul = next(m for m in messages if "'Matmul'" in m)
    assert "Did you mean 'MatMul'?" in matmul and "TF MatMul ops become Ascend IR type MatMulV2" in matmul
    assert any("'Xlog1py' is not in the ascend910 operator library" in m for m in messages)


def test_seed_a_moved_from_white_to_black(tmp_path):
    path = write(tmp_path, {"black-list": {"to-add": ["MatMulV2"]}})
    lists = lists_for(path)
    assert lists.list_of("MatMulV2") is ListName.BLACK


def test_a_byte_order_mark_is_skipped_like_the_real_json_parser(tmp_path):
    path = tmp_path / "mixlist.json"
    path.write_text(json.dumps({"black-list": {"to-add": ["MatMulV2"]}}), encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert lists_for(str(path)).list_of("MatMulV2") is ListName.BLACK


def test_seed_a_removed_from_white_and_added_to_black(tmp_path):
    path = write(tmp_path, {"black-list": {"to-add": ["MatMulV2"]}, "white-list": {"to-remove": ["MatMulV2"]}})
    lists = lists_for(path)
    assert lists.list_of("MatMulV2") is ListName.BLACK
    assert lists.origin("MatMulV2").endswith("black-list.to-add")


def test_seed_a_only_removed_from_white_ends_gray(tmp_path):
    path = write(tmp_path, {"white-list": {"to-remove": ["MatMulV2"]}})
    lists = lists_for(path)
    assert lists.list_of("MatMulV2") is ListName.GRAY
    assert lists.list_of("BatchMatMulV2") is ListName.WHITE


def test_black_removal_and_white_addition(tmp_path):
    path = write(tmp_path, {"black-list": {"to-remove": ["ReduceSumD"]}, "white-list": {"to-add": ["Add"]}})
    lists = lists_for(path)
    assert lists.list_of("ReduceSumD") is ListName.GRAY
    assert lists.list_of("Add") is ListName.WHITE


def test_removal_from_the_wrong_list_warns_and_does_nothing(tmp_path):
    path = write(tmp_path, {"black-list": {"to-remove": ["MatMulV2"]}})
    with pytest.warns(NpuConfigWarning, match=re.escape(
            "The remove list for op_type [MatMulV2] does not match the precision_reduce [white]")):
        lists = lists_for(path)
    assert lists.list_of("MatMulV2") is ListName.WHITE
    assert lists.origin("MatMulV2") == "built-in ascend910 precision_reduce=true"


def test_gray_add_is_accepted_but_changes_nothing(tmp_path):
    path = write(tmp_path, {"gray-list": {"to-add": ["MatMulV2"]}})
    with pytest.warns(NpuConfigWarning, match="gray-list.to-add of 'MatMulV2' is accepted but has no effect"):
        lists = lists_for(path)
    assert lists.list_of("MatMulV2") is ListName.WHITE


def test_gray_add_of_an_op_already_gray_says_so(tmp_path, library):
    gray = next(name for name in sorted(library.types) if library.precision_reduce(name) is None)
    path = write(tmp_path, {"gray-list": {"to-add": [gray]}})
    with pytest.warns(NpuConfigWarning) as record:
        lists = lists_for(path)
    message = str(record[0].message)
    assert f"gray-list.to-add of '{gray}' has no effect: it is already gray" in message
    assert "to-remove" not in message
    assert lists.list_of(gray) is ListName.GRAY


def test_a_swapped_pair_of_letters_suggests_up_to_three_types_nearest_first(tmp_path, library):
    path = write(tmp_path, {"black-list": {"to-add": ["Tahn"]}})
    with pytest.warns(NpuConfigWarning) as record:
        load_mixlist(path, library)
    assert "Did you mean 'Tanh'" in str(record[0].message)
    assert library.close_matches("Tahn")[0] == "Tanh" and len(library.close_matches("Tahn")) <= 3


def test_gray_add_with_white_remove_is_gray(tmp_path):
    path = write(tmp_path, {"gray-list": {"to-add": ["MatMulV2"]}, "white-list": {"to-remove": ["MatMulV2"]}})
    assert lists_for(path).list_of("MatMulV2") is ListName.GRAY


def test_white_add_with_gray_remove(tmp_path):
    path = write(tmp_path, {"white-list": {"to-add": ["Add"]}, "gray-list": {"to-remove": ["Add"]}})
    assert lists_for(path).list_of("Add") is ListName.WHITE


@pytest.mark.parametrize("content, words", [
    ({"black-list": {"to-add": ["Cast"]}, "white-list": {"to-add": ["Cast"]}}, "add black list, add white list"),
    ({"black-list": {"to-remove": ["Cast"]}, "white-list": {"to-remove": ["Cast"]}},
     "remove black list, remove white list"),
    ({"gray-list": {"to-remove": ["Cast"]}}, "remove gray list"),
    ({"black-list": {"to-add": ["Cast"], "to-remove": ["Cast"]}}, "add black list, remove black list"),
    ({"gray-list": {"to-add": ["Cast"]}, "white-list": {"to-add": ["Cast"]}}, "add gray list, add white list"),
])
def test_illegal_combinations(tmp_path, content, words):
    path = write(tmp_path, content)
    with pytest.raises(NpuConfigError) as info:
        lists_for(path)
    assert f"Operation <{words}> for op <Cast> is invalid" in str(info.value)
    assert path in str(info.value)


def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.json")
    with pytest.raises(NpuConfigError, match=re.escape(f"cannot open file [{path}]")):
        lists_for(path)


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(NpuConfigError, match="cannot open file"):
        lists_for(str(tmp_path))


@pytest.mark.parametrize("content", ["", "  \n"])
def test_empty_file(tmp_path, content):
    path = write(tmp_path, content)
    with pytest.raises(NpuConfigError, match=re.escape(f"The file at path [{path}] is empty.")):
        lists_for(path)


def test_not_json(tmp_path):
    path = write(tmp_path, '{"black-list": {"to-add": ["Cast",]}}')
    with pytest.raises(NpuConfigError) as info:
        lists_for(path)
    assert "not in JSON format" in str(info.value) and "// comments" not in str(info.value)


def test_a_double_slash_inside_a_string_is_not_taken_for_a_comment(tmp_path):
    path = write(tmp_path, '{"black-list": {"to-add": ["MatMulV2"], "note": "see http://example.com"},}')
    with pytest.raises(NpuConfigError, match="not in JSON format") as caught:
        load_mixlist(path, load_op_library("ascend910"))
    assert "comments" not in str(caught.value)


def test_wrong_top_level_key(tmp_path):
    path = write(tmp_path, {"blacklist": {"to-add": ["Cast"]}})
    with pytest.raises(NpuConfigError, match=re.escape(
            f"Top level of json [{path}] should be 'gray-list' or 'white-list' or 'black-list'.")):
        lists_for(path)


def test_top_level_not_an_object(tmp_path):
    with pytest.raises(NpuConfigError, match="Top level of json"):
        lists_for(write(tmp_path, '["Cast"]'))


def test_wrong_second_level_key(tmp_path):
    path = write(tmp_path, {"black-list": {"add": ["Cast"]}})
    with pytest.raises(NpuConfigError, match="should be either to-add or to-remove."):
        lists_for(path)


def test_second_level_not_an_object(tmp_path):
    with pytest.raises(NpuConfigError, match="to-add and/or to-remove"):
        lists_for(write(tmp_path, {"black-list": ["Cast"]}))


def test_third_level_not_an_array(tmp_path):
    path = write(tmp_path, {"black-list": {"to-add": "Cast"}})
    with pytest.raises(NpuConfigError, match="The third level of the JSON should be an array."):
        lists_for(path)


def test_array_entry_not_a_string(tmp_path):
    with pytest.raises(NpuConfigError, match="op type string"):
        lists_for(write(tmp_path, {"black-list": {"to-add": [3]}}))


@pytest.mark.parametrize("name, closest", [("MatMu1V2", "MatMulV2"), ("matmulv2", "MatMulV2"),
                                           ("ReduceSumd", "ReduceSumD")])
def test_misspelt_names_warn_with_the_closest_type(tmp_path, library, name, closest):
    path = write(tmp_path, {"black-list": {"to-add": [name]}})
    with pytest.warns(NpuConfigWarning, match=re.escape(f"'{name}' is not in the ascend910 operator library")) \
            as record:
        actions = load_mixlist(path, library)
    assert f"Did you mean '{closest}'?" in str(record[0].message)
    assert actions == {name: frozenset({"black-list.to-add"})}
    with pytest.warns(NpuConfigWarning):
        lists = lists_for(path)
    assert lists.origin(closest).startswith("built-in ascend910")


@pytest.mark.parametrize("tf_name, ir", [("MatMul", "MatMulV2"), ("Sum", "ReduceSum"), ("Softmax", "SoftmaxV2"),
                                         ("Mean", "ReduceMean")])
def test_tensorflow_names_warn_with_the_ir_type(tmp_path, library, tf_name, ir):
    path = write(tmp_path, {"black-list": {"to-add": [tf_name]}})
    with pytest.warns(NpuConfigWarning, match=f"'{tf_name}' is a TensorFlow op type") as record:
        load_mixlist(path, library)
    assert f"TF {tf_name} ops become Ascend IR type {ir}" in str(record[0].message)


def test_many_unknown_names_are_summarised_after_twenty(tmp_path, library):
    names = [f"NoSuchOp{i}" for i in range(500)]
    with pytest.warns(NpuConfigWarning) as caught:
        load_mixlist(write(tmp_path, {"black-list": {"to-add": names}}), library)
    assert len(caught) == 21
    assert "480 more op type names act on no op on ascend910" in str(caught[-1].message)


@pytest.mark.parametrize("name", ["LayerNorm", "ConfusionSoftmaxGrad", "SquareSumV1"])
def test_library_types_no_tensorflow_op_becomes_warn_that_they_change_nothing_here(tmp_path, library, name):
    """Real mixlists name ops the NPU's fusion passes make (Transformer's LayerNorm): they are in the library, but no
    op of an emulated graph has that type, so the entry would otherwise act on nothing in silence."""
    path = write(tmp_path, {"black-list": {"to-add": [name]}})
    with pytest.warns(NpuConfigWarning, match=re.escape(f"IR type '{name}' is in the ascend910 operator library, "
                                                        "but no TensorFlow op becomes it")):
        load_mixlist(path, library)


def test_correct_names_do_not_warn(tmp_path, library, recwarn):
    path = write(tmp_path, {"black-list": {"to-add": ["ReduceSumD", "SoftmaxV2", "Add", "Mul", "Cast", "ReluGradV2",
                                                      "Conv3DBackpropFilterD", "DynamicRNN"]}})
    load_mixlist(path, library)
    assert not [w for w in recwarn if issubclass(w.category, NpuConfigWarning)]


def _edited_library(tmp_path, encoding="utf-8"):
    """Options reading a copy of the built-in ascend910 library with Add made black, saved in `encoding`, from
    the OPP root their settings name (ASCEND_OPP_PATH)."""
    config = Path("built-in", "op_impl", "ai_core", "tbe", "config", "ascend910")
    shutil.copytree(BUILTIN_ROOT / config, tmp_path / "opp" / config)
    lib_file = tmp_path / "opp" / config / "aic-ascend910-ops-info.json"
    data = json.loads(lib_file.read_text())
    data["Add"]["precision_reduce"] = {"flag": "false"}
    lib_file.write_text(json.dumps(data), encoding=encoding)
    return NpuOptions(mode=PrecisionMode.MIXED_FP16, settings=CoreSettings(opp_path=str(tmp_path / "opp")))


def test_lists_use_the_edited_library_from_ascend_opp_path(tmp_path):
    lists = build_precision_lists(_edited_library(tmp_path))
    assert lists.list_of("Add") is ListName.BLACK
    assert str(tmp_path / "opp") in lists.origin("Add")


def test_an_edited_library_saved_with_a_byte_order_mark_loads(tmp_path):
    assert build_precision_lists(_edited_library(tmp_path, encoding="utf-8-sig")).list_of("Add") is ListName.BLACK


def test_910b_lists(tmp_path):
    lists = build_precision_lists(NpuOptions(mode=PrecisionMode.MIXED_BF16, soc="ascend910b"))
    assert lists.list_of("MatMulV3") is ListName.WHITE
    assert lists.list_of("MatMulV2") is ListName.WHITE
    assert lists.library.soc == "ascend910b"


def test_precision_lists_can_be_built_directly(library):
    lists = PrecisionLists(library, {"Cast": frozenset({"black-list.to-add"})}, "x.json")
    assert lists.list_of("Cast") is ListName.BLACK and lists.origin("Cast") == "modify_mixlist x.json: black-list.to-add"
