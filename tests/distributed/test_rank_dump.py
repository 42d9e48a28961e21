"""A data dump inside a multi-rank job: the dump's tensors include one the script fetches itself.

A rank's session runs on its gRPC server, which cannot answer a call fetching one tensor twice; the dump must
still write every op (the fetched iterator output included) on every rank, and training must go on.
"""
import glob
import os

import numpy as np
import pytest
from test_multi_rank import HERE, npu_run, results

from npu_bridge.debug.convert import convert

JOB = os.path.join(HERE, "dump_job.py")
DATA = np.random.RandomState(0).uniform(-1, 1, (8, 4)).astype(np.float32)   # as dump_job.py builds it


@pytest.mark.parametrize("mode", ["output", "all"])
def test_a_dump_of_a_fetched_iterator_output_on_two_ranks(tmp_path, mode):
    dump = tmp_path / "dump"
    dump.mkdir()
    done = npu_run("--ranks", "2", JOB, str(dump), mode)
    assert done.returncode == 0, done.stderr[-3000:]
    found = results(done.stdout)
    assert sorted(found) == [0, 1]
    assert found[0][0]["losses"] == found[1][0]["losses"]
    for device in (0, 1):
        [step_dir] = glob.glob(str(dump / "*" / str(device) / "*" / "*" / "1"))   # dump_step 1 only
        out = tmp_path / f"npy{device}"
        convert(step_dir, str(out))
        [batch] = glob.glob(str(out / "IteratorGetNext.IteratorGetNext.*.output.0.npy"))
        np.testing.assert_array_equal(np.load(batch), DATA[2:4])        # step 1's batch, as the script fetched it
        matmul_inputs = glob.glob(str(out / "MatMulV2.MatMul.*.input.*.npy"))
        assert len(matmul_inputs) == (2 if mode == "all" else 0)
