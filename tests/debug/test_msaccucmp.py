"""Ascend's own msaccucmp (mindstudio-probe) on npu_bridge's dumps and Opdebug records, with only its closed
header decoder replaced (msaccucmp_run.py). Skipped when mindstudio-probe is not installed."""
import csv
import glob
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from npu_test_support import npu_config

import npu_bridge.runtime
from npu_bridge.debug import dumpdata
from npu_bridge.debug.cli import main as npu_debug
from npu_bridge.debug.compare import COLUMNS
from npu_bridge.debug.convert import convert

from .conftest import dump_small_model
from .test_dumpdata import new_layout_payload

pytestmark = pytest.mark.skipif(importlib.util.find_spec("msprobe") is None,
                                reason="mindstudio-probe (msaccucmp) is not installed")
npu_bridge.runtime.activate()
v1 = tf.compat.v1
RUN = os.path.join(os.path.dirname(__file__), "msaccucmp_run.py")


def msaccucmp(*args, cwd):
    done = subprocess.run([sys.executable, RUN, *map(str, args)], capture_output=True, text=True, timeout=300,
                          cwd=cwd, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("dumps")
    os.makedirs(root / "mixed")
    os.makedirs(root / "fp32")
    mixed = dump_small_model(root / "mixed", enable_dump=True, precision_mode_v2="mixed_float16")
    fp32 = dump_small_model(root / "fp32", enable_dump=True, precision_mode="must_keep_origin_dtype")
    return root, mixed, fp32


def test_msaccucmp_converts_our_dumps_to_what_npu_debug_convert_writes(dumps):
    root, mixed, _ = dumps
    msaccucmp("convert", "-d", mixed, "-out", root / "theirs", cwd=root)
    convert(mixed, str(root / "ours"))
    theirs, ours = sorted(os.listdir(root / "theirs")), sorted(os.listdir(root / "ours"))
    assert theirs == ours and any(".input." in name for name in ours)
    for name in ours:
        a, b = np.load(root / "theirs" / name), np.load(root / "ours" / name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
    assert np.load(root / "ours" / next(n for n in ours if n.startswith("ReduceSumD.total.") and
                                        n.endswith("output.0.npy"))).shape == (1,)      # a scalar, as msaccucmp


def test_msaccucmp_compares_the_emulation_with_float32_in_the_columns_we_write(dumps):
    root, mixed, fp32 = dumps
    msaccucmp("compare", "-m", mixed, "-g", fp32, "-out", root / "compare", cwd=root)
    (result,) = glob.glob(str(root / "compare" / "result_*.csv"))
    with open(result) as handle:
        header, *rows = list(csv.reader(handle))
    assert list(COLUMNS[:len(header)]) == header               # ours: theirs, then our extras
    by_tensor = {row[header.index("TensorIndex")]: row for row in rows}
    exp = by_tensor[next(name for name in by_tensor if name.startswith("block2_e:output"))]
    assert exp[header.index("DataType")] == "float16"           # the emulated side computed it in float16
    assert 0.99 < float(exp[header.index("CosineSimilarity")]) <= 1.0

    assert npu_debug(["compare", "-m", mixed, "-g", fp32, "-out", str(root / "ours"), "--no-plot"]) == 0
    with open(root / "ours" / "compare_step0.csv") as handle:
        ours = {row[8].replace("/", "_"): row for row in list(csv.reader(handle))[1:]}
    assert ours and set(ours) <= set(by_tensor)                  # theirs also lists every input
    for name, row in ours.items():                               # the same metrics, to their 6 decimals
        for column in ("CosineSimilarity", "MaxAbsoluteError", "AccumulatedRelativeError",
                       "RelativeEuclideanDistance", "KullbackLeiblerDivergence", "MeanAbsoluteError",
                       "RootMeanSquareError", "MaxRelativeError", "MeanRelativeError"):
            index = header.index(column)
            assert float(row[index]) == pytest.approx(float(by_tensor[name][index]), rel=1e-3, abs=2e-6), \
                (name, column)


def test_msaccucmp_decodes_our_opdebug_record(tmp_path):
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [2, 2], name="x")
        z = tf.square(tf.matmul(x, x, name="y") * 0.01, name="z")
        config = npu_config(use_off_line=True, precision_mode_v2="mixed_float16", enable_dump_debug=True,
                            dump_path=str(tmp_path), dump_debug_mode="aicore_overflow")
        with v1.Session(config=config) as sess:
            sess.run(z, {x: np.full((2, 2), 120.0, np.float32)})
    (record,) = glob.glob(str(tmp_path / "**" / "Opdebug.Node_OpDebug.*"), recursive=True)
    msaccucmp("convert", "-d", record, "-out", tmp_path / "theirs", cwd=tmp_path)
    convert(record, str(tmp_path / "ours"))
    name = os.path.basename(record) + ".output.0.json"
    with open(tmp_path / "theirs" / name) as theirs, open(tmp_path / "ours" / name) as ours:
        decoded, mine = json.load(theirs), json.load(ours)
    assert decoded == mine
    with open(os.path.join(os.path.dirname(record), "overflow_summary.json")) as handle:
        (first,) = json.load(handle)["overflows"]
    assert decoded["AI Core"]["status"] == 0x20 and decoded["AI Core"]["task_id"] == first["task_id"]


def test_msaccucmp_and_npu_debug_decode_an_opdebug_record_of_the_newer_layout_alike(tmp_path):
    message = dumpdata.DumpData(version="2.0", op_name="Node_OpDebug")
    dumpdata.fill(message.output.add(), np.frombuffer(new_layout_payload(), np.uint8))
    record = dumpdata.write(str(tmp_path / "Opdebug.Node_OpDebug.4.0.1700000000000001"), message)
    msaccucmp("convert", "-d", record, "-out", tmp_path / "theirs", cwd=tmp_path)
    convert(record, str(tmp_path / "ours"))
    name = os.path.basename(record) + ".output.0.json"
    assert (tmp_path / "theirs" / name).read_text() == (tmp_path / "ours" / name).read_text()
