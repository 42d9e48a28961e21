"""RunConfig: where an Estimator writes (model_dir), how often it checkpoints, summarizes and logs, and the session
config of every session it opens. One local task: this machine is the chief and the only worker."""
import copy
import os

import tensorflow.compat.v1 as tf
from tensorflow.core.protobuf import rewriter_config_pb2

_USE_DEFAULT = object()
_DEFAULT_CHECKPOINT_SECS = 600
_REPLACEABLE = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                "save_checkpoints_secs", "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
                "log_step_count_steps", "train_distribute", "device_fn", "protocol", "eval_distribute",
                "experimental_distribute", "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
                "checkpoint_save_graph_def")


def get_default_session_config():
    """The session config an Estimator uses when its RunConfig sets none (as TF's Estimator does)."""
    rewrite = rewriter_config_pb2.RewriterConfig(meta_optimizer_iterations=rewriter_config_pb2.RewriterConfig.ONE)
    return tf.ConfigProto(allow_soft_placement=True, graph_options=tf.GraphOptions(rewrite_options=rewrite))


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


class RunConfig:
    """TF 1.15's RunConfig arguments and defaults: checkpoints every 600 s unless save_checkpoints_steps is set,
    summaries every 100 steps, 5 checkpoints kept, a step-rate line every 100 steps."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100, save_checkpoints_steps=None,
                 save_checkpoints_secs=_USE_DEFAULT, session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100, train_distribute=None,
                 device_fn=None, protocol=None, eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200,
                 checkpoint_save_graph_def=True):
        if save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = _DEFAULT_CHECKPOINT_SECS if save_checkpoints_steps is None else None
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(f"RunConfig: save_checkpoints_steps ({save_checkpoints_steps}) and "
                             f"save_checkpoints_secs ({save_checkpoints_secs}) cannot both be set")
        if session_config is not None and not isinstance(session_config, tf.ConfigProto):
            raise ValueError(f"RunConfig: session_config must be a tf.ConfigProto, got "
                             f"{type(session_config).__name__}")
        for name, value in (("save_summary_steps", save_summary_steps), ("keep_checkpoint_max", keep_checkpoint_max),
                            ("log_step_count_steps", log_step_count_steps),
                            ("save_checkpoints_steps", save_checkpoints_steps),
                            ("save_checkpoints_secs", save_checkpoints_secs)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"RunConfig: {name} must be a number >= 0 or None, got {value!r}")
        self._model_dir = None if model_dir is None else os.fspath(model_dir)
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._device_fn = device_fn
        self._protocol = protocol
        self._eval_distribute = eval_distribute
        self._experimental_distribute = experimental_distribute
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._checkpoint_save_graph_def = checkpoint_save_graph_def

    def replace(self, **kwargs):
        """A copy with the given properties replaced; only RunConfig's own arguments may be replaced."""
        unknown = sorted(set(kwargs) - set(_REPLACEABLE))
        if unknown:
            raise ValueError(f"RunConfig.replace: {', '.join(unknown)} cannot be replaced; replaceable: "
                             f"{', '.join(_REPLACEABLE)}")
        new = copy.copy(self)
        for name, value in kwargs.items():
            setattr(new, "_" + name, None if name == "model_dir" and value is None else value)
        if new._save_checkpoints_steps is not None and new._save_checkpoints_secs is not None:
            if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
                new._save_checkpoints_secs = None
            elif "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
                new._save_checkpoints_steps = None
            else:
                raise ValueError("RunConfig.replace: save_checkpoints_steps and save_checkpoints_secs cannot both "
                                 "be set")
        return new

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    experimental_distribute = property(lambda self: self._experimental_distribute)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    checkpoint_save_graph_def = property(lambda self: self._checkpoint_save_graph_def)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    # One local process: the chief, the only worker, no parameter servers, no cluster.
    cluster_spec = property(lambda self: tf.train.ClusterSpec({}))
    master = property(lambda self: "")

    @property
    def evaluation_master(self):
        return getattr(self, "_evaluation_master", "")

    @evaluation_master.setter
    def evaluation_master(self, value):
        """Set by tf.estimator.tpu.RunConfig (its evaluation_master argument); no other task to evaluate on here."""
        self._evaluation_master = value
    is_chief = property(lambda self: True)
    task_type = property(lambda self: TaskType.WORKER)
    task_id = property(lambda self: 0)
    global_id_in_cluster = property(lambda self: 0)
    num_ps_replicas = property(lambda self: 0)
    num_worker_replicas = property(lambda self: 1)
    service = property(lambda self: None)
