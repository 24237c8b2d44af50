"""Serving requests: gpuidle.request() (gpuidle/_requests.py) and the automatic marks of
http.server and transformers' generate() (gpuidle/_serving.py).

Collections need a GPU, so the native calls are stood in for (as the marker tests of
test_torch_integration.py do): each test sees the requests gpuidle would start, take up and end,
with their times and threads. tests/collect/host_ranges_test.cc checks what the native calls
record; tests/python/test_profile.py-style tests below run the real ones without a collection."""

from __future__ import annotations

import asyncio
import http.client
import http.server
import importlib
import sys
import textwrap
import threading
import time
import types
import urllib.request

import pytest

import gpuidle
from gpuidle import _markers, _requests, _serving


class NativeRequests:
    """Stands in for _gpuidle.start_request / request_running / end_request."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple] = []  # (what, handle, id or None, time, thread ident)
        self.next = 1
        self.ids: dict[int, str] = {}

    def start(self, id: str) -> int:
        with self.lock:
            handle, self.next = self.next, self.next + 1
            self.ids[handle] = id
            self.events.append(("start", handle, id, time.monotonic(), threading.get_ident()))
        return handle

    def running(self, handle: int) -> None:
        with self.lock:
            self.events.append(("running", handle, self.ids.get(handle), time.monotonic(),
                                threading.get_ident()))

    def end(self, handle: int) -> None:
        with self.lock:
            self.events.append(("end", handle, self.ids.get(handle), time.monotonic(),
                                threading.get_ident()))

    def kinds(self) -> list[tuple[str, str]]:
        """(what, id) of each call, in order."""
        with self.lock:
            return [(e[0], e[2]) for e in self.events]

    def of(self, id: str) -> dict[str, list[tuple]]:
        """The calls for the request with this id, by what."""
        calls: dict[str, list[tuple]] = {"start": [], "running": [], "end": []}
        with self.lock:
            for e in self.events:
                if e[2] == id:
                    calls[e[0]].append(e)
        return calls

    def wait_for(self, what: str, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if sum(1 for e in self.events if e[0] == what) >= count:
                    return
            time.sleep(0.005)
        raise AssertionError(f"fewer than {count} {what} calls: {self.kinds()}")


@pytest.fixture
def native(monkeypatch):
    calls = NativeRequests()
    monkeypatch.setattr(_requests, "_start", calls.start)
    monkeypatch.setattr(_requests, "_running", calls.running)
    monkeypatch.setattr(_requests, "_end", calls.end)
    # As while a collection records (this machine may have no GPU).
    monkeypatch.setattr(_markers, "recording", lambda: True)
    return calls


# --- gpuidle.request() ----------------------------------------------------------------------------

def test_request_as_a_context_manager_starts_runs_and_ends_one_request(native):
    assert _requests.current() is None
    with gpuidle.request(id="r1") as r:
        assert isinstance(r, gpuidle.Request) and r.id == "r1"
        assert _requests.current() is r
        r.running()
        r.running()  # passed on: the native call ignores a second one
    assert _requests.current() is None
    assert native.kinds() == [("start", "r1"), ("running", "r1"), ("running", "r1"),
                              ("end", "r1")]


def test_request_ids_are_str_or_int_and_optional(native):
    with gpuidle.request(7):
        pass
    with gpuidle.request():
        pass
    with gpuidle.request(None):
        pass
    assert [id for what, id in native.kinds() if what == "start"] == ["7", "", ""]
    for bad in (b"x", 1.5, True, object()):
        with pytest.raises(TypeError):
            gpuidle.request(bad)  # type: ignore[arg-type]
    assert native.kinds()[-1] == ("end", ""), "a bad id starts nothing"


def test_nested_requests_restore_the_outer_one_as_current(native):
    with gpuidle.request("outer") as outer:
        with gpuidle.request("inner") as inner:
            assert _requests.current() is inner
        assert _requests.current() is outer
    assert _requests.current() is None


def test_bare_decorator_makes_each_call_one_request(native):
    @gpuidle.request
    def handle(x):
        assert _requests.current() is not None
        return x * 2

    assert handle(2) == 4 and handle(3) == 6
    assert handle.__name__ == "handle"
    assert native.kinds() == [("start", ""), ("end", ""), ("start", ""), ("end", "")]


def test_decorator_with_an_id_and_an_exception_still_ends_the_request(native):
    @gpuidle.request(id="health")
    def health():
        raise ValueError("down")

    with pytest.raises(ValueError):
        health()
    assert native.kinds() == [("start", "health"), ("end", "health")]
    assert _requests.current() is None


def test_async_requests_last_until_their_coroutine_finishes_and_interleave(native):
    seen = {}

    @gpuidle.request(id="a")
    async def first():
        await asyncio.sleep(0.02)
        seen["first"] = _requests.current().id

    async def second():
        with gpuidle.request("b") as r:
            await asyncio.sleep(0.01)
            r.running()
            seen["second"] = _requests.current().id

    async def main():
        await asyncio.gather(first(), second())

    asyncio.run(main())
    # Each task kept its own current request while the other's ran.
    assert seen == {"first": "a", "second": "b"}
    a, b = native.of("a"), native.of("b")
    assert len(a["end"]) == 1 and len(b["end"]) == 1 and len(b["running"]) == 1
    # a began first and ended last: it spanned its awaits, and b ended inside it.
    assert a["start"][0][3] < b["start"][0][3] < b["end"][0][3] < a["end"][0][3]


def test_a_request_may_be_taken_up_and_ended_on_other_threads(native):
    r = gpuidle.request("x").start()
    threading.Thread(target=r.running).start()
    t = threading.Thread(target=r.end)
    native.wait_for("running", 1)
    t.start()
    t.join()
    r.end()  # a second end does nothing
    calls = native.of("x")
    assert len(calls["start"]) == 1 and len(calls["running"]) == 1 and len(calls["end"]) == 1
    assert calls["end"][0][4] != calls["start"][0][4]


def test_each_thread_has_its_own_current_request(native):
    seen = []
    with gpuidle.request("main"):
        t = threading.Thread(target=lambda: seen.append(_requests.current()))
        t.start()
        t.join()
    assert seen == [None]


def test_requests_without_a_collection_raise_nothing():
    # The real native calls: no handle, no ranges, nothing raised.
    assert not _markers.recording()
    for i in range(1000):
        with gpuidle.request(i) as r:
            r.running()

    @gpuidle.request
    def f():
        return 1

    threads = [threading.Thread(target=f) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    r = gpuidle.request("x").start()
    r.running()
    r.end()
    r.end()
    assert r._handle == 0
    assert _requests.current() is None
    # Unknown handles are ignored by the native calls.
    _requests._running(987654321)
    _requests._end(987654321)
    _requests._end(0)


# --- http.server ---------------------------------------------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    seen: list = []
    model = None

    def do_GET(self):
        r = _requests.current()
        self.seen.append(r.id if r is not None else None)
        if self.model is not None:
            self.model.generate()
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server(native):
    assert _serving.install()
    _Handler.seen = []
    _Handler.model = None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    _serving.uninstall()


def _url(httpd, path="/"):
    return f"http://127.0.0.1:{httpd.server_address[1]}{path}"


def test_http_server_requests_are_marked_while_installed(server, native):
    with urllib.request.urlopen(_url(server, "/a"), timeout=10) as response:
        assert response.read() == b"ok"
    native.wait_for("end", 1)
    starts = [e for e in native.events if e[0] == "start"]
    assert len(starts) == 1 and starts[0][2].startswith("http-")
    assert _Handler.seen == [starts[0][2]], "the handler ran inside its request"
    assert [e[0] for e in native.events] == ["start", "end"]
    assert starts[0][4] != threading.get_ident(), "on the handler's thread"


def test_two_requests_on_one_keep_alive_connection_leave_the_wait_out(server, native):
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        conn.request("GET", "/one")
        assert conn.getresponse().read() == b"ok"
        time.sleep(0.3)  # the connection waits for the next request
        before_second = time.monotonic()
        conn.request("GET", "/two")
        assert conn.getresponse().read() == b"ok"
        native.wait_for("end", 2)
    finally:
        conn.close()
    starts = [e for e in native.events if e[0] == "start"]
    ends = [e for e in native.events if e[0] == "end"]
    assert len(starts) == 2 and len(ends) == 2
    assert starts[0][2] != starts[1][2]
    assert starts[0][4] == starts[1][4], "one connection, one handler thread"
    first_end = next(e for e in ends if e[1] == starts[0][1])
    second_end = next(e for e in ends if e[1] == starts[1][1])
    assert starts[0][3] < first_end[3] < starts[1][3] < second_end[3]
    # The first ended once answered, the second arrived once sent: the wait is in neither.
    assert first_end[3] < before_second and starts[1][3] > before_second
    assert starts[1][3] - first_end[3] > 0.2


def test_http_requests_are_not_marked_while_nothing_records(server, native, monkeypatch):
    monkeypatch.setattr(_markers, "recording", lambda: False)
    with urllib.request.urlopen(_url(server), timeout=10) as response:
        assert response.read() == b"ok"
    assert native.events == [] and _Handler.seen == [None]


def test_uninstall_restores_http_server():
    original = (http.server.BaseHTTPRequestHandler.parse_request,
                http.server.BaseHTTPRequestHandler.handle_one_request)
    assert "finish" not in http.server.BaseHTTPRequestHandler.__dict__
    assert _serving.install()
    assert not _serving.install(), "installed once"
    assert http.server.BaseHTTPRequestHandler.parse_request is not original[0]
    _serving.uninstall()
    assert (http.server.BaseHTTPRequestHandler.parse_request,
            http.server.BaseHTTPRequestHandler.handle_one_request) == original
    assert "finish" not in http.server.BaseHTTPRequestHandler.__dict__


# --- transformers' generate() --------------------------------------------------------------------

@pytest.fixture
def transformers(monkeypatch):
    """A stand-in transformers whose GenerationMixin is already loaded."""
    module = types.ModuleType("transformers")
    seen = []

    class GenerationMixin:
        def generate(self, *args, **kwargs):
            r = _requests.current()
            seen.append(r.id if r is not None else None)
            return ("generated", args, kwargs)

    module.GenerationMixin = GenerationMixin
    module.seen = seen
    monkeypatch.setitem(sys.modules, "transformers", module)
    yield module
    _serving.uninstall()


def test_generate_without_a_request_is_a_request_of_its_own(transformers, native):
    original = transformers.GenerationMixin.generate
    assert _serving.install()
    model = transformers.GenerationMixin()
    assert model.generate(1, top_k=2) == ("generated", (1,), {"top_k": 2})
    assert native.kinds() == [("start", ""), ("running", ""), ("end", "")]
    assert transformers.seen == [""], "current while it ran"
    _serving.uninstall()
    assert transformers.GenerationMixin.generate is original


def test_generate_inside_a_request_marks_that_requests_run(transformers, native):
    assert _serving.install()
    model = transformers.GenerationMixin()
    with gpuidle.request("q") as r:
        time.sleep(0.01)  # queued
        model.generate()
        model.generate()  # the run began at the first
    assert native.kinds() == [("start", "q"), ("running", "q"), ("running", "q"), ("end", "q")]
    calls = native.of("q")
    assert calls["start"][0][3] < calls["running"][0][3] < calls["end"][0][3]
    assert r.id == "q"


def test_generate_in_an_http_handler_marks_the_http_requests_run(transformers, server, native):
    _Handler.model = transformers.GenerationMixin()
    with urllib.request.urlopen(_url(server), timeout=10) as response:
        assert response.read() == b"ok"
    native.wait_for("end", 1)
    (what_start, id), (what_run, run_id), (what_end, _) = native.kinds()
    assert (what_start, what_run, what_end) == ("start", "running", "end")
    assert id.startswith("http-") and run_id == id and transformers.seen == [id]


def test_generate_is_not_marked_while_nothing_records(transformers, native, monkeypatch):
    assert _serving.install()
    monkeypatch.setattr(_markers, "recording", lambda: False)
    transformers.GenerationMixin().generate()
    assert native.events == [] and transformers.seen == [None]


def test_transformers_imported_during_the_profile_is_patched_then(tmp_path, native, monkeypatch):
    package = tmp_path / "transformers"
    (package / "generation").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "generation" / "__init__.py").write_text("")
    (package / "generation" / "utils.py").write_text(textwrap.dedent("""
        class GenerationMixin:
            def generate(self):
                return "generated"
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in list(sys.modules):
        if name == "transformers" or name.startswith("transformers."):
            monkeypatch.delitem(sys.modules, name)
    try:
        assert _serving.install()
        utils = importlib.import_module("transformers.generation.utils")
        assert utils.GenerationMixin().generate() == "generated"
        assert native.kinds() == [("start", ""), ("running", ""), ("end", "")]
        # The module keeps its own loader.
        assert type(utils.__loader__).__module__ != _serving.__name__
        assert utils.__spec__.loader is utils.__loader__
    finally:
        _serving.uninstall()
        for name in list(sys.modules):
            if name == "transformers" or name.startswith("transformers."):
                sys.modules.pop(name, None)
    assert utils.GenerationMixin.generate.__name__ == "generate"
    assert not hasattr(utils.GenerationMixin.generate, "__gpuidle_original__")
    assert not any(isinstance(f, _serving._PatchOnImport) for f in sys.meta_path)


def test_a_patch_that_fails_is_one_warning_and_no_patch(monkeypatch, native, capsys):
    class Frozen(type):
        def __setattr__(cls, name, value):
            raise AttributeError("read-only class")

    class GenerationMixin(metaclass=Frozen):
        def generate(self):
            return "generated"

    module = types.ModuleType("transformers")
    module.GenerationMixin = GenerationMixin
    monkeypatch.setitem(sys.modules, "transformers", module)
    monkeypatch.setattr(_serving, "_warned", set())
    try:
        assert _serving.install()
        assert GenerationMixin().generate() == "generated"
    finally:
        _serving.uninstall()
    err = capsys.readouterr().err
    assert err.count("gpuidle: warning:") == 1 and "generate()" in err, err
    assert native.events == []
    # http.server, patched in the same install, was undone as usual.
    assert "finish" not in http.server.BaseHTTPRequestHandler.__dict__


def test_a_profile_that_cannot_start_leaves_nothing_patched():
    original = http.server.BaseHTTPRequestHandler.parse_request
    with gpuidle.profile(quiet=True) as p:
        active = p.active
        patched = http.server.BaseHTTPRequestHandler.parse_request is not original
    if active:
        pytest.skip("this machine collects: the marks are installed while it does")
    assert not patched
    assert http.server.BaseHTTPRequestHandler.parse_request is original
