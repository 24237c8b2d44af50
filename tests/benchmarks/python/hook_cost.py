"""What gpuidle's PyTorch forward hooks cost per forward pass, on the CPU (issue 15).

  PYTHONPATH=<build>/python python3 tests/benchmarks/python/hook_cost.py [--repeats 7]

A ResNet-50-shaped tree of nn.Modules (the stem, 16 bottlenecks in stages of 3, 4, 6 and 3, the
head: 175 module calls per forward) on tiny CPU tensors, so that Python's per-module-call cost
dominates, timed under:

  none          no hook at all: torch's fast path for every module call
  old-global    the hooks of gpuidle up to issue 15, replicated here: global forward pre and post
                hooks on every module call, a call-site marker around the outermost one
  noop-global   one global pre hook that returns at once (what a hook left registered, idle,
                would cost)
  learning      gpuidle's global hook of a learning round, kept on (the first iteration after
                install, and at most one iteration every few seconds while recording)
  roots         gpuidle's steady state while recording: hooks on the learned root only
  roots-idle    the same while nothing records (no marker, no frame walk)

Each configuration runs in turn, REPEATS times; prints the median CPU microseconds per forward,
the median cost over "none" (also per module call) and the difference of the minimums (steadier
on a loaded machine). A stand-in profile installs gpuidle's integration as its tests do
(a CPU machine cannot collect). Also prints what one gpuidle._gpuidle.recording() call costs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import weakref

import torch
from torch import nn

from gpuidle import _call_sites, _markers, _torch
from gpuidle._native import _gpuidle


class Bottleneck(nn.Module):
    def __init__(self, channels: int, downsample: bool) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.conv3 = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.downsample = (nn.Sequential(nn.Conv2d(channels, channels, 1, bias=False),
                                         nn.BatchNorm2d(channels)) if downsample else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.downsample(x) if self.downsample is not None else x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


def resnet50_shaped(channels: int = 2) -> nn.Module:
    stages = [nn.Sequential(*[Bottleneck(channels, i == 0) for i in range(n)])
              for n in (3, 4, 6, 3)]
    return nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False),
                         nn.BatchNorm2d(channels), nn.ReLU(), nn.MaxPool2d(2), *stages,
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10))


def module_calls(model: nn.Module, x: torch.Tensor) -> int:
    calls = []
    handle = nn.modules.module.register_module_forward_pre_hook(lambda m, a: calls.append(m))
    try:
        model(x)
    finally:
        handle.remove()
    return len(calls)


def install_old_global_hooks() -> list:
    """gpuidle's forward hooks before issue 15: global, on every module call."""
    state = threading.local()
    compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)

    def pre(mod, args):
        if compiling():
            return
        depth = getattr(state, "depth", 0) + 1
        state.depth = depth
        if depth == 1:
            state.marker = _torch._open_caller_site(state)

    def post(mod, args, output):
        if compiling() or getattr(state, "depth", 0) == 0:
            return
        state.depth -= 1
        if state.depth == 0 and state.marker is not None:
            _markers._close(state.marker)
            state.marker = None

    module = nn.modules.module
    return [module.register_module_forward_pre_hook(pre),
            module.register_module_forward_hook(post)]


class StandInProfile:
    active = True

    def stop(self) -> None:
        self.active = False


def time_forwards(model: nn.Module, x: torch.Tensor, forwards: int) -> float:
    """Microseconds of this thread's CPU time per forward (the mean over `forwards` calls): CPU
    time, so that other processes on a shared machine count less."""
    start = time.thread_time()
    for _ in range(forwards):
        model(x)
    return (time.thread_time() - start) / forwards * 1e6


class Configurations:
    """Each sets up before its timing and tears down after it."""

    def __init__(self, model: nn.Module, x: torch.Tensor) -> None:
        self.model, self.x = model, x
        self.undo: list = []

    def none(self) -> None:
        pass

    def old_global(self) -> None:
        _markers.recording = lambda: True
        for handle in install_old_global_hooks():
            self.undo.append(handle.remove)

    def noop_global(self) -> None:
        handle = nn.modules.module.register_module_forward_pre_hook(lambda m, a: None)
        self.undo.append(handle.remove)

    def _install(self, recording: bool) -> None:
        _markers.recording = (lambda: True) if recording else _gpuidle.recording
        assert _torch.install(StandInProfile())
        self.undo.append(_torch.uninstall)
        self.model(self.x)  # the learning round: the root gets its hooks
        self.model(self.x)  # and comes around: the round ends
        forwards = _torch._forwards
        assert forwards is not None and forwards.learning is None, "the round ended"
        assert forwards.is_root(self.model), "the model is the learned root"
        forwards.round_ended = float("inf")  # no new round during the timing

    def learning(self) -> None:
        self._install(recording=True)
        forwards = _torch._forwards
        forwards.start_round(time.monotonic())
        keep = nn.Identity()  # a first root that never comes around: the round stays on
        forwards.round_first = weakref.ref(keep)
        forwards.round_started = float("inf")  # nor does a tick end it
        self.undo.append(lambda: keep)

    def roots(self) -> None:
        self._install(recording=True)

    def roots_idle(self) -> None:
        self._install(recording=False)

    def tear_down(self) -> None:
        while self.undo:
            self.undo.pop()()
        _markers.recording = _gpuidle.recording


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--forwards", type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = resnet50_shaped().eval()
    x = torch.randn(1, 3, 4, 4)
    _call_sites.enable()  # the library folders, as a profile's start sets them
    configs = Configurations(model, x)
    names = ["none", "old-global", "noop-global", "learning", "roots", "roots-idle"]
    times: dict[str, list[float]] = {name: [] for name in names}
    with torch.no_grad():
        calls = module_calls(model, x)
        time_forwards(model, x, args.forwards)  # warm-up
        for _ in range(args.repeats):
            for name in names:
                getattr(configs, name.replace("-", "_"))()
                try:
                    time_forwards(model, x, 10)
                    times[name].append(time_forwards(model, x, args.forwards))
                finally:
                    configs.tear_down()
    _call_sites.disable()
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}: {calls} module calls "
          f"per forward, median of {args.repeats} x {args.forwards} forwards")
    base = statistics.median(times["none"])
    least = min(times["none"])
    print(f"{'configuration':14} {'us/forward':>11} {'over none':>10} {'per module call':>16} "
          f"{'(min: over none)':>17}")
    for name in names:
        median = statistics.median(times[name])
        print(f"{name:14} {median:11.1f} {median - base:10.1f} "
              f"{(median - base) / calls * 1000:13.0f} ns {min(times[name]) - least:17.1f}")
    n = 200_000
    start = time.perf_counter()
    for _ in range(n):
        _gpuidle.recording()
    print(f"_gpuidle.recording(): {(time.perf_counter() - start) / n * 1e9:.0f} ns per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
