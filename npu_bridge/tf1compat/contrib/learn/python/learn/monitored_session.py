"""tensorflow.contrib.learn.python.learn.monitored_session: TF 1.15 kept contrib.learn's old path to the monitored
session classes; they are tf.compat.v1.train's (MonitoredSession, ChiefSessionCreator, ...), the same classes."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

_train = tf.compat.v1.train
ChiefSessionCreator = _train.ChiefSessionCreator
MonitoredSession = _train.MonitoredSession
MonitoredTrainingSession = _train.MonitoredTrainingSession
Scaffold = _train.Scaffold
SessionCreator = _train.SessionCreator
SingularMonitoredSession = _train.SingularMonitoredSession
WorkerSessionCreator = _train.WorkerSessionCreator

__getattr__ = removed.module_getattr(__name__)
