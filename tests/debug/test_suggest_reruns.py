"""suggest's verifying reruns: a rerun the script fails in reports the script's own error, not a guess."""
import argparse
import json
import textwrap

from npu_bridge.debug.capture import Recording
from npu_bridge.debug.commands import FLOAT32_OVERRIDES, reruns

# A force_fp16 training loop: the adapter refuses a modify_mixlist in that mode (NpuConfigError at session
# creation), as the NPUEstimator sample of the issue did when suggest wrote one.
SCRIPT = """
    import numpy as np
    from npu_bridge.npu_init import *

    x = tf.constant(np.random.RandomState(0).rand(4, 4).astype(np.float32))
    w = tf.Variable(np.eye(4, dtype=np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0), name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = b"force_fp16"
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run([train, loss])
"""


def test_a_failing_rerun_reports_the_scripts_real_error_and_the_others_still_run(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    mixlist = tmp_path / "modify_mixlist.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["MatMulV2"]}}))
    args = argparse.Namespace(script=str(script), script_args=[], seed=0, rerun_timeout=300)
    recording = Recording(metric="loss:0", graph_def=None, config=None, fetches=[], variables={},
                          reduced_dtype="float16", library=None, report=None, op_names=[], steps=[{}, {}])
    results = reruns(args, recording, [("rerun float32", FLOAT32_OVERRIDES),
                                       ("rerun with modify_mixlist.json", {"modify_mixlist": str(mixlist)})])
    assert isinstance(results["rerun float32"], list) and len(results["rerun float32"]) == 2
    failed = results["rerun with modify_mixlist.json"]
    assert isinstance(failed, str) and failed.startswith("npu_bridge.core.errors.NpuConfigError: NpuOptimizer: "
                                                         "modify_mixlist is assigned"), failed
    assert "(precision_mode is 'force_fp16')" in failed
