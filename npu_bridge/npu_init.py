"""`from npu_bridge.npu_init import *`: the one import 3,000+ ported Ascend scripts start with.

Like the real module it has no __all__: every public name is exported, including `tf` (the tf.compat.v1 API,
which scripts use after nothing but the star import), `os`, `RewriterConfig`, `config_pb2` and
`rewriter_config_pb2`. The helpers below are the ones the Ascend migration tool writes into scripts; each
fills in the NpuOptimizer entry of a session config so the session runs on the emulated NPU.
"""
import os

import tensorflow.compat.v1 as tf
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
from tensorflow.python.client import session
from tensorflow.python.training import session_run_hook

from npu_bridge import activate as _activate
from npu_bridge import tf_private as _tf_private
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import keras_to_npu, npu_plugin, npu_rnn, npu_scope, npu_strategy, util
from npu_bridge.estimator.npu.npu_plugin import npu_close
from npu_bridge.estimator.npu_unary_ops import npu_unary_ops
from npu_bridge.estimator.npu.estimator_support import ESTIMATOR as _ESTIMATOR
from npu_bridge.estimator.npu.npu_callbacks import NPUBroadcastGlobalVariablesCallback
from npu_bridge.estimator.npu.npu_callbacks import keras_v1 as _keras_v1
from npu_bridge.estimator.npu.npu_config import DumpConfig, DynamicInputConfig, NPURunConfig, ProfilingConfig
from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec
from npu_bridge.estimator.npu.npu_hook import (
    NPUBroadcastGlobalVariablesHook,
    NPUCheckpointSaverHook,
    NPUOutputTensorHook,
    SetIterationsVarHook,
)
from npu_bridge.estimator.npu.npu_loss_scale_manager import (
    ExponentialUpdateLossScaleManager,
    FixedLossScaleManager,
)
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.estimator.npu.npu_optimizer import allreduce as _average_over_ranks
from npu_bridge.estimator.npu.npu_optimizer import (
    KerasDistributeOptimizer,
    NPUDistributedOptimizer,
    NPUOptimizer,
    npu_distributed_optimizer_wrapper,
)
from npu_bridge.hccl import get_local_rank_id, get_local_rank_size, get_rank_id, get_rank_size, hccl_ops
from npu_bridge.hccl.rank import (
    create_group,
    destroy_group,
    get_group_rank_from_world_rank,
    get_world_rank_from_group_rank,
)
from hccl.split.api import set_split_strategy_by_idx, set_split_strategy_by_size

_activate()     # a public face: the star import scripts start with switches the emulation on


def npu_config_proto(config_proto=None):
    """Add the NpuOptimizer entry to `config_proto` (a new ConfigProto if None) and return it.

    As the real helper: remapping is always turned off, memory_optimization only when the entry had to be
    created, soft placement is allowed, device-placement logging and XLA JIT are off.
    """
    if not isinstance(config_proto, config_pb2.ConfigProto):
        config_proto = config_pb2.ConfigProto()
    rewrite_options = config_proto.graph_options.rewrite_options
    if not any(entry.name == "NpuOptimizer" for entry in rewrite_options.custom_optimizers):
        custom_op = rewrite_options.custom_optimizers.add(name="NpuOptimizer")
        custom_op.parameter_map["use_off_line"].b = True
        rewrite_options.memory_optimization = RewriterConfig.OFF
    rewrite_options.remapping = RewriterConfig.OFF
    config_proto.allow_soft_placement = True
    config_proto.log_device_placement = False
    config_proto.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return config_proto


def npu_graph_options(graph_options=None):
    """`graph_options` (a new GraphOptions if None) with XLA JIT off, as the NPU runs whole graphs itself."""
    if not isinstance(graph_options, config_pb2.GraphOptions):
        graph_options = config_pb2.GraphOptions()
    graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return graph_options


def npu_optimizer_options(optimizer_options=None):
    """`optimizer_options` (new OptimizerOptions if None) with XLA JIT off."""
    if not isinstance(optimizer_options, config_pb2.OptimizerOptions):
        optimizer_options = config_pb2.OptimizerOptions()
    optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return optimizer_options


class NpuEmptyHook(session_run_hook.SessionRunHook):
    """A hook that does nothing: the migration tool puts it where a GPU-only hook (Horovod's) was."""


def npu_session_config_init(session_config=None):
    """Older adapters' name for npu_config_proto."""
    return npu_config_proto(session_config)


def npu_run_config_init(run_config=None):
    """Put the NpuOptimizer entry into an Estimator RunConfig's session_config (a new RunConfig if None)."""
    if not isinstance(run_config, _ESTIMATOR.RunConfig):
        run_config = _ESTIMATOR.RunConfig()
    _tf_private.set_run_config_session_config(run_config, npu_config_proto(run_config.session_config))
    return run_config


def npu_hooks_append(hooks_list=()):
    """`hooks_list` plus the hook that broadcasts rank 0's variables. Like the real helper it appends to a list it
    is given (a script may keep using its own list) and starts a new one otherwise."""
    hooks = hooks_list if isinstance(hooks_list, list) else []
    hooks.append(NPUBroadcastGlobalVariablesHook(0, get_rank_id()))
    return hooks


def npu_callbacks_append(callbacks_list=()):
    """`callbacks_list` as a list, plus the callback broadcasting rank 0's variables when there are several ranks
    (on one rank it would have nothing to send, so nothing is appended)."""
    callbacks = list(callbacks_list) if isinstance(callbacks_list, (list, tuple)) else []
    if get_rank_size() > 1:
        callbacks.append(NPUBroadcastGlobalVariablesCallback(0))
    return callbacks


def npu_keras_optimizer(opt):
    """The migration tool's wrapper for Keras optimizers: KerasDistributeOptimizer(opt)."""
    return KerasDistributeOptimizer(opt)


def npu_tf_optimizer(opt):
    """The migration tool's wrapper for tf.train optimizers: NPUDistributedOptimizer(opt)."""
    return NPUDistributedOptimizer(opt)


def set_keras_session_npu_config(config=None):
    """Open a session with the NpuOptimizer config, make it Keras' session and return it."""
    sess = session.Session(config=npu_config_proto(config))
    _keras_v1().backend.set_session(sess)
    return sess


def npu_clear_session(config=None):
    """What the migration tool puts for keras' clear_session(): clear Keras' graph and session, then give Keras a
    new session with the NpuOptimizer config."""
    _keras_v1().backend.clear_session()
    return set_keras_session_npu_config(config)


def npu_allreduce(values, sparse_as_dense=True):
    """Average each gradient over the ranks (sparse ones made dense first when `sparse_as_dense`, as the real
    helper does before its allreduce); on one rank the gradients themselves."""
    reduced = []
    for value in values:
        if sparse_as_dense and isinstance(value, tf.IndexedSlices):
            value = tf.convert_to_tensor(value)
        if value is None or (get_rank_size() == 1 and isinstance(value, tf.IndexedSlices)):
            reduced.append(value)
        elif get_rank_size() == 1:
            reduced.append(tf.identity(value, name="npu_allreduce"))
        else:
            reduced.append(_average_over_ranks(value))
    return reduced


def init_resource(config=None):
    """Open the NPU session and initialize the device: returns (sess, shutdown_op) as the real helper does."""
    sess = session.Session(config=npu_config_proto(config))
    sess.run(npu_ops.initialize_system())
    util.global_dict_init()
    util.set_value("npu_rank_id", get_rank_id())
    util.set_value("npu_local_rank_id", get_local_rank_id())
    util.set_value("npu_rank_size", get_rank_size())
    return sess, npu_ops.shutdown_system()


def shutdown_resource(sess, npu_shutdown):
    """Run the shutdown op returned by init_resource."""
    sess.run(npu_shutdown)


def close_session(sess):
    sess.close()


def get_npu_rank_id():
    return get_rank_id()


def get_npu_local_rank_id():
    return get_local_rank_id()


def get_npu_rank_size():
    return get_rank_size()


def get_npu_local_rank_size():
    return get_local_rank_size()
