"""Training loops that record their own torch.profiler traces, in three ways users do.

A 12-layer MLP of width 512, batch 256, AdamW, each step after ~5 ms of host-side batch
preparation (time.sleep, standing in for a data pipeline). Nothing in it knows about gpuidle:
each mode writes a Chrome trace that `gpuidle analyze` reads afterwards.

    python3 torch_profiler_traces.py schedule      OUT.json   # schedule(wait=1, warmup=1, active=3)
    python3 torch_profiler_traces.py stop_mid_step OUT.json   # prof.stop() half-way through a step
    python3 torch_profiler_traces.py cpu_only      OUT.json   # activities=[ProfilerActivity.CPU]
    python3 torch_profiler_traces.py compile       OUT.json   # torch.compile inside the profile

schedule: the profiler records steps 3 to 5 of 8 and exports when its active steps end
(on_trace_ready); the loop goes on without it. stop_mid_step: the profiler is started by hand,
records five steps, and is stopped after the forward pass of the sixth, which then runs 1 s of
host work and its backward untraced: the sixth step's range is open when the recording ends.
cpu_only: CUDA activities off, as people set it to keep a trace small: the trace has the CPU
ops but neither the CUDA calls nor a kernel.
compile: a 4-layer version of the MLP under torch.compile (default mode), profiled from its first
call, so Dynamo's and Inductor's compilation (their "(dynamo_timed)" ranges) is in the trace,
then 8 compiled steps.

Expected (gpuidle analyze OUT.json): schedule — steps from the trace's ProfilerStep ranges, the
steady state data-starved (the sleep) as recorded; stop_mid_step — no idle time beyond the
profiler's own span (the open step is cut where the recording ended, and the report says so);
cpu_only — a report that says no GPU activity was recorded and what to record; compile — the
compilation named in the start-up (not "set-up"), the steps launch-bound.
"""
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

WIDTH = 512
BATCH = 256


def make(depth=12):
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(BATCH, WIDTH, device="cuda")
    y = torch.randn(BATCH, WIDTH, device="cuda")
    return model, opt, x, y


def train_step(model, opt, x, y, pause_after_forward_s=0.0, prof=None):
    time.sleep(0.005)  # the batch's preparation on the host
    loss = torch.nn.functional.mse_loss(model(x), y)
    if prof is not None:
        prof.stop()
    if pause_after_forward_s:
        time.sleep(pause_after_forward_s)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def main():
    mode, out = sys.argv[1], sys.argv[2]
    if mode == "compile":
        model, opt, x, y = make(depth=4)
        compiled = torch.compile(model)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(8):
                train_step(compiled, opt, x, y)
                prof.step()
        torch.cuda.synchronize()
        prof.export_chrome_trace(out)
        print(f"torch_profiler_traces {mode}: wrote {out}")
        return
    model, opt, x, y = make()
    for _ in range(3):  # warm-up, untraced
        train_step(model, opt, x, y)
    torch.cuda.synchronize()
    both = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    if mode == "schedule":
        with profile(activities=both, schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
            for _ in range(8):
                train_step(model, opt, x, y)
                prof.step()
    elif mode == "stop_mid_step":
        prof = profile(activities=both)
        prof.start()
        for _ in range(5):
            train_step(model, opt, x, y)
            prof.step()
        train_step(model, opt, x, y, pause_after_forward_s=1.0, prof=prof)
        prof.export_chrome_trace(out)
    elif mode == "cpu_only":
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(20):
                train_step(model, opt, x, y)
                prof.step()
        prof.export_chrome_trace(out)
    else:
        raise SystemExit(f"unknown mode {mode!r} (schedule, stop_mid_step, cpu_only, compile)")
    torch.cuda.synchronize()
    print(f"torch_profiler_traces {mode}: wrote {out}")


if __name__ == "__main__":
    main()
