"""gpuidle's PyTorch integration (gpuidle/_torch.py) against stand-in torch modules: the real
torch is not on CI machines; tests/gpu/python proves the same on the GPU with torch itself."""

from __future__ import annotations

import sys
import textwrap
import threading
import types

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
    hooks = {"forward_pre": {}, "forward": {}, "step_pre": {}, "step": {}}

    class Handle:
        def __init__(self, kind, hook):
            self.kind, self.key = kind, object()
            hooks[kind][self.key] = hook

        def remove(self):
            hooks[self.kind].pop(self.key, None)

    module_hooks = {
        "register_module_forward_pre_hook": lambda hook: Handle("forward_pre", hook),
        "register_module_forward_hook":
            lambda hook, *, always_call=False: Handle("forward", hook),
    }
    optimizer_hooks = {
        "register_optimizer_step_pre_hook": lambda hook: Handle("step_pre", hook),
        "register_optimizer_step_post_hook": lambda hook: Handle("step", hook),
    }

    class Module:
        def __init__(self, *children):
            self.children = children

        def forward(self, x):
            for child in self.children:
                x = child(x)
            return x + 1

        def __call__(self, x):
            for hook in list(hooks["forward_pre"].values()):
                hook(self, (x,))
            out = self.forward(x)
            for hook in list(hooks["forward"].values()):
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
    module_module = types.SimpleNamespace(**namespace["module_hooks"])
    optimizer_module = types.SimpleNamespace(**namespace["optimizer_hooks"])
    torch.hooks = namespace["hooks"]
    torch.compiling = False
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: torch.compiling)
    for name, module in [("torch", torch), ("torch.utils", utils), ("torch.utils.data", data),
                         ("torch.utils.data.dataloader", dataloader),
                         ("torch.nn.modules.module", module_module),
                         ("torch.optim.optimizer", optimizer_module)]:
        monkeypatch.setitem(sys.modules, name, module)
    # Whether the program marked steps itself is process-wide: each test starts without.
    monkeypatch.setattr(_markers, "user_steps", False)
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
