"""The two loaders tf1compat's finders hand out: one loads an alias as the module it stands for, the other runs a
module's own loader and then a TF 1.15 fix-up on it."""
import importlib
import importlib.abc
import types

# Our own stand-ins live here; their star exports are trimmed to what TF 1.15's modules exported (star_names).
OWN_PACKAGE = "npu_bridge.tf1compat."


class AliasLoader(importlib.abc.Loader):
    """Loads an aliased name as the module it stands for: one module object under both names, so state (a
    collection, a registered arg_scope) is shared whichever spelling imported it."""

    def __init__(self, target):
        self._target = target
        self._target_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self._target)
        self._target_spec = module.__spec__
        if module.__name__.startswith(OWN_PACKAGE) and not hasattr(module, "__all__"):
            module.__all__ = star_names(module)
        return module

    def exec_module(self, module):
        """Nothing to run: create_module returned the target module, already executed. The import system has
        stamped the alias's spec on it; the module keeps its own (its relative imports and reload need it)."""
        module.__spec__ = self._target_spec


def star_names(module):
    """What `from <TF 1.15 name> import *` gives for one of our modules: its public names except the modules it
    imports (other than its own submodules). TF 1.15's modules exported only their documented symbols; ours also
    hold `tf`, `np`, `sys`, `removed`, ..., and `from tensorflow.contrib.rnn import *` would otherwise bind
    TensorFlow 2's package over the script's own TF1 `tf`."""
    own = module.__name__ + "."
    return sorted(name for name, value in vars(module).items() if not name.startswith("_") and
                  not (isinstance(value, types.ModuleType) and not value.__name__.startswith(own)))


class PatchingLoader(importlib.abc.Loader):
    """A module's own loader, then its fix-up (tf1compat.AFTER_IMPORT)."""

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
