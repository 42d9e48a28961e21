"""A local stand-in for ModelArts' `moxing`, for ported scripts run off the cloud (87 ModelZoo folders import it).

On ModelArts, `mox.file` reads and writes OBS buckets (obs://..., s3://...) as well as local paths. Here only local
paths exist: every mox.file function works on them as the real one does, and a bucket path raises
RemotePathError naming it. tf1compat.install() makes `import moxing` find this package only when no real moxing
is importable, so a machine with the real one keeps it. `mox.set_flag` / `mox.get_flag` keep the flags the
scripts set (they tune ModelArts' own training loop, which does not run here).
"""
from npu_bridge.tf1compat.moxing import file
from npu_bridge.tf1compat.moxing.file import RemotePathError

__all__ = ["file", "get_flag", "set_flag", "RemotePathError"]

_FLAGS = {}


def set_flag(name, value):
    """Record a moxing flag (session_timeout, num_inter_threads, ...): nothing here reads it."""
    _FLAGS[name] = value


def get_flag(name):
    """The value set_flag recorded for `name`."""
    if name not in _FLAGS:
        raise KeyError(f"moxing flag {name!r} was never set (the local stand-in knows only flags set_flag recorded)")
    return _FLAGS[name]
