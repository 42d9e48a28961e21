"""npu-run / `python -m npu_bridge`: run an unmodified TF1-style script on TensorFlow 2.x.

Ported Ascend scripts are TF1 code: `import tensorflow as tf`, then tf.ConfigProto, tf.Session, tf.placeholder,
tf.layers, tf.train.*. The launcher makes that run as written:

- TF2 behaviour is turned off (graph mode, ref variables, v1 control flow), as conftest does for tests.
- `import tensorflow` in the user's own code (the script and the modules beside it) yields the tf.compat.v1 API,
  falling back to the full package for anything v1 lacks; `tensorflow.<submodule>` imports of every v1 submodule
  (`from tensorflow.layers import Dense`, `from tensorflow.train import AdamOptimizer`, `import tensorflow.losses`,
  `import tensorflow.summary as S`, `tensorflow.keras...`) resolve to their tf.compat.v1 counterparts, as TF 1.x
  had them. Every other importer (TensorFlow itself, Keras, npu_bridge, other libraries) gets the real package, and
  `tensorflow.python.*` / `tensorflow.core.*` import as usual.
- On TF >= 2.16 tf.layers and tf.nn.rnn_cell live in tf_keras and need TF_USE_LEGACY_KERAS=1 before Keras is
  first touched: the launcher sets it (unless the user already chose) when tf_keras is installed.
- The user's own `import keras` (Keras 2 code, as ported scripts are) resolves to the same v1 Keras 2 API as
  `tensorflow.keras` (with keras.backend.get_session and the rest of TF1 Keras), never to Keras 3, which runs
  only eagerly. Modules outside that API (keras.src...) import as usual.
- argv, __name__ == "__main__", __file__, sys.path[0] (the script's folder), the exit code and the traceback
  (starting at the script's own frame) are those of `python script.py`.

Nothing wraps sess.run: after start-up the script runs at the speed it would without the launcher.

The command line is parsed before TensorFlow is imported (this module imports only the standard library), so
--help, --version and a mistyped script name answer at once: importing npu_bridge's own modules activates
nothing (npu_bridge/__init__.py), and `run_script` activates the emulation once TensorFlow is prepared.
Launcher options reach the emulation through environment variables (NPU_BRIDGE_REPORT_DIR, NPU_BRIDGE_STRICT),
so launchers that are not ours can set the same.
"""
import argparse
import builtins
import importlib.util
import io
import os
import site
import sys
import sysconfig
import types

from npu_bridge import console
from npu_bridge.console import Command, Tool
from npu_bridge.seeding import SEED_ENV, seed_unseeded
from npu_bridge.settings import REPORT_DIR_ENV, STRICT_ENV, prepare_report_dir

PROG = "npu-run"
# What a one-device ModelZoo test/train_*_1p.sh exports before starting the script (scripts read them with
# os.environ[...] and fail without them); a plain npu-run sets those still unset, unless RANK_SIZE says the
# process is one rank of a larger job started by other means.
ONE_RANK_ENVIRONMENT = {"RANK_SIZE": "1", "RANK_ID": "0", "DEVICE_ID": "0", "ASCEND_DEVICE_ID": "0",
                        "DEVICE_INDEX": "0", "RANK_ID_START": "0", "JOB_ID": "10087"}
ENVIRONMENT_HELP = f"""\
environment variables:
  {REPORT_DIR_ENV}=DIR  as --report-dir, for scripts started by another launcher
  {STRICT_ENV}=1        as --strict
  {SEED_ENV}=N          as --seed N
  NPU_BRIDGE_SOC=NAME        soc when the config sets no soc_config (default ascend910)
  ASCEND_OPP_PATH=DIR        operator library to use instead of the built-in one
  TF_CPP_MIN_LOG_LEVEL=2     quiet TensorFlow's own C++ INFO and WARNING lines

exit status: the script's own; 1 for an uncaught exception (a configuration warning under --strict included),
130 for Ctrl-C, 2 for a bad command line or a missing script.
"""


def _library_dirs():
    """Folders whose modules are libraries, not user code: the standard library, site-packages, npu_bridge."""
    paths = sysconfig.get_paths()
    dirs = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    dirs.update(site.getsitepackages())
    dirs.add(site.getusersitepackages())
    dirs.add(os.path.dirname(os.path.abspath(__file__)))
    return tuple(os.path.realpath(d) + os.sep for d in dirs)


def _tf1_module(v1, full):
    """A module named `tensorflow` exposing tf.compat.v1, with the full package behind it for the rest."""
    module = types.ModuleType("tensorflow", v1.__doc__)

    def __getattr__(name):
        try:
            value = getattr(v1, name)
        except AttributeError:
            value = getattr(full, name)
        setattr(module, name, value)
        return value

    module.__getattr__ = __getattr__
    module.__dir__ = lambda: sorted(set(dir(v1)))
    module.__file__ = full.__file__
    module.__version__ = full.__version__
    return module


class _UserCodeImports:
    """builtins.__import__ replacement routing the user's `import tensorflow` (and `tensorflow.X` for every
    submodule of tf.compat.v1) to the TF1 API."""

    def __init__(self, tf1, v1, keras_v1=None, tf1compat=None):
        self._original = builtins.__import__
        self._tf1 = tf1
        self._v1 = v1
        self._keras_v1 = keras_v1       # module path of the v1 Keras 2 API that `import keras` gets, or None
        self._tf1compat = tf1compat     # npu_bridge.tf1compat: TF 1.15 module paths TensorFlow 2.x lacks, or None
        self._library_dirs = _library_dirs()
        self._is_user_file = {}

    def install(self):
        builtins.__import__ = self

    def _from_user_code(self, importer_globals):
        if not importer_globals:
            return False
        filename = importer_globals.get("__file__")
        if filename is None:
            return importer_globals.get("__name__") == "__main__"
        known = self._is_user_file.get(filename)
        if known is None:
            known = not os.path.realpath(filename).startswith(self._library_dirs)
            self._is_user_file[filename] = known
        return known

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if self._tf1compat and not level and name.startswith(("keras", "tensorflow")) and \
                self._from_user_code(globals):
            module = self._tf1_path(name, globals, locals, fromlist)
            if module is not None:
                return module
        if level or not name.startswith("tensorflow") or not self._from_user_code(globals):
            return self._original(name, globals, locals, fromlist, level)
        if name == "tensorflow":
            self._original(name, globals, locals, fromlist, level)
            return self._tf1
        module = self._v1_submodule(name, globals, locals)
        if module is None:
            return self._original(name, globals, locals, fromlist, level)
        return module if fromlist else self._tf1

    def _tf1_path(self, name, globals, locals, fromlist):
        """The module a TF 1.15 path TensorFlow 2.x lacks or changed stands for (a Keras 2 module path, or one of
        tf1compat.USER_CODE_ALIASES), as `__import__` returns it; None for every other name."""
        keras2_path = None
        if self._keras_v1 and not name.startswith(self._keras_v1):
            keras2_path = self._tf1compat.keras_paths.keras2_path(name)
        if keras2_path is not None:
            return self._keras2(name, keras2_path, globals, locals, fromlist)
        aliases = self._tf1compat.USER_CODE_ALIASES
        if name in aliases:
            module = self._original(aliases[name], globals, locals, ("__name__",))
            return module if fromlist else self._tf1compat.overlay.bind(self._tf1, name.split(".")[1:], module)
        replaced = [item for item in fromlist or () if f"{name}.{item}" in aliases]
        if not replaced:
            return None
        module = self._original(name, globals, locals, fromlist)
        for item in replaced:       # from tensorflow.python.framework import graph_util
            replacement = self._original(aliases[f"{name}.{item}"], globals, locals, ("__name__",))
            module = self._tf1compat.overlay.Overlay(module, item, replacement)
        return module

    def _keras2(self, name, path, globals, locals, fromlist):
        """A Keras 2 module path (`keras.layers`, `keras.utils.np_utils`, `tensorflow.python.keras.engine`, ...):
        the v1 Keras 2 API's module when it has the path and the names asked for (and is as wide as TF 1.15's
        module of the path), else the module tf1compat.keras_paths builds for it."""
        try:
            module = self._original(f"{self._keras_v1}.{path}" if path else self._keras_v1, globals, locals,
                                    ("__name__",))
        except ModuleNotFoundError:
            module = None
        if module is None or self._tf1compat.keras_paths.needs_keras2_module(path, fromlist) or \
                any(not hasattr(module, item) for item in fromlist or () if item != "*"):
            module = self._tf1compat.keras_paths.keras2_module(self._keras_v1, path)
        if fromlist:
            return module
        top_name = name.split(".")[0]
        top = self._tf1 if top_name == "tensorflow" else self._original(
            self._keras_v1 if top_name == "keras" else top_name, globals, locals, ("__name__",))
        return self._tf1compat.overlay.bind(top, name.split(".")[1:], module)

    def _v1_submodule(self, name, globals, locals):
        """The tf.compat.v1 counterpart of `tensorflow.X[.Y]` (tensorflow.layers, .train, .summary, .keras.layers,
        ...), as TF 1.x had them; None for what v1 lacks and for tensorflow.compat / .python / .core, which stay."""
        if not name.startswith("tensorflow.") or name.startswith("tensorflow.contrib."):
            # tensorflow_hub, tensorflow_addons, ...; and contrib's submodules, which tf1compat's aliases import by
            # name (an attribute walk would meet a name a star import shadowed: tf_slim.layers.layers)
            return None
        module = self._v1
        for part in name.split(".")[1:]:
            if part.startswith("_") or module is self._v1 and part in ("compat", "python", "core"):
                return None
            # getattr also resolves a lazily loaded submodule (v1 Keras, layers); the module v1 holds is the one
            # to return, never a second copy imported under a tensorflow.compat.v1.* name
            value = getattr(module, part, None)
            if not isinstance(value, types.ModuleType):
                try:
                    value = self._original(f"{module.__name__}.{part}", globals, locals, ("__name__",))
                except ModuleNotFoundError:
                    return None
            module = value
        return module


def _prepare_tensorflow():
    """Import TensorFlow the way TF1 scripts need it and route the user's `import tensorflow` to tf.compat.v1."""
    if importlib.util.find_spec("tf_keras") is not None:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow
    from tensorflow.python.util import deprecation

    import npu_bridge
    import npu_bridge.tf1compat.keras_paths  # the import hook's Keras 2 paths (standard library only)
    import npu_bridge.tf1compat.overlay  # what the import hook binds for a rerouted `import a.b.c`
    from npu_bridge import tf1compat

    npu_bridge.activate()
    tf1compat.install()
    # disable_v2_behavior logs disable_resource_variables' deprecation: noise about our call, not the user's code.
    with deprecation.silence():
        tensorflow.compat.v1.disable_v2_behavior()
    v1 = tensorflow.compat.v1
    _UserCodeImports(_tf1_module(v1, tensorflow), v1, _keras_v1(), tf1compat).install()


def _keras_v1():
    """The module path of the v1 Keras 2 API the user's `import keras` gets: tf_keras's when TensorFlow uses it
    (TF >= 2.16, TF_USE_LEGACY_KERAS=1), Keras 2's own where `keras` is Keras 2 (TF 2.15); None otherwise (Keras 3
    chosen by the user, or no Keras)."""
    if os.environ.get("TF_USE_LEGACY_KERAS") in ("1", "true", "True") and importlib.util.find_spec("tf_keras"):
        return "tf_keras.api._v1.keras"
    if importlib.util.find_spec("keras") is None:
        return None
    import keras

    return "keras.api._v1.keras" if keras.__version__.startswith("2.") else None


def _report_exception(error, script_path):
    """Hand the exception to sys.excepthook with the traceback starting at the script, as `python script` shows it."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != script_path:
        tb = tb.tb_next
    if tb is None and not isinstance(error, SyntaxError):
        tb = error.__traceback__
    sys.excepthook(type(error), error.with_traceback(tb), tb)


def _compile_script(script):
    """The script's code object (a SyntaxError here is reported before TensorFlow is even imported)."""
    script_path = os.path.abspath(script)
    with io.open_code(script_path) as source_file:
        return compile(source_file.read(), script_path, "exec")


def _run_script(code, script, args):
    script_path = code.co_filename
    main_module = types.ModuleType("__main__")
    main_module.__file__ = script_path
    main_module.__builtins__ = builtins
    main_module.__spec__ = None
    sys.modules["__main__"] = main_module
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.realpath(script_path))
    try:
        exec(code, main_module.__dict__)
    except SystemExit:
        raise
    except KeyboardInterrupt as error:
        _report_exception(error, script_path)
        return 130      # what `python script.py` exits with on Ctrl-C (128 + SIGINT)
    except Exception as error:
        _report_exception(error, script_path)
        return 1
    return 0


def add_arguments(parser):
    """npu-run's options. Options come before the script; everything after it is the script's own argv."""
    parser.add_argument("--report-dir", metavar="DIR",
                        help="write the per-op precision report of every emulated graph and a run record (options, "
                             "versions, loss curve) to DIR, for `npu-report diff` (env " + REPORT_DIR_ENV + ")")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="seed Python's random, numpy and TensorFlow's graph seed (every graph the script makes) "
                             "for a script that seeds nothing itself, so two runs give the same loss curve (env "
                             f"{SEED_ENV})")
    parser.add_argument("--strict", action="store_true",
                        help="turn every configuration warning into an error: the script stops with exit status 1 "
                             f"(env {STRICT_ENV}=1)")
    # Launch modes that start the script more than once (multi-rank) add their options here.
    parser.add_argument("--ranks", type=int, metavar="N",
                        help="run the script as N HCCL ranks on this machine, one process each, with RANK_SIZE, "
                             "RANK_ID, DEVICE_ID and a generated RANK_TABLE_FILE (npu_bridge.distributed.launch)")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script as sys.argv[1:]")


TOOL = Tool(
    PROG, "Run an unmodified TF1-style script written for Ascend NPUs on this machine's CPU, with the NPU's mixed "
          "precision emulated.",
    (Command("", "run a script", f"{__name__}:add_arguments", f"{__name__}:run_command"),),
    usage=f"{PROG} [options] script.py [args ...]   (or: python -m npu_bridge [options] script.py ...)",
    epilog=ENVIRONMENT_HELP)


def main(argv=None):
    """Entry point of `npu-run [options] script.py [args ...]`; returns the exit code of the script."""
    return console.main(TOOL, argv)


def run_command(args):
    """Run the script the parsed command line names, as it asks (report dir, strict, ranks); its exit code."""
    if not os.path.isfile(args.script):
        print(f"{PROG}: can't open file {args.script!r}: [Errno 2] No such file or directory", file=sys.stderr)
        return 2
    if args.report_dir:
        problem = prepare_report_dir(os.path.abspath(args.report_dir))
        if problem:
            print(f"{PROG}: --report-dir: {problem}", file=sys.stderr)
            return 2
        os.environ[REPORT_DIR_ENV] = os.path.abspath(args.report_dir)
    if args.strict:
        os.environ[STRICT_ENV] = "1"
    if args.seed is not None:
        os.environ[SEED_ENV] = str(args.seed)
    if args.ranks is not None:
        from npu_bridge.distributed.launch import run_ranks

        return run_ranks(args.ranks, args.script, args.args)
    if "RANK_SIZE" not in os.environ:
        for name, value in ONE_RANK_ENVIRONMENT.items():
            os.environ.setdefault(name, value)
    return run_script(args.script, args.args)


def _seed_from_environment():
    raw = os.environ[SEED_ENV]
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{PROG}: {SEED_ENV}={raw!r} is not an integer seed") from None


def run_script(script, args, setup=None):
    """Run `script` with sys.argv[1:] = args as `python script` would, on the emulated NPU; its exit code.

    Tools that watch a script's sessions (npu-debug) call this after registering their run observers; `setup()`,
    when given, runs once TensorFlow is prepared, before the script (npu-debug seeds its random generators there).
    """
    try:
        code = _compile_script(script)
    except SyntaxError as error:
        _report_exception(error, os.path.abspath(script))
        return 1
    _prepare_tensorflow()
    if os.environ.get(SEED_ENV, "").strip():
        seed_unseeded(_seed_from_environment())
    if setup is not None:
        setup()
    return _run_script(code, script, list(args))
