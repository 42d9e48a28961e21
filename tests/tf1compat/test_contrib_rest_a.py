"""The rest of tf.contrib, part A: Huawei's older contrib paths for npu_bridge (contrib.hccl, contrib.offline_train)
and the contrib symbols rebuilt on TensorFlow 2's public ops, checked against TF 1.15's documented behaviour."""
import importlib

import pytest

from npu_bridge import tf1compat


@pytest.fixture(autouse=True)
def installed():
    tf1compat.install()


@pytest.mark.parametrize("old, new", [
    ("tensorflow.contrib.hccl.python.ops.hccl_ops", "npu_bridge.hccl.hccl_ops"),
    ("tensorflow.contrib.offline_train.python.npu.npu_config", "npu_bridge.estimator.npu.npu_config"),
    ("tensorflow.contrib.offline_train.python.npu.npu_estimator", "npu_bridge.estimator.npu.npu_estimator"),
    ("tensorflow.contrib.offline_train.python.npu.npu_optimizer", "npu_bridge.estimator.npu.npu_optimizer"),
    ("tensorflow.contrib.offline_train.python.npu.npu_loss_scale_manager",
     "npu_bridge.estimator.npu.npu_loss_scale_manager"),
    ("tensorflow.contrib.offline_train.python.npu_ops", "npu_bridge.estimator.npu_ops"),
    ("tensorflow.contrib.offline_train.python.npu_unary_ops", "npu_bridge.estimator.npu_unary_ops"),
])
def test_huaweis_older_contrib_paths_are_the_npu_bridge_modules(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)


def test_the_ported_scripts_imports_of_the_older_paths_give_npu_bridges_classes():
    from tensorflow.contrib.hccl.python.ops import hccl_ops
    from tensorflow.contrib.offline_train.python import npu_ops
    from tensorflow.contrib.offline_train.python.npu.npu_config import NPURunConfig
    from tensorflow.contrib.offline_train.python.npu.npu_estimator import NPUEstimator
    from tensorflow.contrib.offline_train.python.npu.npu_optimizer import (
        NPUDistributedOptimizer,
    )

    import npu_bridge.estimator.npu_ops as current_npu_ops
    from npu_bridge.estimator.npu.npu_config import NPURunConfig as CurrentRunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator as CurrentEstimator
    from npu_bridge.estimator.npu.npu_optimizer import (
        NPUDistributedOptimizer as CurrentOptimizer,
    )
    from npu_bridge.hccl import hccl_ops as current_hccl_ops

    assert (hccl_ops, npu_ops, NPURunConfig, NPUEstimator, NPUDistributedOptimizer) == (
        current_hccl_ops, current_npu_ops, CurrentRunConfig, CurrentEstimator, CurrentOptimizer)
    assert callable(hccl_ops.allreduce) and callable(npu_ops.dropout)
