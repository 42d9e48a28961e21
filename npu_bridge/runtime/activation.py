"""Hooks the emulated NPU into TensorFlow's one Session class that every TF1 entry point goes through.

tf.compat.v1.Session, InteractiveSession, the MonitoredSession family and Estimator all end in
`tensorflow.python.client.session.BaseSession`, so patching its methods once covers them all. A session whose
config does not ask for the NPU never sees the patch beyond one attribute lookup. `deactivate` puts TensorFlow's
own methods back.

Only a session whose config holds NpuOptimizer must be placed by the session environment (a multi-rank job's
server): a plain session is placed there when the environment describes a valid job, and otherwise runs as
TensorFlow's own, so bad RANK_* settings refuse the NPU session with their NpuConfigError and nothing else.

Configuration errors (NpuConfigError, found when the session is created or when the first run loads a mixlist)
and PrecisionPassError are re-raised from the patched method with the frames below it dropped: the user sees
their own call and one clear message naming the key and value, not the package's internals.
"""
import threading
import weakref
from typing import Any, Callable, Protocol

from tensorflow.python.client import session as tf_session
from tensorflow.python.framework import errors

from npu_bridge.core.errors import NpuConfigError, PrecisionPassError
from npu_bridge.runtime.emulated import EmulatedSession
from npu_bridge.settings import session_options

_lock = threading.Lock()
_originals: dict[str, Callable[..., Any]] = {}
_USER_FACING_ERRORS = (NpuConfigError, PrecisionPassError)


class SessionEnvironment(Protocol):
    """What places sessions in a larger job (npu_bridge.distributed.cluster.SessionEnvironment implements it)."""

    def session_settings(self, target: str, config: Any) -> tuple[str, Any]: ...

    def explain(self, error: Any) -> Any: ...


_environment: SessionEnvironment | None = None
_PATCHED = ("__init__", "run", "make_callable", "_make_callable_from_options", "partial_run", "partial_run_setup",
            "close")
_open_emulations: "weakref.WeakSet[Any]" = weakref.WeakSet()      # sessions with an EmulatedSession, until closed


def set_session_environment(environment: SessionEnvironment | None) -> None:
    """Install the one object that places sessions in a larger job (npu_bridge.distributed.cluster).

    `environment.session_settings(target, config) -> (target, config)` is asked before every session is created,
    emulated (its inner session gets the same target and config) or plain (where an NpuConfigError leaves the
    session as TensorFlow made it);
    `environment.explain(op_error) -> OpError | None` may replace the error of a failed run with one that says
    more (which rank of a multi-rank job is gone). None removes it.
    """
    global _environment
    _environment = environment


def activate() -> None:
    """Patch BaseSession so NpuOptimizer sessions run emulated. Safe to call any number of times."""
    with _lock:
        if _originals:
            return
        base = tf_session.BaseSession
        for name in _PATCHED:
            _originals[name] = base.__dict__[name]
        base._npu_emulation = None
        base._npu_in_job = False            # placed by the session environment (its errors may name a lost rank)
        base.__init__ = _init
        base.run = _run
        base.make_callable = _make_callable
        base._make_callable_from_options = _make_callable_from_options
        base.partial_run = _partial_run
        base.partial_run_setup = _partial_run_setup
        base.close = _close


def deactivate() -> None:
    """Give BaseSession back TensorFlow's own methods. Refused while a session created emulated is open: its runs
    would silently become plain TensorFlow runs."""
    with _lock:
        if not _originals:
            return
        if _open_emulations:
            raise RuntimeError(f"npu_bridge.deactivate(): {len(_open_emulations)} emulated session(s) still open; "
                               "close them first (a session created emulated cannot continue as a plain one)")
        base = tf_session.BaseSession
        for name in _PATCHED:
            setattr(base, name, _originals[name])
        del base._npu_emulation, base._npu_in_job
        _originals.clear()


def is_active() -> bool:
    """Do NpuOptimizer sessions run emulated now?"""
    return bool(_originals)


def _init(self, target="", graph=None, config=None):
    try:
        options = session_options(config) if config is not None else None
        npu = options is not None and options.use_off_line
        target, config, self._npu_in_job = _placed(target, config, npu)
    except _USER_FACING_ERRORS as error:
        self._session = None    # BaseSession.__del__ reads it: a session refused before it existed frees nothing
        raise error.with_traceback(None) from None
    _originals["__init__"](self, target, graph, config)
    if not npu:
        return
    try:
        self._npu_emulation = EmulatedSession(self, self._graph, options, target, config)
        _open_emulations.add(self)
    except _USER_FACING_ERRORS as error:
        _originals["close"](self)
        raise error.with_traceback(None) from None
    except Exception:
        _originals["close"](self)
        raise


def _placed(target, config, npu):
    """(target, config, whether the environment placed it) for a new session; an NpuOptimizer session (`npu`) gets
    the environment's NpuConfigError, a plain one stays where TensorFlow puts it. Outside a job the environment
    hands back the very target and config: the session is not placed, and its errors are TensorFlow's own."""
    if _environment is None:
        return target, config, False
    try:
        placed_target, placed_config = _environment.session_settings(target, config)
    except NpuConfigError:
        if npu:
            raise
        return target, config, False
    return placed_target, placed_config, placed_target is not target or placed_config is not config


def _run(self, fetches, feed_dict=None, options=None, run_metadata=None):
    emulation = self._npu_emulation
    try:
        if emulation is None:
            return _originals["run"](self, fetches, feed_dict, options, run_metadata)
        return emulation.run(fetches, feed_dict, options, run_metadata)
    except _USER_FACING_ERRORS as error:
        raise error.with_traceback(None) from None
    except errors.OpError as error:
        explained = _environment.explain(error) if _environment is not None and self._npu_in_job else None
        if explained is None:
            raise
        raise explained from None


def _make_callable(self, fetches, feed_list=None, accept_options=False):
    emulation = self._npu_emulation
    if emulation is None:
        return _originals["make_callable"](self, fetches, feed_list, accept_options)
    try:
        return emulation.make_callable(fetches, feed_list, accept_options)
    except _USER_FACING_ERRORS as error:
        raise error.with_traceback(None) from None


def _make_callable_from_options(self, callable_options):
    emulation = self._npu_emulation
    if emulation is None:
        return _originals["_make_callable_from_options"](self, callable_options)
    try:
        return emulation.make_callable_from_options(callable_options)
    except _USER_FACING_ERRORS as error:
        raise error.with_traceback(None) from None


def _partial_run_setup(self, fetches, feeds=None):
    emulation = self._npu_emulation
    if emulation is None:
        return _originals["partial_run_setup"](self, fetches, feeds)
    return emulation.partial_run_setup(fetches, feeds)


def _partial_run(self, handle, fetches, feed_dict=None):
    emulation = self._npu_emulation
    if emulation is None:
        return _originals["partial_run"](self, handle, fetches, feed_dict)
    return emulation.partial_run(handle, fetches, feed_dict)


def _close(self):
    emulation = self._npu_emulation
    if emulation is not None:
        emulation.close()
        _open_emulations.discard(self)
    _originals["close"](self)
