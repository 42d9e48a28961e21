"""tensorflow.contrib.learn.python.learn.monitored_session: TF 1.15 kept contrib.learn's old path to the monitored
session classes; they are tf.compat.v1.train's (MonitoredSession, ChiefSessionCreator, ...), the same classes."""
from tensorflow.python.training.monitored_session import (  # noqa: F401
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SessionCreator,
    SingularMonitoredSession,
    WorkerSessionCreator,
)

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
