"""The line of user code that created an op: its creation traceback's innermost frame outside the libraries."""
import importlib.util
import os


def _package_dirs(names):
    """The folders of the installed packages `names`, found without importing them (importing keras here would
    change which Keras tf.compat.v1.keras loads)."""
    dirs = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(os.path.abspath(path) + os.sep for path in spec.submodule_search_locations)
    return tuple(dirs)


_LIBRARY_DIRS = _package_dirs(("tensorflow", "npu_bridge", "tf_keras", "keras"))


def creation_line(op):
    """'file.py:12 (function)' for the user's line that created `op`, or 'unknown' without a traceback."""
    frames = list(op.traceback) if op is not None and op.traceback else []
    for frame in reversed(frames):
        if not os.path.abspath(frame.filename).startswith(_LIBRARY_DIRS):
            return f"{frame.filename}:{frame.lineno} ({frame.name})"
    return "unknown"
