"""The two loaders tf1compat's finders hand out: one loads an alias as the module it stands for, the other runs a
module's own loader and then a TF 1.15 fix-up on it."""
import importlib
import importlib.abc


class AliasLoader(importlib.abc.Loader):
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
