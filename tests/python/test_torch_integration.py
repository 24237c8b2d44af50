"""gpuidle's PyTorch integration (gpuidle/_torch.py) against stand-in torch modules: the real
torch is not on CI machines; tests/gpu/python proves the same on the GPU with torch itself."""

from __future__ import annotations

import copy
import gc
import importlib.util
import sys
import textwrap
import threading
import types
import weakref

import pytest

import gpuidle
from gpuidle import _call_sites, _markers, _torch
from conftest import gpuidle_lines, run_python


class NvtxCalls:
    def __init__(self):
        self.calls = []

    def push(self, kind, name=""):
        self.calls.append(("push", kind, name))

    def pop(self):
        self.calls.append(("pop",))


_FAKE_TORCH_DIR = "/nonexistent/torch"
_FAKE_NN_AND_OPTIM = textwrap.dedent("""
    import collections
    import itertools
    import weakref

    hooks = {"forward_pre": collections.OrderedDict(), "forward": collections.OrderedDict(),
             "step_pre": collections.OrderedDict(), "step": collections.OrderedDict()}
    ids = itertools.count()
    calls = []  # every hook torch calls: (module, hook)

    class Handle:  # as torch's RemovableHandle: a weak reference to the hooks' dict
        def __init__(self, hooks_dict, hook):
            self.hooks_dict, self.id = weakref.ref(hooks_dict), next(ids)
            hooks_dict[self.id] = hook

        def remove(self):
            hooks_dict = self.hooks_dict()
            if hooks_dict is not None:
                hooks_dict.pop(self.id, None)

    class Hooks(collections.OrderedDict):  # weakly referenced, as torch's OrderedDicts
        pass

    module_hooks = {
        "register_module_forward_pre_hook": lambda hook: Handle(hooks["forward_pre"], hook),
        "register_module_forward_hook":
            lambda hook, *, always_call=False: Handle(hooks["forward"], hook),
    }
    optimizer_hooks = {
        "register_optimizer_step_pre_hook": lambda hook: Handle(hooks["step_pre"], hook),
        "register_optimizer_step_post_hook": lambda hook: Handle(hooks["step"], hook),
    }

    class Module:
        def __init__(self, *children):
            self.children = children
            self._forward_pre_hooks = Hooks()
            self._forward_hooks = Hooks()
            self._forward_hooks_always_called = Hooks()

        def register_forward_pre_hook(self, hook):
            return Handle(self._forward_pre_hooks, hook)

        def register_forward_hook(self, hook, *, always_call=False):
            handle = Handle(self._forward_hooks, hook)
            if always_call:
                self._forward_hooks_always_called[handle.id] = True
            return handle

        def modules(self):
            yield self
            for child in self.children:
                yield from child.modules()

        def forward(self, x):
            for child in self.children:
                x = child(x)
            return x + 1

        def __call__(self, x):
            # As torch's _call_impl: the pre hooks are read (into a tuple) before the first runs,
            # the post hooks after forward; on an Exception the always-called ones run.
            for hook in (*hooks["forward_pre"].values(), *self._forward_pre_hooks.values()):
                calls.append((self, hook))
                hook(self, (x,))
            try:
                out = self.forward(x)
            except Exception:
                for key, hook in self._forward_hooks.items():
                    if key in self._forward_hooks_always_called:
                        hook(self, (x,), None)
                raise
            for hook in (*hooks["forward"].values(), *self._forward_hooks.values()):
                calls.append((self, hook))
                hook(self, (x,), out)
            return out

    class Optimizer:
        def step(self):
            # As torch does: the global hook dicts are iterated live (a hook added or removed
            # meanwhile raises "dictionary changed size during iteration").
            for hook in hooks["step_pre"].values():
                hook(self, (), {})
            for hook in hooks["step"].values():
                hook(self, (), {})
            return "stepped"
""")


@pytest.fixture
def fake_torch(monkeypatch):
    """torch, torch.utils.data (get_worker_info), its dataloader module and the autograd
    profiler, as far as gpuidle touches them."""
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch.utils")
    data = types.ModuleType("torch.utils.data")
    dataloader = types.ModuleType("torch.utils.data.dataloader")

    class _BaseDataLoaderIter:
        def __init__(self):
            self.i = 0

        def __next__(self):
            self.i += 1
            return self.i

    class AutogradProfile:
        def __init__(self, cuda=True):
            self.kineto_activities = {"ProfilerActivity.CPU"} | (
                {"ProfilerActivity.CUDA"} if cuda else set())
            self.started = False

        def _prepare_trace(self):
            self.started = True

        def _start_trace(self):
            self.started = True

    class TensorBase:  # like torch._C.TensorBase: the sync methods are inherited
        def __init__(self, is_cuda=True):
            self.is_cuda = is_cuda

        def item(self):
            return 7.0

        def __bool__(self):
            return True

    class Tensor(TensorBase):
        def __repr__(self):
            return "tensor(7.)"

        def backward(self):
            return "gradients"

    def synchronize():
        return "synced"

    torch.Tensor = Tensor
    torch.cuda = types.SimpleNamespace(synchronize=synchronize)
    dataloader._BaseDataLoaderIter = _BaseDataLoaderIter
    data.dataloader = dataloader
    data.worker = None
    data.get_worker_info = lambda: data.worker
    utils.data = data
    torch.utils = utils
    torch.autograd = types.SimpleNamespace(
        profiler=types.SimpleNamespace(profile=AutogradProfile))
    torch.profiling = False
    torch._C = types.SimpleNamespace(
        _autograd=types.SimpleNamespace(_profiler_enabled=lambda: torch.profiling))
    # nn.Module and Optimizer with torch's global hooks, compiled under torch's folder so that
    # call sites skip their frames as they skip torch's.
    torch.__file__ = _FAKE_TORCH_DIR + "/__init__.py"
    namespace: dict = {}
    exec(compile(_FAKE_NN_AND_OPTIM, _FAKE_TORCH_DIR + "/nn/modules/module.py", "exec"), namespace)
    # As torch.optim does, the packages do not name the submodules that hold the hooks.
    torch.nn = types.SimpleNamespace(Module=namespace["Module"])
    torch.optim = types.SimpleNamespace(Optimizer=namespace["Optimizer"])
    module_module = types.SimpleNamespace(**namespace["module_hooks"], Module=namespace["Module"])
    optimizer_module = types.SimpleNamespace(**namespace["optimizer_hooks"])
    torch.hooks = namespace["hooks"]
    torch.hook_calls = namespace["calls"]
    torch.compiling = False
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: torch.compiling)
    # torch.jit.script compiles a module's hooks: it must find none of gpuidle's.
    recursive = types.ModuleType("torch.jit._recursive")
    recursive.create_script_module = lambda nn_module, stubs_fn: [
        len(m._forward_pre_hooks) + len(m._forward_hooks) for m in nn_module.modules()]
    for name, module in [("torch", torch), ("torch.utils", utils), ("torch.utils.data", data),
                         ("torch.jit._recursive", recursive),
                         ("torch.utils.data.dataloader", dataloader),
                         ("torch.nn.modules.module", module_module),
                         ("torch.optim.optimizer", optimizer_module)]:
        monkeypatch.setitem(sys.modules, name, module)
    # Whether the program marked steps itself is process-wide: each test starts without.
    monkeypatch.setattr(_markers, "user_steps", False)
    # As while a profile collects (this machine may have no GPU): tests of what happens while
    # nothing records turn it off.
    monkeypatch.setattr(_markers, "recording", lambda: True)
    yield torch
    _torch.uninstall()


class FakeProfile:
    def __init__(self):
        self.active = True
        self.stops = 0

    def stop(self):
        self.active = False
        self.stops += 1


def test_dataloader_waits_become_data_ranges_while_installed(fake_torch, monkeypatch):
    nvtx = NvtxCalls()
    monkeypatch.setattr(_markers, "_push", nvtx.push)
    monkeypatch.setattr(_markers, "_pop", nvtx.pop)
    it = fake_torch.utils.data.dataloader._BaseDataLoaderIter()
    _torch.install(FakeProfile())
    assert next(it) == 1
    assert nvtx.calls == [("push", _markers._DATA, "DataLoader.__next__"), ("pop",)]
    _torch.uninstall()
    assert next(it) == 2
    assert len(nvtx.calls) == 2, "no marker after uninstall"


def test_dataloader_marker_names_the_workers_the_loader_has(fake_torch, monkeypatch):
    nvtx = NvtxCalls()
    monkeypatch.setattr(_markers, "_push", nvtx.push)
    monkeypatch.setattr(_markers, "_pop", nvtx.pop)
    it = fake_torch.utils.data.dataloader._BaseDataLoaderIter()
    it._num_workers = 18
    _torch.install(FakeProfile())
    try:
        next(it)
    finally:
        _torch.uninstall()
    assert nvtx.calls[0] == ("push", _markers._DATA, "DataLoader.__next__ (num_workers=18)")


def test_the_data_range_closes_when_the_loader_raises(fake_torch, monkeypatch):
    nvtx = NvtxCalls()
    monkeypatch.setattr(_markers, "_push", nvtx.push)
    monkeypatch.setattr(_markers, "_pop", nvtx.pop)
    cls = fake_torch.utils.data.dataloader._BaseDataLoaderIter

    def exhausted(self):
        raise StopIteration

    cls.__next__ = exhausted
    _torch.install(FakeProfile())
    with pytest.raises(StopIteration):
        next(cls())
    assert nvtx.calls[-1] == ("pop",)


def test_uninstall_leaves_a_later_patch_of_someone_else_alone(fake_torch):
    cls = fake_torch.utils.data.dataloader._BaseDataLoaderIter
    _torch.install(FakeProfile())
    theirs = lambda self: "theirs"  # noqa: E731
    cls.__next__ = theirs
    _torch.uninstall()
    assert cls.__next__ is theirs


def installed_with_markers_recorded(monkeypatch):
    """Installs the integration with call sites on; returns the recorder of its markers."""
    nvtx = NvtxCalls()
    monkeypatch.setattr(_markers, "_push", nvtx.push)
    monkeypatch.setattr(_markers, "_pop", nvtx.pop)
    _call_sites.enable()
    _torch.install(FakeProfile())
    return nvtx


def test_syncs_run_inside_a_call_site_marker_naming_the_programs_line(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    t = fake_torch.Tensor()

    def train_step():
        return t.item(), repr(t), bool(t), fake_torch.cuda.synchronize()  # one line: four syncs

    line = train_step.__code__.co_firstlineno + 1
    assert train_step() == (7.0, "tensor(7.)", True, "synced")
    site = f"{__file__}:{line} in train_step"
    assert nvtx.calls == [("push", _markers._CALL_SITE, site), ("pop",)] * 4, nvtx.calls


def test_backward_runs_inside_a_call_site_marker_naming_the_programs_line(fake_torch,
                                                                         monkeypatch):
    # Autograd's threads launch the backward kernels with no Python frame: their launch
    # samples borrow this marker's line (collect/call_sites.h).
    nvtx = installed_with_markers_recorded(monkeypatch)
    loss = fake_torch.Tensor()

    def train_step():
        return loss.backward()

    line = train_step.__code__.co_firstlineno + 1
    assert train_step() == "gradients"
    site = f"{__file__}:{line} in train_step"
    assert nvtx.calls == [("push", _markers._CALL_SITE, site), ("pop",)], nvtx.calls
    _torch.uninstall()
    assert loss.backward() == "gradients" and len(nvtx.calls) == 2, "unmarked once uninstalled"


def test_forward_and_optimizer_step_run_inside_a_call_site_marker_naming_the_programs_line(
        fake_torch, monkeypatch):
    # PyTorch launches with the GIL released: the native sampling cannot read these lines.
    monkeypatch.setattr(_markers, "user_steps", True)  # call sites only, no optimizer steps
    nvtx = installed_with_markers_recorded(monkeypatch)
    model = fake_torch.nn.Module(fake_torch.nn.Module(), fake_torch.nn.Module())
    opt = fake_torch.optim.Optimizer()

    def train_step():
        out = model(1)  # the outermost module only: one marker, not three
        return out, opt.step()

    first = train_step.__code__.co_firstlineno
    assert train_step() == (4, "stepped")
    forward = f"{__file__}:{first + 1} in train_step"
    step = f"{__file__}:{first + 2} in train_step"
    assert nvtx.calls == [("push", _markers._CALL_SITE, forward), ("pop",),
                          ("push", _markers._CALL_SITE, step), ("pop",)], nvtx.calls
    _torch.uninstall()
    hooks = fake_torch.hooks
    assert not hooks["forward_pre"] and not hooks["forward"], "module hooks left behind"
    assert len(hooks["step_pre"]) == len(hooks["step"]) == 1, "step hooks stay, inert"
    assert train_step() == (4, "stepped") and len(nvtx.calls) == 4, "unmarked once uninstalled"
    _torch.install(FakeProfile())
    assert len(hooks["step_pre"]) == len(hooks["step"]) == 1, "registered once"
    assert train_step() == (4, "stepped") and len(nvtx.calls) == 8, "marked again"


def test_profiles_start_and_stop_while_another_thread_is_inside_an_optimizer_step(
        fake_torch, monkeypatch):
    # Torch iterates its global optimizer hooks live: a profile started or stopped on another
    # thread meanwhile must not add or remove one (the step would raise).
    monkeypatch.setattr(_markers, "user_steps", True)  # call sites only, no optimizer steps
    nvtx = installed_with_markers_recorded(monkeypatch)
    _torch.uninstall()
    opt = fake_torch.optim.Optimizer()
    register = sys.modules["torch.optim.optimizer"].register_optimizer_step_pre_hook

    toggles = []

    def another_thread_toggles_the_profile(*args):
        if not toggles:  # during the first step only
            _torch.install(FakeProfile())
            _torch.uninstall()
            _torch.install(FakeProfile())
            toggles.append(True)

    register(another_thread_toggles_the_profile)
    assert opt.step() == "stepped"
    assert opt.step() == "stepped"
    assert [c[0] for c in nvtx.calls] == ["push", "pop"], "the second step is marked"


def learned(fake_torch, model, *others):
    """Runs model and others, then model again, as a training loop's first iteration and the
    start of the next: the learning round gives each its own hooks, and ends when the first
    comes around. Returns model."""
    for m in (model, *others, model):
        m(1)
    assert all(_torch._forwards.is_root(m) for m in (model, *others))
    assert not fake_torch.hooks["forward_pre"], "no global hook once the round ended"
    return model


def test_after_learning_only_the_root_runs_hooks_and_its_marker_names_the_line(fake_torch,
                                                                            monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    Module = fake_torch.nn.Module
    model = learned(fake_torch, Module(Module(Module()), Module()))
    fake_torch.hook_calls.clear()
    nvtx.calls.clear()

    def train_step():
        return model(1)

    line = train_step.__code__.co_firstlineno + 1
    assert train_step() == 5
    assert nvtx.calls == [("push", _markers._CALL_SITE, f"{__file__}:{line} in train_step"),
                          ("pop",)], nvtx.calls
    assert {id(m) for m, _ in fake_torch.hook_calls} == {id(model)}, "inner modules run none"
    assert len(fake_torch.hook_calls) == 2, "one pre and one post hook"
    assert not fake_torch.hooks["forward"], "no global post hook, ever"


def test_the_first_call_of_a_root_is_marked_too(fake_torch, monkeypatch):
    # Learned during its own call: torch reads the post hooks after forward, so the hook that the
    # learning gave it closes this call's marker.
    nvtx = installed_with_markers_recorded(monkeypatch)
    model = fake_torch.nn.Module(fake_torch.nn.Module())
    assert model(1) == 3
    assert [c[0] for c in nvtx.calls] == ["push", "pop"], nvtx.calls
    assert _torch._step_markers.forward_depth == 0


def test_uninstall_takes_the_roots_hooks_off_and_nothing_keeps_a_model_alive(fake_torch,
                                                                          monkeypatch):
    installed_with_markers_recorded(monkeypatch)
    Module = fake_torch.nn.Module
    temporary = Module()
    model = learned(fake_torch, Module(Module()), temporary)
    assert model._forward_pre_hooks and temporary._forward_pre_hooks
    fake_torch.hook_calls.clear()  # the fake's record of its hook calls holds the modules
    gone = weakref.ref(temporary)
    del temporary
    gc.collect()
    assert gone() is None, "gpuidle keeps no root alive"
    assert len(_torch._forwards.roots) == 1, "a dead root's entry goes with it"
    _torch.uninstall()
    assert not model._forward_pre_hooks and not model._forward_hooks, "hooks left behind"
    assert not fake_torch.hooks["forward_pre"] and not fake_torch.hooks["forward"]
    gone = weakref.ref(model)
    del model
    gc.collect()
    assert gone() is None


def test_a_root_that_appears_after_learning_is_learned_at_the_next_round(fake_torch,
                                                                         monkeypatch):
    # Documented in gpuidle/_torch.py: while recording, a round begins at a tick (a learned
    # root's call, an optimizer step, a DataLoader batch, a sync) at most every few seconds.
    nvtx = installed_with_markers_recorded(monkeypatch)
    Module = fake_torch.nn.Module
    model = learned(fake_torch, Module(Module()))
    evaluate = Module(Module())
    nvtx.calls.clear()
    evaluate(1)
    assert nvtx.calls == [], "unknown until the next round"
    monkeypatch.setattr(_torch, "_RELEARN_EVERY_S", 0.0)
    next(fake_torch.utils.data.dataloader._BaseDataLoaderIter())  # a tick: a round begins
    monkeypatch.setattr(_torch, "_RELEARN_EVERY_S", 3600.0)
    assert fake_torch.hooks["forward_pre"], "learning"
    nvtx.calls.clear()
    evaluate(1)
    assert [c[0] for c in nvtx.calls] == ["push", "pop"], "learned and marked at once"
    evaluate(1)  # came around: the round ends
    assert not fake_torch.hooks["forward_pre"]
    assert _torch._forwards.is_root(evaluate) and _torch._forwards.is_root(model)
    nvtx.calls.clear()
    model(1)
    evaluate(1)
    assert [c[0] for c in nvtx.calls] == ["push", "pop"] * 2


def test_a_round_whose_first_root_never_comes_back_ends_at_a_later_tick(fake_torch,
                                                                        monkeypatch):
    installed_with_markers_recorded(monkeypatch)
    fake_torch.nn.Module()(1)  # a one-off module: the round's first root
    assert fake_torch.hooks["forward_pre"], "still learning"
    monkeypatch.setattr(_torch, "_ROUND_MAX_S", 0.0)
    next(fake_torch.utils.data.dataloader._BaseDataLoaderIter())
    assert not fake_torch.hooks["forward_pre"]


def test_a_root_on_another_thread_is_marked_on_that_thread(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    Module = fake_torch.nn.Module
    inside, release = threading.Event(), threading.Event()

    class Waits(Module):
        def forward(self, x):
            inside.set()
            release.wait(5)
            return x

    release.set()
    waits = Waits()
    model = learned(fake_torch, Module(Module()), waits)
    release.clear()
    inside.clear()
    nvtx.calls.clear()

    def hold():
        waits(1)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(5)
        # A root held open on one thread leaves another thread's calls outermost.
        assert model(1) == 3
    finally:
        release.set()
        holder.join()
    pushes = [c for c in nvtx.calls if c[0] == "push"]
    assert len(pushes) == 2 and len(nvtx.calls) == 4, nvtx.calls
    assert {p[2].rsplit(" ", 1)[1] for p in pushes} == {
        "hold", "test_a_root_on_another_thread_is_marked_on_that_thread"}, pushes


def test_nothing_is_built_or_walked_while_nothing_records(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    Module = fake_torch.nn.Module
    model = learned(fake_torch, Module(Module()))
    walks = []
    caller_site = _call_sites.caller_site
    monkeypatch.setattr(_call_sites, "caller_site",
                        lambda *a, **k: walks.append(a) or caller_site(*a, **k))
    opened = []
    marker_open = _markers._open
    monkeypatch.setattr(_markers, "_open", lambda *a: opened.append(a) or marker_open(*a))

    def iteration():
        next(fake_torch.utils.data.dataloader._BaseDataLoaderIter())
        model(1)
        fake_torch.Tensor().backward()
        fake_torch.optim.Optimizer().step()
        fake_torch.Tensor().item()

    monkeypatch.setattr(_markers, "recording", lambda: False)
    nvtx.calls.clear()
    for _ in range(3):
        iteration()
    assert walks == [] and opened == [] and nvtx.calls == []
    monkeypatch.setattr(_markers, "recording", lambda: True)
    iteration()
    assert len(walks) == 4, walks  # forward, backward, the step's call site, item
    assert [a[1] for a in opened if a[0] == _markers._STEP] == ["optimizer.step#4"], \
        "steps are counted while nothing records, named only while something does"
    _torch.uninstall()


def test_copies_of_a_root_carry_no_gpuidle_hooks(fake_torch, monkeypatch):
    # torch.save(model) pickles it, an EMA deep-copies it: gpuidle's hooks stay behind.
    installed_with_markers_recorded(monkeypatch)
    Module = fake_torch.nn.Module
    model = learned(fake_torch, Module(Module()))
    theirs = model.register_forward_pre_hook(lambda m, a: None)
    twin = copy.deepcopy(model)
    assert list(twin._forward_pre_hooks) == [theirs.id], "the program's own hook is copied"
    assert not twin._forward_hooks and not twin._forward_hooks_always_called
    assert len(model._forward_pre_hooks) == 2 and model._forward_hooks, "the original keeps them"
    _torch.uninstall()
    assert "__getstate__" not in vars(Module), "unpatched"


def test_torch_jit_script_finds_no_gpuidle_hooks(fake_torch, monkeypatch):
    installed_with_markers_recorded(monkeypatch)
    Module = fake_torch.nn.Module
    model = learned(fake_torch, Module(Module()))
    assert model._forward_pre_hooks
    create = sys.modules["torch.jit._recursive"].create_script_module
    assert create(model, None) == [0, 0], "gpuidle's hooks are off before scripting"
    assert not _torch._forwards.is_root(model)


def test_a_forward_pass_ended_by_keyboard_interrupt_leaves_later_ones_marked(fake_torch,
                                                                            monkeypatch):
    # torch calls the always-called forward hooks for an Exception only: after a
    # KeyboardInterrupt the pass's post hook never runs. The next optimizer step makes amends.
    nvtx = installed_with_markers_recorded(monkeypatch)

    class Interrupted(fake_torch.nn.Module):
        def forward(self, x):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Interrupted()(1)
    assert fake_torch.optim.Optimizer().step() == "stepped"
    nvtx.calls.clear()
    assert fake_torch.nn.Module()(1) == 2
    assert [c[0] for c in nvtx.calls] == ["push", "pop"], "the next forward pass is marked"


def test_a_profile_stopped_inside_a_forward_pass_leaves_the_next_one_whole(fake_torch,
                                                                            monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)

    class StopsInside(fake_torch.nn.Module):
        def forward(self, x):
            _torch.uninstall()  # as torch.profiler's start does, through gpuidle's hand-over
            return x

    StopsInside()(1)
    nvtx.calls.clear()  # the marker of the interrupted pass stays open, as stop left it
    _torch.install(FakeProfile())
    model = fake_torch.nn.Module(fake_torch.nn.Module())
    assert model(1) == 3
    assert [c[0] for c in nvtx.calls] == ["push", "pop"], nvtx.calls
    _markers._state.stack.clear()  # the interrupted pass's marker, as the profile's stop left it


def test_a_step_begun_inside_a_forward_pass_outlives_its_marker(fake_torch, monkeypatch):
    # Lightning runs training_step (where a program may mark its steps) inside optimizer.step.
    nvtx = installed_with_markers_recorded(monkeypatch)
    opened = []

    class MarksAStep(fake_torch.nn.Module):
        def forward(self, x):
            opened.append(_markers._open(_markers._STEP, "step#1", "test"))
            return x

    MarksAStep()(1)
    try:
        assert [c[0] for c in nvtx.calls] == ["push", "push", "pop", "pop", "push"], nvtx.calls
        assert nvtx.calls[-1] == ("push", _markers._STEP, "step#1"), "the step is open again"
        assert _markers._state.stack[-1] is opened[0]
    finally:
        _markers._close(opened[0])


def test_a_step_that_raised_leaves_no_marker_behind(fake_torch, monkeypatch):
    monkeypatch.setattr(_markers, "user_steps", True)  # call sites only, no optimizer steps
    nvtx = installed_with_markers_recorded(monkeypatch)
    hooks = fake_torch.hooks
    opt = fake_torch.optim.Optimizer()
    for hook in list(hooks["step_pre"].values()):  # a step whose post hooks never ran
        hook(opt, (), {})
    assert opt.step() == "stepped"
    assert [c[0] for c in nvtx.calls] == ["push", "pop", "push", "pop"], nvtx.calls


def test_the_launch_markers_stay_out_of_what_torch_compile_traces(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    fake_torch.compiling = True
    assert fake_torch.nn.Module(fake_torch.nn.Module())(1) == 3
    assert fake_torch.optim.Optimizer().step() == "stepped"
    assert nvtx.calls == []


def test_host_tensors_are_not_marked(fake_torch, monkeypatch):
    # A CPU tensor's .item() or truth value does not wait for the GPU: no marker, no host range.
    nvtx = installed_with_markers_recorded(monkeypatch)
    t = fake_torch.Tensor(is_cuda=False)
    assert t.item() == 7.0 and bool(t) and repr(t) == "tensor(7.)"
    assert nvtx.calls == []


class NestedProfile(FakeProfile):
    """Stops only when told to stop however deeply nested (gpuidle.Profile._stop_now)."""

    def __init__(self):
        super().__init__()
        self.depth = 2

    def stop(self):
        self.depth -= 1
        if self.depth == 0:
            super().stop()

    def _stop_now(self):
        self.depth = 1
        self.stop()


def test_a_nested_profile_still_hands_cupti_over(fake_torch):
    profile = NestedProfile()
    _torch.install(profile)
    fake_torch.autograd.profiler.profile(cuda=True)._prepare_trace()
    assert not profile.active


def test_uninstall_gives_back_inherited_and_own_methods(fake_torch):
    tensor, cuda = fake_torch.Tensor, fake_torch.cuda
    own_repr, synchronize = tensor.__dict__["__repr__"], cuda.synchronize
    _torch.install(FakeProfile())
    assert "item" in tensor.__dict__ and "__bool__" in tensor.__dict__
    assert cuda.synchronize is not synchronize
    _torch.uninstall()
    assert "item" not in tensor.__dict__, "inherited again from the base class"
    assert "__bool__" not in tensor.__dict__ and bool(tensor()) is True
    assert tensor.__dict__["__repr__"] is own_repr and cuda.synchronize is synchronize


def test_caller_site_skips_library_frames(tmp_path, monkeypatch):
    # A library (torch formatting a tensor for print, say) calls the sync: the site is the
    # program's line that called into the library.
    (tmp_path / "somelib.py").write_text(
        "from gpuidle import _call_sites\n"
        "def sync():\n"
        "    return _call_sites.caller_site(1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import somelib

    _call_sites.enable()
    monkeypatch.setattr(_call_sites, "_prefixes", _call_sites._prefixes + (str(tmp_path) + "/",))
    monkeypatch.setattr(_call_sites, "_is_library", {})

    def log_loss():
        return somelib.sync()

    line = log_loss.__code__.co_firstlineno + 1
    assert log_loss() == f"{__file__}:{line} in log_loss"


def test_gpuidle_stops_before_torch_profiler_takes_cupti(fake_torch, capfd):
    profile = FakeProfile()
    _torch.install(profile)
    prof = fake_torch.autograd.profiler.profile(cuda=True)
    prof._prepare_trace()
    assert prof.started and profile.stops == 1 and not profile.active
    err = capfd.readouterr().err
    assert err.count("gpuidle: warning: torch.profiler is starting") == 1, err


def test_a_cpu_only_torch_profiler_runs_beside_gpuidle(fake_torch):
    profile = FakeProfile()
    _torch.install(profile)
    fake_torch.autograd.profiler.profile(cuda=False)._start_trace()
    assert profile.active and profile.stops == 0


def test_conflict_and_worker_follow_torch(fake_torch):
    assert _torch.conflict() is None and not _torch.in_worker()
    fake_torch.profiling = True
    assert _torch.conflict() == "torch.profiler is running"
    fake_torch.utils.data.worker = object()
    assert _torch.in_worker()


STAND_IN = """
import sys, types
torch = types.ModuleType("torch")
data = types.ModuleType("torch.utils.data")
data.get_worker_info = lambda: WORKER
torch.utils = types.SimpleNamespace(data=data)
torch._C = types.SimpleNamespace(_autograd=types.SimpleNamespace(_profiler_enabled=lambda: PROFILING))
sys.modules.update({"torch": torch, "torch.utils": torch.utils, "torch.utils.data": data})
import gpuidle
with gpuidle.profile() as p:
    pass
print(p.active, p.error)
"""


def test_a_profile_inside_torch_profiler_steps_aside_with_one_warning():
    proc = run_python(STAND_IN.replace("WORKER", "None").replace("PROFILING", "True"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("False torch.profiler is running")
    lines = gpuidle_lines(proc.stderr)
    assert len(lines) == 1 and "gpuidle steps aside" in lines[0], proc.stderr


def test_a_profile_in_a_dataloader_worker_stays_silent_and_inert():
    proc = run_python(STAND_IN.replace("WORKER", "object()").replace("PROFILING", "False"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "False not profiling a DataLoader worker process\n"
    assert gpuidle_lines(proc.stderr) == [], proc.stderr


# --- optimizer steps: steps without user code ---------------------------------------------------

def step_names(nvtx):
    return [c[2] for c in nvtx.calls if c[0] == "push" and c[1] == _markers._STEP]


def test_each_optimizer_step_return_ends_a_step_named_optimizer_step_n(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    opt = fake_torch.optim.Optimizer()
    for _ in range(3):
        assert opt.step() == "stepped"
    # The first iteration (up to the first return) is start-up; each return opens the next step.
    assert step_names(nvtx) == ["optimizer.step#1", "optimizer.step#2", "optimizer.step#3"]
    open_steps = [m for m in _markers._state.stack if m.kind == _markers._STEP]
    assert [m.name for m in open_steps] == ["optimizer.step#3"], "one step open at a time"
    _torch.uninstall()
    assert not [m for m in _markers._state.stack if m.kind == _markers._STEP], \
        "the unfinished step closes when the integration goes"


def test_only_the_first_optimizer_and_the_outermost_step_count(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    Optimizer = fake_torch.optim.Optimizer
    hooks = fake_torch.hooks

    class Wrapper(Optimizer):  # accelerate-like: its step runs the inner optimizer's
        def __init__(self, inner):
            self.inner = inner

        def step(self):
            for hook in hooks["step_pre"].values():
                hook(self, (), {})
            self.inner.step()
            for hook in hooks["step"].values():
                hook(self, (), {})

    generator, discriminator = Wrapper(Optimizer()), Optimizer()
    for _ in range(2):  # a GAN: two optimizers, one step per iteration
        discriminator.step()
        generator.step()
    assert step_names(nvtx) == ["optimizer.step#1", "optimizer.step#2"]
    _torch.uninstall()


def test_steps_are_marked_on_the_training_thread_only(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    opt = fake_torch.optim.Optimizer()
    opt.step()
    other = threading.Thread(target=lambda: fake_torch.optim.Optimizer().step())
    other.start()
    other.join()
    assert step_names(nvtx) == ["optimizer.step#1"]
    _torch.uninstall()


def test_no_optimizer_steps_once_the_program_marks_its_own(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    opt = fake_torch.optim.Optimizer()
    opt.step()
    assert step_names(nvtx) == ["optimizer.step#1"]
    gpuidle.step()  # the program's own step: gpuidle's closes, none follow
    opt.step()
    opt.step()
    assert step_names(nvtx) == ["optimizer.step#1", ""]
    assert [m.name for m in _markers._state.stack if m.kind == _markers._STEP] == [""]
    gpuidle.end_step()
    _torch.uninstall()


def test_a_step_that_raised_does_not_swallow_the_next_boundary(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    opt = fake_torch.optim.Optimizer()
    for hook in list(fake_torch.hooks["step_pre"].values()):  # a step whose post hooks never ran
        hook(opt, (), {})
    opt.step()
    assert step_names(nvtx) == ["optimizer.step#1"]
    _torch.uninstall()


def test_no_optimizer_steps_while_torch_compile_traces(fake_torch, monkeypatch):
    nvtx = installed_with_markers_recorded(monkeypatch)
    fake_torch.compiling = True
    fake_torch.optim.Optimizer().step()
    assert step_names(nvtx) == []
    _torch.uninstall()


REAL_TORCH = """
import copy, gc, io, weakref
import torch
from torch import nn
from gpuidle import _call_sites, _markers, _torch
pushes = []
_markers._push = lambda kind, name="": pushes.append(name)
_markers._pop = lambda: pushes.append(None)
_markers.recording = lambda: True
_call_sites.enable()
class Profile:
    active = True
assert _torch.install(Profile())
model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(2, 2)))
loss_fn = nn.MSELoss()
x = torch.randn(1, 2)
def step():
    out = model(x)
    return loss_fn(out, x)
step(), step()
forwards = _torch._forwards
assert forwards.learning is None and forwards.is_root(model) and forwards.is_root(loss_fn)
inner = list(model.modules())[1:]
assert not any(m._forward_pre_hooks or m._forward_hooks for m in inner), "inner modules: none"
pushes.clear()
step()
print(pushes)
saved = io.BytesIO()
torch.save(model, saved)
saved.seek(0)
loaded = torch.load(saved)
assert not loaded._forward_pre_hooks and not loaded._forward_hooks, "none pickled"
assert not copy.deepcopy(model)._forward_pre_hooks, "none deep-copied"
assert type(torch.jit.script(loss_fn)).__name__ == "RecursiveScriptModule"
_torch.uninstall()
assert not model._forward_pre_hooks and not model._forward_hooks
module = nn.modules.module
assert not module._global_forward_pre_hooks and not module._global_forward_hooks
alive = weakref.ref(model)
del model, loaded
gc.collect()
assert alive() is None, "nothing keeps the model alive"
print("ok")
"""


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_with_real_torch_roots_are_learned_and_copies_pickles_and_jit_still_work(tmp_path):
    script = tmp_path / "train.py"  # a file: call sites name files, not "<string>"
    script.write_text(REAL_TORCH)
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r})")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "ok", proc.stdout
    code = REAL_TORCH.splitlines()
    forward, loss = code.index("    out = model(x)") + 1, code.index("    return loss_fn(out, x)") + 1
    assert lines[0] == f"['{script}:{forward} in step', None, '{script}:{loss} in step', None]", \
        lines[0]
