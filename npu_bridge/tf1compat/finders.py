"""The import finders tf1compat.install() puts on sys.meta_path: AliasFinder answers for TF 1.15's module names
(tf1compat.ALIASES) and hands the fix-ups of tf1compat.AFTER_IMPORT to the modules they patch; FallbackFinder
answers for stand-ins of modules that may really be installed (tf1compat.FALLBACKS)."""
import importlib.abc
import importlib.machinery
import importlib.util
import sys

from npu_bridge.tf1compat.loaders import OWN_PACKAGE, AliasLoader, PatchingLoader


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the modules named in `aliases` (and their submodules); every other name is left to the usual finders,
    except that the modules in `after_import` get their fix-up once loaded. An aliased name whose module does not
    exist raises the error `missing` gives for its prefix, if any. The tables are read at each lookup, so
    entries added after install() count."""

    def __init__(self, aliases, after_import=None, missing=None):
        self._aliases = aliases
        self._after_import = after_import or {}
        self._missing = missing or {}

    def target(self, fullname):
        """The module providing `fullname`, or None when no alias covers it (the longest matching key wins)."""
        matches = [prefix for prefix in self._aliases if fullname == prefix or fullname.startswith(prefix + ".")]
        if not matches:
            return None
        prefix = max(matches, key=len)
        return self._aliases[prefix] + fullname[len(prefix):]

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self._after_import:
            return self._patched_spec(fullname, path, target)
        module_name = self.target(fullname) or self._submodule_alias(fullname, path)
        if module_name is None:
            return None
        try:
            found = importlib.util.find_spec(module_name)
        except ModuleNotFoundError:     # a parent of module_name is missing or not a package
            found = None
        if found is None:
            for prefix, error in self._missing.items():
                if fullname.startswith(prefix):
                    raise error(fullname)
            return None
        return importlib.util.spec_from_loader(fullname, AliasLoader(module_name))

    def _submodule_alias(self, fullname, path):
        """`from tensorflow.contrib.tpu.python.tpu import tpu_feed` imports the submodule under its package's own
        name, npu_bridge.tf1compat.contrib.tpu.python.tpu.tpu_feed. When our package has no such file and the TF
        1.15 spelling has an alias of its own (more specific than the package's), the module that alias names."""
        if not fullname.startswith(OWN_PACKAGE):
            return None
        for prefix, package in self._aliases.items():
            if fullname.startswith(package + "."):
                module_name = self.target(prefix + fullname[len(package):])
                if module_name != fullname and importlib.machinery.PathFinder.find_spec(fullname, path) is None:
                    return module_name
        return None

    def _patched_spec(self, fullname, path, target):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = PatchingLoader(spec.loader, self._after_import[fullname])
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
