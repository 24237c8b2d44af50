"""PyTorch integration, installed by :class:`gpuidle.Profile` while it collects.

- **DataLoader waits are data ranges.** ``__next__`` of every DataLoader iterator runs inside a
  gpuidle data marker, so the GPU's wait for input is named ``data_starved.dataloader`` with no
  change to the training loop. DataLoader worker processes never run it (they produce batches;
  the training process waits for them).
- **torch.profiler and gpuidle never both hold CUPTI.** CUPTI serves one activity client per
  process: two tools would silently lose each other's records. A profile that starts while
  torch.profiler (or the autograd profiler) runs steps aside with one warning
  (:func:`conflict`); a torch.profiler that starts with CUDA activities while gpuidle collects
  makes gpuidle stop first, with one warning: gpuidle's report covers the time until then and
  torch.profiler's trace is complete. Analyse that trace with ``gpuidle.analyze``.
- **Syncs name their line.** ``.item()``, ``.tolist()``, ``.cpu()``, ``.numpy()``, truth and
  number conversions and printing of CUDA tensors, and ``torch.cuda.synchronize()``, run inside
  a call-site marker with the program's line (``_call_sites.caller_site``): PyTorch releases
  the GIL inside its operators, so only Python sees where a sync came from.
- **So do the launches of forward, backward and the optimizer.** PyTorch launches kernels with
  the GIL released, so the native launch sampling never sees their Python line. The outermost
  ``nn.Module`` call on each thread (forward hooks on the roots, below) and ``Optimizer.step``
  (global step hooks) run inside a call-site marker with the program's line, and so does
  ``Tensor.backward()`` of a CUDA tensor: autograd's threads launch the backward kernels without
  any Python frame, and their sampled launch sites take the line waiting in ``backward()``
  (collect/call_sites.h). While torch.compile traces, the hooks return at once (so that they
  add no graph break; not yet tried with torch.compile on a GPU). The step hooks stay
  registered, idle, after the first profile (``_step_hooks_registry``).
- **Forward hooks on the roots only** (:class:`_Forwards`). A root is a module called outside
  any other module call on its thread (``model``, ``loss_fn``). A *learning round* registers one
  global forward pre hook, which gives each new root its own pre and post hook (``always_call``
  where torch has it) and ends when the round's first root is called again (one iteration), or
  at a tick more than 5 s after it began; then the inner modules run no gpuidle code at all and
  keep torch's fast path. The first round begins at install; while recording, another begins at
  a tick at most every 2 s. Ticks are an iteration's landmarks: a root's call, an outermost
  optimizer step's return, a DataLoader batch, a marked sync. So a root that appears later (an
  evaluation model, a second model, a module called outside the model only sometimes) is marked
  from the first round after it starts running; one that runs only while no landmark happens
  stays unmarked (its launches name no line). Adding or removing the global pre hook is safe
  while other threads run forward passes: torch copies its pre-hook dicts into a tuple before it
  calls them (the post-hook dicts, iterated live on an exception, get no global hook). Roots are
  weakly referenced: a root that dies takes its entry and hooks with it, and uninstall removes
  the hooks of the rest. While installed, pickling or copying a root (``torch.save(model)``, a
  ``copy.deepcopy`` for an EMA) leaves gpuidle's hooks out of the copy (``Module.__getstate__``),
  and ``torch.jit.script`` takes them off the scripted tree first (it would compile them).
- **Nothing built while nothing records.** Every marker of this module (call sites, step names,
  DataLoader waits) asks ``_markers.recording()`` first and builds no name and walks no frame
  when no collection records (before the first CUDA call under ``gpuidle run``, between the
  windows of a sampled collection). Optimizer steps are still counted, so that
  ``optimizer.step#N`` numbers iterations whatever recorded.
- **Steps without user code.** Where the program marks no steps itself (no ``gpuidle.step()`` /
  ``p.step()``), a step ends when an optimizer step returns: from the return of one
  ``optimizer.step()`` to the return of the next, a step range named ``optimizer.step#N`` (N
  from 1; the first iteration, up to the first return, is start-up). Only the outermost step
  counts (a wrapper's ``step`` that calls its inner optimizer's is one step), only on the thread
  that first returned from a step (the training thread), and only for one optimizer, the first
  that returned (with a GAN's two optimizers, one step per iteration; with gradient
  accumulation, one step per optimizer update); when that optimizer is gone, the next one to
  return takes over. The range still open at the end of a collection is dropped (an unfinished
  step). Once the program marks a step itself, gpuidle closes its own and marks no more.
- **Children never collect.** DataLoader workers (forked or spawned) and other
  multiprocessing children that inherit or re-run a profile stay inert (:func:`in_worker`).

Contract (kept by gpuidle/_profile.py): ``install(profile)`` is called when a profile starts,
only if ``"torch" in sys.modules`` (gpuidle never imports torch); ``uninstall()`` when it stops.
Neither may change what the program computes.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
import weakref
from typing import Any, Callable, Optional

from . import _call_sites, _markers
from ._patching import Patches

_lock = threading.Lock()
_profile: Any = None  # the profile the patches report to
_patches = Patches()
# Optimizer.step's global hooks are registered once per process and never removed: torch
# iterates its global optimizer-hook dicts live, so adding or removing one while another thread
# is inside a step would raise there. Between profiles they find no markers and return at once.
_step_hooks_registry: Any = None  # the module whose registry holds them
_step_markers: Optional["_LaunchMarkers"] = None  # the running profile's, or None
_step_compiling: Callable[[], bool] = lambda: False
_forwards: Optional["_Forwards"] = None  # the running profile's learned roots, or None

_DATA_MARKER = "DataLoader.__next__"
_OPTIMIZER_STEP = "optimizer.step#"


class _OptimizerSteps:
    """The optimizer steps of one install: which thread and optimizer define the steps."""

    def __init__(self) -> None:
        self.thread: Optional[int] = None  # threading.get_ident() of the training thread
        self.clock: Optional[Callable[[], Any]] = None  # the optimizer whose returns end steps
        self.count = 0


_optimizer_steps = _OptimizerSteps()
# Per thread ident: (the install's _OptimizerSteps, the open optimizer.step range). A range
# left open by an earlier install is closed on its own thread, at that thread's next step hook.
_open_steps: dict[int, tuple[_OptimizerSteps, Any]] = {}


def _torch() -> Any:
    return sys.modules.get("torch")


def conflict() -> Optional[str]:
    """Why gpuidle must not take CUPTI now (a profiler of PyTorch's is running), else None."""
    torch = _torch()
    if torch is None:
        return None
    enabled = getattr(getattr(getattr(torch, "_C", None), "_autograd", None),
                      "_profiler_enabled", None)
    try:
        if enabled is not None and enabled():
            return "torch.profiler is running"
    except Exception:  # an unexpected torch: no conflict known
        return None
    return None


def in_worker() -> bool:
    """True in a DataLoader worker process (it makes batches; it must not collect)."""
    torch = _torch()
    if torch is None:
        return False
    try:
        from torch.utils.data import get_worker_info

        return get_worker_info() is not None
    except Exception:
        return False


def _patch(owner: Any, name: str, make_wrapper: Callable[[Any], Any]) -> None:
    _patches.apply(owner, name, make_wrapper)


# Where PyTorch waits for the GPU (with the GIL released, so CUPTI's callbacks cannot see the
# Python line): Tensor methods that copy a CUDA tensor to the host, and torch.cuda's syncs.
# Each marked call records one host range, so only calls that sync are marked: the Tensor
# methods only on CUDA tensors, and not .to() or __index__, which mostly do not sync.
_TENSOR_SYNCS = ("item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__float__", "__repr__")


def _marked(original: Any, on_cuda_tensor: bool) -> Any:
    @functools.wraps(original)
    def synced(*args: Any, **kwargs: Any) -> Any:
        if on_cuda_tensor and not (args and getattr(args[0], "is_cuda", False)):
            return original(*args, **kwargs)
        if not _markers.recording():
            return original(*args, **kwargs)
        _tick()
        site = _call_sites.caller_site()
        if site is None:
            return original(*args, **kwargs)
        _markers._push(_markers._CALL_SITE, site)
        try:
            return original(*args, **kwargs)
        finally:
            _markers._pop()

    return synced


def _mark_sync_sites(torch: Any) -> None:
    for name in _TENSOR_SYNCS:
        _patch(torch.Tensor, name, lambda original: _marked(original, on_cuda_tensor=True))
    # The backward pass: autograd's own threads launch its kernels, with no Python frame; the
    # marker on the thread waiting in backward() names their line (collect/call_sites.h).
    _patch(torch.Tensor, "backward", lambda original: _marked(original, on_cuda_tensor=True))
    cuda = getattr(torch, "cuda", None)
    if cuda is not None:
        on_any = lambda original: _marked(original, on_cuda_tensor=False)  # noqa: E731
        _patch(cuda, "synchronize", on_any)
        for cls in (getattr(cuda, "Stream", None), getattr(cuda, "Event", None)):
            if cls is not None:
                _patch(cls, "synchronize", on_any)


class _LaunchMarkers(threading.local):
    """Per thread: how deep in marked module calls, and the open markers. A new one for each
    install, so that a profile stopped inside a forward pass leaves nothing behind."""

    def __init__(self) -> None:
        self.forward_depth = 0
        self.forward_marker: Optional[Any] = None
        self.step_marker: Optional[Any] = None
        self.stepping: list[Any] = []  # the optimizers inside step() on this thread, outermost first


def _open_caller_site(owner: object) -> Optional[Any]:
    # Tracked like the user's own markers (_markers._open): a step or range that the program
    # ends inside a forward pass or an optimizer step (Lightning runs training_step inside
    # optimizer.step) closes only itself.
    site = _call_sites.caller_site(skip=1)
    return _markers._open(_markers._CALL_SITE, site, owner) if site is not None else None


def _compiling(torch: Any) -> Callable[[], bool]:
    # Looked up once per profile, not at every module call. torch.compile folds it to True
    # while it traces a hook, so the hooks add no graph break.
    return getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)


def _close_stale_step(current: Optional[_OptimizerSteps]) -> None:
    """Closes this thread's optimizer.step range if an earlier install (profile) left it."""
    entry = _open_steps.get(threading.get_ident())
    if entry is not None and entry[0] is not current:
        _open_steps.pop(threading.get_ident(), None)
        _markers._close(entry[1])


def _index_of(items: list[Any], item: Any) -> int:
    for i, x in enumerate(items):
        if x is item:
            return i
    return -1


def _optimizer_step_returned(opt: Any) -> None:
    """An outermost optimizer step returned on this thread: maybe the end of a step."""
    steps = _optimizer_steps
    me = threading.get_ident()
    if _markers.user_steps:  # the program marks its own steps
        entry = _open_steps.pop(me, None)
        if entry is not None:
            _markers._close(entry[1])
        return
    if steps.thread is None:
        steps.thread = me
    elif steps.thread != me:
        return
    clock = steps.clock() if steps.clock is not None else None
    if clock is None:
        try:
            steps.clock = weakref.ref(opt)
        except TypeError:
            steps.clock = lambda: opt
    elif clock is not opt:
        return
    entry = _open_steps.pop(me, None)
    if entry is not None:
        _markers._close(entry[1])
    steps.count += 1
    if not _markers.recording():  # its range would record nothing: no name built
        return
    _tick()
    marker = _markers._open(_markers._STEP, f"{_OPTIMIZER_STEP}{steps.count}", steps)
    _open_steps[me] = (steps, marker)


def _close_own_step() -> None:
    entry = _open_steps.pop(threading.get_ident(), None)
    if entry is not None:
        _markers._close(entry[1])


_markers.before_first_user_step = _close_own_step


def _step_pre(opt: Any, args: Any, kwargs: Any) -> None:
    state = _step_markers
    if state is None or _step_compiling():  # first: nothing else while torch.compile traces
        return
    _close_stale_step(_optimizer_steps)
    i = _index_of(state.stepping, opt)
    if i >= 0:  # a step of this optimizer raised earlier (torch ran no post hook)
        del state.stepping[i:]
    state.stepping.append(opt)
    # Steps do not nest: a marker still open was left by a step that raised (torch calls no
    # post hook then).
    _markers._close(state.step_marker)
    # Nor run inside a forward pass: a depth left above 0 is a pass that a KeyboardInterrupt
    # ended (torch runs the always-called forward hooks for an Exception only).
    if state.forward_depth:
        state.forward_depth = 0
        _markers._close(state.forward_marker)
        state.forward_marker = None
    state.step_marker = _open_caller_site(state) if _markers.recording() else None


def _step_post(opt: Any, args: Any, kwargs: Any) -> None:
    state = _step_markers
    if state is None or _step_compiling():
        return
    _markers._close(state.step_marker)
    state.step_marker = None
    i = _index_of(state.stepping, opt)
    if i >= 0:
        del state.stepping[i:]
    if not state.stepping:  # the outermost step returned
        _optimizer_step_returned(opt)


# Learning rounds (see the module docstring): while recording, a round begins at most this often,
# at a tick; a round whose first root never comes around again ends at a tick after the other.
_RELEARN_EVERY_S = 2.0
_ROUND_MAX_S = 5.0
# The hook dicts of a module where torch keeps forward hooks and their flags (some per version).
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_forward_hooks_always_called",
               "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs")


class _Root:
    """A learned root: a weak reference to the module and the handles of its two hooks."""

    __slots__ = ("ref", "handles")

    def __init__(self, ref: Any, handles: list[Any]) -> None:
        self.ref = ref
        self.handles = handles


class _Forwards:
    """The forward passes of one install: the learned roots (modules called outside any other
    module call) with their own hooks, and the learning rounds that find them."""

    def __init__(self, registry: Any, root_pre: Callable[..., None],
                 root_post: Callable[..., None], learn_pre: Callable[..., None]) -> None:
        self.registry = registry  # torch.nn.modules.module: the global hooks
        self.root_pre, self.root_post, self.learn_pre = root_pre, root_post, learn_pre
        self.roots: dict[int, _Root] = {}  # id(module) -> its _Root, removed when it dies
        self.lock = threading.Lock()  # rounds and learning; never taken per module call
        self.learning: Any = None  # the handle of the global pre hook while a round runs
        self.round_first: Any = None  # weak reference to the round's first root
        self.round_started = 0.0
        self.round_ended = 0.0
        self.closed = False

    def is_root(self, mod: Any) -> bool:
        root = self.roots.get(id(mod))
        return root is not None and root.ref() is mod

    def hook_ids(self, mod: Any) -> Optional[set[int]]:
        root = self.roots.get(id(mod))
        if root is None or root.ref() is not mod:
            return None
        return {h.id for h in root.handles}

    def learn(self, mod: Any) -> bool:
        """Gives mod its own hooks; False if it has them already or takes none."""
        key = id(mod)
        with self.lock:
            if self.closed or self.is_root(mod):
                return False
            roots = self.roots

            def dead(ref: Any) -> None:
                root = roots.get(key)
                if root is not None and root.ref is ref:
                    del roots[key]
                    for handle in root.handles:
                        handle.remove()

            try:
                ref = weakref.ref(mod, dead)
            except TypeError:
                return False
            handles: list[Any] = []
            try:
                handles.append(mod.register_forward_pre_hook(self.root_pre))
                try:  # always_call: the marker closes when forward raises too (torch >= 2.1)
                    handles.append(mod.register_forward_hook(self.root_post, always_call=True))
                except TypeError:
                    handles.append(mod.register_forward_hook(self.root_post))
            except Exception:  # a module that takes no hooks (a ScriptModule): known, unmarked
                for handle in handles:
                    handle.remove()
                handles = []
            roots[key] = _Root(ref, handles)
            self._note_first(mod, ref)
            return bool(handles)

    def _note_first(self, mod: Any, ref: Any) -> None:
        first = self.round_first() if self.round_first is not None else None
        if first is None:
            self.round_first = ref
        elif first is mod:  # the loop came around: the round has seen one iteration
            self.end_round()

    def came_around(self, mod: Any) -> None:
        """A learned root was called outside any module call during a round."""
        root = self.roots.get(id(mod))
        if root is not None:
            with self.lock:
                self._note_first(mod, root.ref)

    def start_round(self, now: float) -> None:
        with self.lock:
            if self.learning is not None or self.closed:
                return
            self.round_first = None
            self.round_started = now
            self.learning = self.registry.register_module_forward_pre_hook(self.learn_pre)

    def end_round(self) -> None:
        # With self.lock held. Safe from any thread: torch copies its forward pre-hook dicts into a tuple before it
        # calls them, so removing one never disturbs a forward running elsewhere.
        handle, self.learning = self.learning, None
        self.round_ended = time.monotonic()
        if handle is not None:
            handle.remove()

    def tick(self) -> None:
        """Once per iteration or so, while recording: begins or ends a learning round."""
        now = time.monotonic()
        if self.learning is not None:
            if now - self.round_started > _ROUND_MAX_S:
                with self.lock:
                    self.end_round()
        elif now - self.round_ended >= _RELEARN_EVERY_S:
            self.start_round(now)

    def forget(self, module: Any) -> None:
        """Takes gpuidle's hooks off module's tree (torch.jit.script would compile them)."""
        try:
            modules = list(module.modules())
        except Exception:
            modules = [module]
        for mod in modules:
            root = self.roots.get(id(mod))
            if root is not None and root.ref() is mod:
                self.roots.pop(id(mod), None)
                for handle in root.handles:
                    handle.remove()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.end_round()
        while self.roots:
            try:
                _, root = self.roots.popitem()
            except KeyError:  # emptied meanwhile by a dying root
                break
            for handle in root.handles:
                handle.remove()


def _tick() -> None:
    forwards = _forwards
    if forwards is not None:
        forwards.tick()


def _mark_forwards(module: Any, state: _LaunchMarkers,
                   compiling: Callable[[], bool]) -> Optional[_Forwards]:
    """The outermost module call on each thread runs inside a call-site marker (its caller's
    line), through hooks of the learned roots only."""
    if not hasattr(module, "register_module_forward_pre_hook"):
        return None

    def root_pre(mod: Any, args: Any) -> None:
        if compiling():
            return
        state.forward_depth += 1
        if state.forward_depth == 1 and _markers.recording():
            forwards.tick()
            state.forward_marker = _open_caller_site(state)

    def root_post(mod: Any, args: Any, output: Any) -> None:
        if compiling() or state.forward_depth == 0:
            return
        state.forward_depth -= 1
        if state.forward_depth == 0 and state.forward_marker is not None:
            _markers._close(state.forward_marker)
            state.forward_marker = None

    def learn_pre(mod: Any, args: Any) -> None:  # global, during learning rounds only
        if compiling() or state.forward_depth:
            return
        if forwards.is_root(mod):  # its own hook marks it
            forwards.came_around(mod)
        elif forwards.learn(mod):
            # torch read this call's own pre hooks before this hook gave it one, and reads its
            # post hooks after forward: this call's post hook runs.
            root_pre(mod, args)

    forwards = _Forwards(module, root_pre, root_post, learn_pre)
    forwards.start_round(time.monotonic())
    return forwards


def _keep_hooks_out_of_copies(module: Any) -> None:
    """Pickling or copying a root (torch.save(model), copy.deepcopy for an EMA) leaves gpuidle's
    hooks behind, and torch.jit.script of a tree takes them off first (it compiles hooks)."""
    cls = getattr(module, "Module", None)
    if cls is not None and hasattr(cls, "__getstate__"):

        def make(original: Any) -> Any:
            @functools.wraps(original)
            def __getstate__(self: Any) -> Any:
                state = original(self)
                forwards = _forwards
                ids = forwards.hook_ids(self) if forwards is not None else None
                if not ids or not isinstance(state, dict):
                    return state
                state = dict(state)
                for name in _HOOK_DICTS:
                    hooks = state.get(name)
                    if hooks and any(k in hooks for k in ids):
                        kept = type(hooks)()
                        for k, v in hooks.items():
                            if k not in ids:
                                kept[k] = v
                        state[name] = kept
                return state

            return __getstate__

        _patch(cls, "__getstate__", make)
    recursive = sys.modules.get("torch.jit._recursive")
    if recursive is not None:

        def make_script(original: Any) -> Any:
            @functools.wraps(original)
            def create_script_module(nn_module: Any, *args: Any, **kwargs: Any) -> Any:
                forwards = _forwards
                if forwards is not None:
                    forwards.forget(nn_module)
                return original(nn_module, *args, **kwargs)

            return create_script_module

        _patch(recursive, "create_script_module", make_script)


def _mark_launch_sites(torch: Any) -> None:
    """Forward passes and optimizer steps run inside a call-site marker (their launches' line)."""
    global _step_hooks_registry, _step_markers, _step_compiling, _forwards
    # From sys.modules: torch's packages may drop the names of their submodules.
    module = sys.modules.get("torch.nn.modules.module")
    optimizer = sys.modules.get("torch.optim.optimizer")
    state = _LaunchMarkers()
    compiling = _compiling(torch)
    if module is not None:
        _keep_hooks_out_of_copies(module)
        _forwards = _mark_forwards(module, state, compiling)
    if optimizer is not None and hasattr(optimizer, "register_optimizer_step_pre_hook"):
        if _step_hooks_registry is not optimizer:
            optimizer.register_optimizer_step_pre_hook(_step_pre)
            optimizer.register_optimizer_step_post_hook(_step_post)
            _step_hooks_registry = optimizer
        _step_compiling, _step_markers = compiling, state


def _data_marker(loader_iter: Any) -> str:
    """The data range's name, with the loader's worker count where it has one, so that the advice
    starts from what the loader already does: "DataLoader.__next__ (num_workers=8)"."""
    workers = getattr(loader_iter, "_num_workers", None)
    if isinstance(workers, int) and not isinstance(workers, bool) and workers >= 0:
        return f"{_DATA_MARKER} (num_workers={workers})"
    return _DATA_MARKER


def _mark_dataloader(torch: Any) -> None:
    from torch.utils.data import dataloader

    def make(original: Any) -> Any:
        @functools.wraps(original)
        def __next__(self: Any) -> Any:
            if not _markers.recording():
                return original(self)
            _tick()
            _markers._push(_markers._DATA, _data_marker(self))
            try:
                return original(self)
            finally:
                _markers._pop()

        return __next__

    _patch(dataloader._BaseDataLoaderIter, "__next__", make)


def _wants_cuda(prof: Any) -> bool:
    # torch.autograd.profiler.profile keeps the activities it was asked for; CPU-only profiling
    # does not use CUPTI and may run beside gpuidle.
    activities = getattr(prof, "kineto_activities", None)
    if activities is None:
        return bool(getattr(prof, "use_cuda", True))
    return any("CUDA" in str(a) for a in activities)


def _hand_over(prof: Any) -> None:
    """torch.profiler is about to take CUPTI: gpuidle stops first and says so."""
    profile = _profile
    if profile is None or not _wants_cuda(prof) or not profile.active:
        return
    sys.stderr.write(
        "gpuidle: warning: torch.profiler is starting with CUDA activities: gpuidle stops "
        "collecting here and leaves CUPTI to it (gpuidle's report covers the time until now; "
        "analyse torch.profiler's trace with gpuidle.analyze)\n")
    sys.stderr.flush()
    getattr(profile, "_stop_now", profile.stop)()


def _yield_to_torch_profiler(torch: Any) -> None:
    # Both torch.profiler.profile and the autograd profiler start CUPTI through these two.
    owner = torch.autograd.profiler.profile

    def make(original: Any) -> Any:
        @functools.wraps(original)
        def start(self: Any, *args: Any, **kwargs: Any) -> Any:
            _hand_over(self)
            return original(self, *args, **kwargs)

        return start

    for name in ("_prepare_trace", "_start_trace"):
        _patch(owner, name, make)


def install(profile: Any) -> bool:
    """Hooks gpuidle into the already imported torch for the duration of ``profile``; False if
    it was installed already (by another profile, or gpuidle run's autoload) or torch is not
    imported: only an install that returned True is undone by :func:`uninstall`."""
    global _profile, _optimizer_steps
    torch = _torch()
    if torch is None:
        return False
    with _lock:
        if _patches or _profile is not None:  # installed by another profile that still runs
            return False
        _profile = profile
        _optimizer_steps = _OptimizerSteps()
        try:
            _mark_dataloader(torch)
            _mark_sync_sites(torch)
            _mark_launch_sites(torch)
            _yield_to_torch_profiler(torch)
        except Exception:
            _undo()
            raise
    return True


def _undo() -> None:
    global _profile, _step_markers, _forwards
    _step_markers = None
    forwards, _forwards = _forwards, None
    if forwards is not None:
        forwards.close()
    # The step range of this thread closes now (after the collection stopped: it is dropped, an
    # unfinished step); those of other threads at their next step hook.
    _close_stale_step(None)
    _patches.undo()
    _profile = None


def uninstall() -> None:
    """Undoes :func:`install`."""
    with _lock:
        _undo()
