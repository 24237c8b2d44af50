"""Automatic request marks for common Python serving paths, installed while a collection runs
(a :class:`gpuidle.Profile`, or gpuidle run's autoload), as gpuidle/_torch.py marks DataLoader
waits: no change to the program, and nothing marked while nothing records.

- **http.server** (the standard library's ``BaseHTTPRequestHandler``, and what derives from it:
  ``SimpleHTTPRequestHandler``, ``wsgiref``'s handler): one request per HTTP request handled,
  named ``gpuidle.request:http-<n>`` (n counts the process's requests). It arrives when its
  request line has been read: ``parse_request`` is called right after ``handle_one_request``
  read that line, so the time a keep-alive connection waits for its next request is in no
  request. It ends when ``handle_one_request`` returns, after the handler ran and the response
  was flushed (a handler whose ``handle()`` does not go through ``handle_one_request``, as
  ``wsgiref``'s, ends it in ``finish()``, after the connection's last flush, or at its next
  ``parse_request``). Its run is marked by what serves it (``generate()`` below).
- **transformers** ``GenerationMixin.generate``: marks the run of the request current on the
  calling thread or asyncio task (the one the HTTP mark opened, or a ``gpuidle.request()``), from
  the call on; with none current, the call is a request of its own, running from its arrival.
  A model class whose ``generate`` does not call ``GenerationMixin.generate`` is not marked.
  transformers is never imported here: it is patched when it is already loaded, or when the
  program imports ``transformers.generation.utils`` later (an import hook while installed).

Every patch that fails is one warning and no patch. Contract (kept by gpuidle/_profile.py and
gpuidle/_autoload.py): :func:`install` when a collection starts, :func:`uninstall` when it stops;
neither changes what the program computes.
"""

from __future__ import annotations

import functools
import importlib.abc
import itertools
import sys
import threading
from typing import Any, Callable, Optional

from . import _markers, _requests
from ._patching import Patches

_lock = threading.Lock()
_installed = False
_patches = Patches()
_finder: Optional["_PatchOnImport"] = None
_warned: set[str] = set()

_HTTP_MODULE = "http.server"
_GENERATION_MODULE = "transformers.generation.utils"
# The request of an HTTP handler, on the handler (the instance serves one connection).
_HTTP_ATTRIBUTE = "_gpuidle_request"

_http_ids = itertools.count(1)
# The HTTP requests open now, so that uninstall ends those whose handler will no longer reach a
# patched end (it ends the request of a handler that is still running too: the collection is
# over, and its ranges would be dropped anyway).
_http_open: dict[int, _requests.Request] = {}


def _warn(what: str, e: BaseException) -> None:
    """One warning per patch point that failed; the program runs on without that mark."""
    if what in _warned:
        return
    _warned.add(what)
    try:
        sys.stderr.write(f"gpuidle: warning: cannot mark the requests of {what} "
                         f"({type(e).__name__}: {e}); profiling without those marks\n")
        sys.stderr.flush()
    except Exception:
        pass


def _patch(owner: Any, name: str, make_wrapper: Callable[[Any], Any]) -> None:
    def marked(original: Any) -> Any:
        wrapper = make_wrapper(original)
        wrapper.__gpuidle_original__ = original
        return wrapper

    _patches.apply(owner, name, marked, required=True)


def _patched(owner: Any, name: str) -> bool:
    return _patches.applied(owner, name)


# --- http.server ---------------------------------------------------------------------------------

def _open_http(handler: Any) -> None:
    r = _requests.Request(f"http-{next(_http_ids)}")
    setattr(handler, _HTTP_ATTRIBUTE, r)  # first: a handler that takes no attribute is unmarked
    r.__enter__()  # the handler's thread: generate() there finds it current
    _http_open[id(r)] = r


def _end_http(handler: Any) -> None:
    r = getattr(handler, _HTTP_ATTRIBUTE, None)
    if r is None:
        return
    try:
        delattr(handler, _HTTP_ATTRIBUTE)
    except AttributeError:
        pass
    _http_open.pop(id(r), None)
    r.__exit__(None, None, None)


def _mark_http(server: Any) -> None:
    handler = server.BaseHTTPRequestHandler

    def make_parse(original: Any) -> Any:
        @functools.wraps(original)
        def parse_request(self: Any) -> Any:
            # handle_one_request has read the request line: the request arrived.
            try:
                _end_http(self)  # left open by a handle() that bypasses handle_one_request
                if _markers.recording():
                    _open_http(self)
            except Exception:
                pass
            return original(self)

        return parse_request

    def make_ended(original: Any) -> Any:
        @functools.wraps(original)
        def ended(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return original(self, *args, **kwargs)
            finally:
                try:
                    _end_http(self)
                except Exception:
                    pass

        return ended

    # parse_request and handle_one_request are BaseHTTPRequestHandler's own; finish comes from
    # socketserver.StreamRequestHandler (undo deletes the patch there).
    _patch(handler, "parse_request", make_parse)
    _patch(handler, "handle_one_request", make_ended)
    _patch(handler, "finish", make_ended)


# --- transformers --------------------------------------------------------------------------------

def _generation_mixin() -> Any:
    """GenerationMixin where it is loaded already, without importing anything (transformers'
    top-level module imports its parts lazily, on attribute access: its __dict__ is read)."""
    for name in (_GENERATION_MODULE, "transformers"):
        module = sys.modules.get(name)
        if module is not None:
            cls = getattr(module, "__dict__", {}).get("GenerationMixin")
            if isinstance(cls, type):
                return cls
    return None


def _mark_generate(cls: Any) -> None:
    if cls is None or _patched(cls, "generate") or not callable(getattr(cls, "generate", None)):
        return

    def make(original: Any) -> Any:
        @functools.wraps(original)
        def generate(self: Any, *args: Any, **kwargs: Any) -> Any:
            r = _requests.current()
            if r is not None:
                r.running()
                return original(self, *args, **kwargs)
            if not _markers.recording():
                return original(self, *args, **kwargs)
            with _requests.Request() as own:  # a request of its own, run from its arrival
                own.running()
                return original(self, *args, **kwargs)

        return generate

    _patch(cls, "generate", make)


# --- patches when a module is imported later -----------------------------------------------------

class _PatchAfterExec:
    """The loader of a watched module: the module's own loader, then gpuidle's patch."""

    def __init__(self, loader: Any, patch: Callable[[Any], None]) -> None:
        self._loader = loader
        self._patch = patch

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        # The module keeps its own loader (importlib.reload, inspect, resources use it).
        try:
            module.__loader__ = self._loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self._loader
        except Exception:
            pass
        self._loader.exec_module(module)
        with _lock:
            if _installed:
                self._patch(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches a watched module right after the program imports it (while installed)."""

    def __init__(self, watched: dict[str, Callable[[Any], None]]) -> None:
        self.watched = watched

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        patch = self.watched.get(fullname)
        if patch is None:
            return None
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is None:
                    continue
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchAfterExec(spec.loader, patch)
                return spec
        except Exception as e:
            _warn(f"{fullname} (imported during the profile)", e)
        return None


def _safely(what: str, patch: Callable[[Any], None]) -> Callable[[Any], None]:
    def run(module: Any) -> None:
        count = len(_patches)
        try:
            patch(module)
        except Exception as e:
            _patches.undo(count)
            _warn(what, e)

    return run


_patch_http = _safely("http.server", _mark_http)
_patch_generation = _safely("transformers' generate()",
                            lambda module: _mark_generate(getattr(module, "GenerationMixin", None)))


def install() -> bool:
    """Marks the serving paths already imported and watches for the others; False if installed
    already (only an install that returned True is undone by :func:`uninstall`)."""
    global _installed, _finder
    with _lock:
        if _installed:
            return False
        _installed = True
        server = sys.modules.get(_HTTP_MODULE)
        if server is not None:
            _patch_http(server)
        mixin = _generation_mixin()
        if mixin is not None:
            _safely("transformers' generate()", _mark_generate)(mixin)
        watched = {}
        if server is None:
            watched[_HTTP_MODULE] = _patch_http
        if mixin is None:
            watched[_GENERATION_MODULE] = _patch_generation
        if watched:
            _finder = _PatchOnImport(watched)
            sys.meta_path.insert(0, _finder)
    return True


def uninstall() -> None:
    """Undoes :func:`install`; ends the HTTP requests still open."""
    global _installed, _finder
    with _lock:
        if not _installed:
            return
        _installed = False
        if _finder is not None:
            try:
                sys.meta_path.remove(_finder)
            except ValueError:
                pass
            _finder = None
        _patches.undo()
        for r in list(_http_open.values()):
            r.end()
        _http_open.clear()
