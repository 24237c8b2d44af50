"""gpuidle's Python layer for unchanged programs (docs/INJECTION.md, "Python programs").

``gpuidle run`` and a preloaded ``libgpuidle.so`` put this folder first on the program's
PYTHONPATH, so Python runs this file at start-up (``site``). It:

1. waits, at no cost, for the program to import torch, jax, cupy or tensorflow (an import hook
   that only looks at those names; gpuidle imports none of them) and then loads gpuidle from
   this package and calls ``gpuidle._autoload.activate``, which attaches gpuidle's Python layer
   to the collection the injected library runs; once that layer is active, the collection is
   stopped and its report written from Python's atexit (``gpuidle._autoload.stop_at_exit``),
   which also runs when the program ends by Ctrl-C, unlike the library's C exit handler;
2. runs the ``sitecustomize`` that the program would have had without gpuidle (the next one on
   ``sys.path``), exactly as Python would have, so that nothing of the user's is lost.

Nothing happens (step 1) with ``GPUIDLE_PYTHON=0`` or ``GPUIDLE_DISABLE=1``, when the injected
library is not gpuidle's, or when this package's native module was not built for this Python
(another version): the program runs exactly as without gpuidle. It prints nothing and raises
nothing of its own.
"""


def _gpuidle_setup():
    import os
    import sys

    env = os.environ
    # As the option table reads it: 1/true/yes or unset is on; 0/false/no is off, and so is a
    # bad value (gpuidle is then off for the whole process).
    if env.get("GPUIDLE_PYTHON", "1").strip().lower() not in ("", "1", "true", "yes"):
        return
    if env.get("GPUIDLE_DISABLE", "").strip().lower() in ("1", "true", "yes"):
        return
    if not os.path.basename(env.get("CUDA_INJECTION64_PATH", "")).startswith("libgpuidle.so"):
        return
    if os.getpid() == 1:  # never meddle with an init process
        return
    # Once per process, also when another tool imports sitecustomize again (ddtrace, pydevd).
    if any(type(f).__name__ == "GpuidleImportWatcher" for f in sys.meta_path):
        return
    import importlib.machinery

    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        names = os.listdir(package_dir)
    except OSError:
        return
    # This interpreter's own suffix (".cpython-312-x86_64-linux-gnu.so"), not the generic ".so"
    # that every version accepts.
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    if not any(n == "_gpuidle" + suffix for n in names):
        return  # built for another Python

    def load_gpuidle():
        module = sys.modules.get("gpuidle")
        if module is not None:  # the program imported gpuidle itself
            return module
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec(
            "gpuidle", [os.path.dirname(package_dir)])
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        sys.modules["gpuidle"] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            for name in [n for n in sys.modules if n == "gpuidle" or n.startswith("gpuidle.")]:
                del sys.modules[name]
            raise
        return module

    def on_import(framework):
        try:
            gpuidle = load_gpuidle()
            if gpuidle is None:
                return
            import importlib

            autoload = importlib.import_module("gpuidle._autoload")
            autoload.activate(framework)
        except Exception:
            pass  # the program runs as without gpuidle

    class GpuidleImportWatcher:
        """Calls on_import after torch, jax, cupy or tensorflow was imported (top-level name)."""

        names = {"torch", "jax", "cupy", "tensorflow"}

        def __init__(self):
            self.busy = set()

        def find_spec(self, name, path=None, target=None):
            if name not in self.names or name in self.busy or path is not None:
                return None
            self.busy.add(name)
            try:
                import importlib.util

                spec = importlib.util.find_spec(name)  # by the finders after this one
            except Exception:
                return None
            finally:
                self.busy.discard(name)
            loader = getattr(spec, "loader", None)
            if loader is None or isinstance(loader, type) or not hasattr(loader, "exec_module"):
                return None  # nothing to hook into: the normal import goes on
            original = loader.exec_module
            watcher = self

            def exec_module(module):
                if getattr(module, "__name__", None) != name:  # a loader shared with others
                    return original(module)
                try:
                    original(module)
                finally:
                    try:
                        del loader.exec_module  # this loader's own method again
                    except AttributeError:
                        pass
                watcher.names.discard(name)
                on_import(name)

            try:
                loader.exec_module = exec_module
            except (AttributeError, TypeError):
                return None
            return spec

    sys.meta_path.insert(0, GpuidleImportWatcher())

    def stop_at_exit():
        try:
            autoload = sys.modules.get("gpuidle._autoload")
            if autoload is not None and getattr(autoload, "_active", False):
                autoload.stop_at_exit()
        except Exception:
            pass  # the library's C exit handler stops it then

    # Registered first, so it runs last of Python's exit handlers: the CUDA work of the
    # program's own still counts, as it did when only the C handler stopped the collection.
    import atexit

    atexit.register(stop_at_exit)


def _gpuidle_chain():
    """Runs the sitecustomize this program would have had without gpuidle, as this module."""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))

    def other(entry):
        try:
            return os.path.realpath(os.path.abspath(entry or os.getcwd())) != here
        except (OSError, ValueError):
            return True

    spec = importlib.machinery.PathFinder.find_spec(
        "sitecustomize", [p for p in sys.path if isinstance(p, str) and other(p)])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)  # its errors are reported by site, as without gpuidle


try:
    _gpuidle_setup()
except Exception:
    pass
try:
    _gpuidle_chain()
finally:
    # The program's sys.path as without gpuidle (the variable stays, for its children).
    def _gpuidle_unlist():
        import os
        import sys

        here = os.path.dirname(os.path.abspath(__file__))
        sys.path[:] = [p for p in sys.path
                       if not (isinstance(p, str) and os.path.abspath(p or ".") == here)]

    try:
        _gpuidle_unlist()
    except Exception:
        pass
