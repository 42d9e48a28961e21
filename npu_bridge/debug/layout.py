"""The dump folder layout and file names of Ascend's data dump.

`{dump_path}/{time}/{device_id}/{model_name}/{model_id}/{data_index}/{op_type}.{op_name}.{task_id}.{timestamp}`,
where any `.`, `/`, `\\` or space in a model or op name becomes `_`. Here `time` is when the session started
(YYYYmmddHHMMSS), the device is parameter_map session_device_id (else $ASCEND_DEVICE_ID, else 0), each graph the
session runs (each plan signature) is one model numbered from 1 in the order first run, named
`ge_default_{time}_{model_id}`, and `data_index` is the step number.
"""
import os
import re
import time

_UNSAFE = re.compile(r"[./\\ ]")


def safe(name):
    return _UNSAFE.sub("_", name)


def session_time():
    return time.strftime("%Y%m%d%H%M%S")


def device_id(options):
    value = options.raw.get("session_device_id")
    return str(value if value is not None else os.environ.get("ASCEND_DEVICE_ID", "0"))


def timestamp_us():
    """The 16-digit microsecond timestamp Ascend puts in dump file names and DumpData.dump_time."""
    return time.time_ns() // 1000


def file_name(op_type, op_name, task_id, timestamp):
    return f"{safe(op_type)}.{safe(op_name)}.{task_id}.{timestamp}"


class Models:
    """Model ids and step folders of one session's dump: one model per plan signature, numbered from 1."""

    def __init__(self, dump_path, options):
        self.root = os.path.join(dump_path, session_time(), device_id(options))
        self.stamp = os.path.basename(os.path.dirname(self.root))
        self._ids = {}

    def model(self, signature):
        """(model_name, model_id) of the graph a plan signature stands for."""
        model_id = self._ids.setdefault(signature, len(self._ids) + 1)
        return f"ge_default_{self.stamp}_{model_id}", model_id

    def step_dir(self, signature, step):
        """The folder of one step's files (created)."""
        name, model_id = self.model(signature)
        path = os.path.join(self.root, safe(name), str(model_id), str(step))
        os.makedirs(path, exist_ok=True)
        return path
