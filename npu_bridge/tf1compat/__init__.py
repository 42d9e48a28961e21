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
import types

from npu_bridge.tf1compat import estimator_paths

# The module name a TF 1.15 script imports -> the module that provides it here. A key covers its submodules too:
# `tensorflow.contrib.layers` resolves to `npu_bridge.tf1compat.contrib.layers`; the longest matching key wins.
ALIASES = {
    "tensorflow.contrib": "npu_bridge.tf1compat.contrib",
    # contrib's deep TF 1.15 paths, each to the module that provides it whole (tf-slim's are TF 1.15's files)
    "tensorflow.contrib.layers.python.layers": "tf_slim.layers",
    "tensorflow.contrib.slim.python.slim": "tf_slim",
    "tensorflow.contrib.slim.nets": "tf_slim.nets",
    "tensorflow.contrib.training.python.training.evaluation": "tf_slim.training.evaluation",
    "tensorflow.contrib.training.python.training.training": "tf_slim.training.training",
    "tensorflow.contrib.training.python.training.hparam": "npu_bridge.tf1compat.contrib.training.hparam",
    "tensorflow.contrib.tpu.python.ops.tpu_ops": "tensorflow.python.tpu.ops.tpu_ops",
    "tensorflow.contrib.image.python.ops": "npu_bridge.tf1compat.contrib.image",
    # Huawei's older contrib paths for npu_bridge (its TF 1.15 fork shipped the adapter inside tensorflow.contrib)
    "tensorflow.contrib.hccl": "npu_bridge.hccl",
    "tensorflow.contrib.hccl.python": "npu_bridge.hccl",        # `...hccl.python.ops.hccl_ops` is hccl_ops too
    "tensorflow.contrib.hccl.python.ops": "npu_bridge.hccl",
    "tensorflow.contrib.offline_train": "npu_bridge",
    "tensorflow.contrib.offline_train.python": "npu_bridge.estimator",
    # tf-slim's layers import TF's legacy layers from here; tf_keras ships them one level down
    "tf_keras.legacy_tf_layers": "tf_keras.src.legacy_tf_layers",
    # other module paths TF 1.15 had and TensorFlow 2.x dropped
    "tensorflow_core": "tensorflow",        # where TF 1.15's pip package kept its modules; some scripts import them so
    "tensorflow.examples": "npu_bridge.tf1compat.examples",
    "tensorflow.tools.graph_transforms": "npu_bridge.tf1compat.graph_transforms",
    "tensorflow.python.graph_util": "npu_bridge.tf1compat.graph_util",
    "tensorflow.python.data.experimental.ops.threadpool": "npu_bridge.tf1compat.threadpool",
    "tensorflow.python.distribute.distribution_strategy_context": "npu_bridge.tf1compat.distribution_strategy_context",
    "tensorflow.python.training.distribution_strategy_context": "npu_bridge.tf1compat.distribution_strategy_context",
    "tensorflow.python.training.tracking": "npu_bridge.tf1compat.tracking",
}

# Aliases for modules only some TensorFlow 2.x versions dropped: added by install() where the real one is missing.
ALIASES_WHERE_MISSING = {
    "tensorflow.python.training.training_ops": "tensorflow.python.ops.gen_training_ops",     # gone in 2.16
    "tensorflow.python.tpu.tpu_config": "npu_bridge.tf1compat.contrib.tpu",     # RunConfig, TPUConfig: gone in 2.16
}

# Modules TensorFlow 2.x still has under TF 1.15's name but without TF 1.15's contents. TensorFlow itself imports
# them, so they cannot be aliased for everyone: npu-run's import hook gives the user's code these instead.
USER_CODE_ALIASES = {
    "tensorflow.python.framework.graph_util": "npu_bridge.tf1compat.graph_util",
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


def _patch_model_layers(training_module):
    from npu_bridge.tf1compat.removed import patch_model_layers

    patch_model_layers(training_module)


def _accept_tf115_moments(batch_normalization_module):
    from npu_bridge.tf1compat.keras_fixups import accept_tf115_moments

    accept_tf115_moments(batch_normalization_module)


# Modules of other libraries that get a TF 1.15 fix-up once they are imported (never imported for it): Keras'
# Model gets a `_layers` that names the script's line (tf1compat.removed); BatchNormalization subclasses with
# TF 1.15's `_moments` keep working (tf1compat.keras_fixups).
AFTER_IMPORT = {
    "tf_keras.src.engine.training": _patch_model_layers,
    "keras.src.engine.training": _patch_model_layers,
    "tf_keras.src.layers.normalization.batch_normalization": _accept_tf115_moments,
    "keras.src.layers.normalization.batch_normalization": _accept_tf115_moments,
}


class _PatchingLoader(importlib.abc.Loader):
    """A module's own loader, then its AFTER_IMPORT fix-up."""

    def __init__(self, loader, patch):
        self._loader = loader
        self._patch = patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._patch(module)

    def __getattr__(self, name):        # get_source, get_filename, ...: the module's own loader answers
        return getattr(self._loader, name)


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the modules named in `aliases` (and their submodules); every other name is left to the usual finders,
    except that the modules in `after_import` get their fix-up once loaded."""

    def __init__(self, aliases, after_import=None):
        self._aliases = aliases
        self._after_import = after_import or {}

    def target(self, fullname):
        """The module providing `fullname`, or None when no alias covers it."""
        matches = [prefix for prefix in self._aliases if fullname == prefix or fullname.startswith(prefix + ".")]
        if not matches:
            return None
        prefix = max(matches, key=len)
        return self._aliases[prefix] + fullname[len(prefix):]

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self._after_import:
            return self._patched_spec(fullname, path, target)
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


    def _patched_spec(self, fullname, path, target):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _PatchingLoader(spec.loader, self._after_import[fullname])
                return spec
        return None


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


_FINDER = AliasFinder(ALIASES, AFTER_IMPORT)
_FALLBACK_FINDER = FallbackFinder(FALLBACKS)


def install():
    """Make TF 1.15's module names, and the cloud stand-ins, importable in this process (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
        for name, patch in AFTER_IMPORT.items():      # imported before install(): fix it up now
            if name in sys.modules:
                patch(sys.modules[name])
    if _FALLBACK_FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FALLBACK_FINDER)
    estimator_paths.install(ALIASES)
    for name, target in ALIASES_WHERE_MISSING.items():
        if name not in ALIASES and _is_missing(name):
            ALIASES[name] = target
    if "tensorflow" in sys.modules:     # the launcher imports TensorFlow first; then tf.compat.v1.contrib resolves
        importlib.import_module("npu_bridge.tf1compat.contrib").attach(sys.modules["tensorflow"])


def _is_missing(name):
    """Whether this TensorFlow lacks module `name` (looked up without importing it; asked before its alias exists)."""
    try:
        return importlib.util.find_spec(name) is None
    except ModuleNotFoundError:
        return True


class Overlay(types.ModuleType):
    """`base` with one attribute replaced: what `import a.b.c` binds to `a` when a.b.c resolves elsewhere."""

    def __init__(self, base, name, value):
        super().__init__(base.__name__, base.__doc__)
        self._base = base
        setattr(self, name, value)

    def __getattr__(self, name):
        return getattr(self._base, name)

    def __dir__(self):
        return sorted(set(dir(self._base)) | set(self.__dict__))


def bind(top, parts, leaf):
    """What `import top.parts[0]...parts[-1]` binds: `top`, whose attribute path `parts` leads to `leaf` (overlaid
    where the real attribute is something else), so `import tensorflow.python.keras as keras` gets the leaf."""
    if not parts:
        return leaf
    child = getattr(top, parts[0], None)
    if not isinstance(child, types.ModuleType):
        child = types.ModuleType(f"{top.__name__}.{parts[0]}")
    inner = bind(child, parts[1:], leaf)
    return top if inner is getattr(top, parts[0], None) else Overlay(top, parts[0], inner)
