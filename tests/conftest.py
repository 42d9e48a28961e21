"""Test setup shared by every suite: quiet TensorFlow, TF1 semantics as ported Ascend scripts expect them."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

# Ported Ascend scripts are TF1 scripts: graph mode, ref variables, v1 control flow. Tests run them that way;
# the launcher (npu-run) arranges the same for unmodified scripts.
tf.compat.v1.disable_v2_behavior()
