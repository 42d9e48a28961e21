"""`npu-debug compare -m MY_DUMP -g GOLDEN_DUMP`: two dumps compared op by op, in either file layout."""
import csv
import glob
import json
import os

import pytest

from npu_bridge.debug import dumpdata
from npu_bridge.debug.cli import main as npu_debug
from npu_bridge.debug.compare import COLUMNS

from .conftest import dump_small_model


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("dumps")
    for side in ("mixed", "fp32"):
        os.makedirs(root / side)
    mixed = dump_small_model(root / "mixed", enable_dump=True, precision_mode_v2="mixed_float16")
    fp32 = dump_small_model(root / "fp32", enable_dump=True, precision_mode="must_keep_origin_dtype")
    return root, mixed, fp32


def test_an_emulated_dump_against_a_float32_dump_in_our_older_layout(dumps, capsys):
    root, mixed, fp32 = dumps
    older = root / "fp32_older"
    older.mkdir()
    for path in glob.glob(os.path.join(fp32, "*")):          # the golden side as npu_bridge wrote it before
        (older / os.path.basename(path)).write_bytes(dumpdata.read(path).SerializeToString())
    out = root / "out"
    assert npu_debug(["compare", "-m", mixed, "-g", str(older), "-out", str(out), "--no-plot"]) == 0
    printed = capsys.readouterr().out
    assert "output tensors of" in printed and "no overflow, every output's cosine similarity >= 0.99" in printed
    with open(out / "compare_step0.csv") as handle:
        header, *rows = list(csv.reader(handle))
    assert tuple(header) == COLUMNS
    by_op = {row[2]: row for row in rows}
    exp = by_op["block2/e"]
    assert exp[1] == "Exp" and exp[3] == "float16" and exp[6] == "float32" and exp[9] == "[4,8]"
    assert 0.99 < float(exp[10]) <= 1.0 and float(exp[13]) > 0       # close to float32, not equal
    assert list(by_op) == sorted(by_op, key=lambda name: [r[2] for r in rows].index(name))   # dump order
    document = json.loads((out / "compare_step0.vis").read_text())
    assert document["NPU"]["node"]["block2/e"]["upnode"] == "block2"
    assert document["NPU"]["node"]["block2/e"]["matched_node_link"][-1] == "block2/e"


def test_dump_comparison_refuses_half_the_arguments(dumps, capsys):
    _, mixed, _ = dumps
    assert npu_debug(["compare", "-m", mixed]) == 2
    assert "two dumps as -m MY_DUMP -g GOLDEN_DUMP" in capsys.readouterr().err
    assert npu_debug(["compare", "-m", mixed, "-g", "/nonexistent/dump"]) == 2
    assert "npu-debug compare: -g /nonexistent/dump: no such dump file or folder" in capsys.readouterr().err
