"""TF 1.15 compatibility: the modules TF 1.15 scripts import that TensorFlow 2.x removed or moved.

Ported Ascend scripts are TF 1.15 code: `tf.contrib`, `tensorflow.contrib.slim`, Keras 2 module paths, and more.
This room makes those names importable again, each resolved to TF 1.15's API built from what TensorFlow 2.x still
has (or written here where it has nothing). It knows nothing of precision: what it builds are ordinary TF ops, which
the precision pass treats like any others.

The launcher (npu-run) calls install(); tests and other launchers may call it too. It adds one import finder that
answers only for the aliased module names, and imports nothing until a script asks for one of them, so it costs
nothing when unused.
"""
import importlib
import importlib.abc
import importlib.util
import sys

from npu_bridge.tf1compat import estimator_paths

# The module name a TF 1.15 script imports -> the module that provides it here. A key covers its submodules too:
# `tensorflow.contrib.layers` resolves to `npu_bridge.tf1compat.contrib.layers`; the longest matching key wins.
ALIASES = {
    "tensorflow.contrib": "npu_bridge.tf1compat.contrib",
    # contrib's deep TF 1.15 paths, each to the module that provides it whole (tf-slim's are TF 1.15's files)
    "tensorflow.contrib.layers.python.layers": "tf_slim.layers",
    "tensorflow.contrib.slim.python.slim": "tf_slim",
    "tensorflow.contrib.slim.nets": "tf_slim.nets",
    "tensorflow.contrib.training.python.training.hparam": "npu_bridge.tf1compat.contrib.training.hparam",
    "tensorflow.contrib.training.python.training": "tf_slim.training",
    "tensorflow.contrib.tpu.python.tpu.tpu_function": "tensorflow.python.tpu.tpu_function",
    "tensorflow.contrib.tpu.python.tpu.tpu_config": "npu_bridge.tf1compat.contrib.tpu",
    "tensorflow.contrib.tpu.python.tpu.tpu_estimator": "npu_bridge.tf1compat.contrib.tpu",
    "tensorflow.contrib.tpu.python.ops.tpu_ops": "tensorflow.python.tpu.ops.tpu_ops",
    "tensorflow.contrib.image.python.ops": "npu_bridge.tf1compat.contrib.image",
    # tf-slim's layers import TF's legacy layers from here; tf_keras ships them one level down
    "tf_keras.legacy_tf_layers": "tf_keras.src.legacy_tf_layers",
}

# Stand-ins for modules of the Ascend cloud the ported scripts import, used only when the real module is not
# importable (FallbackFinder).
FALLBACKS = {
    "moxing": "npu_bridge.tf1compat.moxing",
}


class _AliasLoader(importlib.abc.Loader):
    """Loads an aliased name as the module it stands for: one module object under both names, so state (a
    collection, a registered arg_scope) is shared whichever spelling imported it."""

    def __init__(self, target):
        self._target = target
        self._target_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self._target)
        self._target_spec = module.__spec__
        return module

    def exec_module(self, module):
        """Nothing to run: create_module returned the target module, already executed. The import system has
        stamped the alias's spec on it; the module keeps its own (its relative imports and reload need it)."""
        module.__spec__ = self._target_spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the modules named in `aliases` (and their submodules); every other name is left to the usual finders."""

    def __init__(self, aliases):
        self._aliases = aliases

    def target(self, fullname):
        """The module providing `fullname`, or None when no alias covers it."""
        matches = [prefix for prefix in self._aliases if fullname == prefix or fullname.startswith(prefix + ".")]
        if not matches:
            return None
        prefix = max(matches, key=len)
        return self._aliases[prefix] + fullname[len(prefix):]

    def find_spec(self, fullname, path=None, target=None):
        module_name = self.target(fullname)
        if module_name is None:
            return None
        try:
            found = importlib.util.find_spec(module_name)
        except ModuleNotFoundError:     # a parent of module_name is missing or not a package
            found = None
        if found is None:
            if fullname.startswith("tensorflow.contrib."):
                from npu_bridge.tf1compat.contrib import removed

                raise removed.missing_module(fullname)
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module_name))


class FallbackFinder(AliasFinder):
    """An AliasFinder for modules that may really be installed: a name resolves to its stand-in only when no other
    finder finds the real module, and a submodule only when its package is the stand-in (so `moxing.file` is the
    stand-in's own file module, never a second copy loaded from its folder under the alias name)."""

    def find_spec(self, fullname, path=None, target=None):
        module_name = self.target(fullname)
        if module_name is None:
            return None
        package, _, _ = fullname.rpartition(".")
        if package:
            if getattr(sys.modules.get(package), "__name__", None) != self.target(package):
                return None
        elif any(finder.find_spec(fullname, path) for finder in sys.meta_path
                 if finder is not self and hasattr(finder, "find_spec")):
            return None
        return super().find_spec(fullname, path, target)


_FINDER = AliasFinder(ALIASES)
_FALLBACK_FINDER = FallbackFinder(FALLBACKS)


def install():
    """Make TF 1.15's module names, and the cloud stand-ins, importable in this process (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    if _FALLBACK_FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FALLBACK_FINDER)
    estimator_paths.install(ALIASES)
    if "tensorflow" in sys.modules:     # the launcher imports TensorFlow first; then tf.compat.v1.contrib resolves
        importlib.import_module("npu_bridge.tf1compat.contrib").attach(sys.modules["tensorflow"])
