"""A training loop with periodic host work, as real jobs have it (issue 28, item 4): it knows
nothing of gpuidle and times its own periodic work, the ground truth for gpuidle's activities.

  python3 periodic_host_work.py --mode checkpoint|evaluate|logging [--steps N]

checkpoint  torch.save of the model's and the optimizer's state (on the GPU) every 4 steps
evaluate    an evaluation pass (8 batches, no_grad, accuracy read with .item()) every 5 steps
logging     every step, the gradient norm of each layer and the loss read with .item() and
            printed: a logging-heavy loop

The last line says how many times the work ran and how long it took, measured around the call:
  periodic_host_work checkpoint: 6 occurrences, median 512.3 ms, total 3074.2 ms; steps 24
"""
import argparse
import os
import statistics
import tempfile
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", required=True, choices=("checkpoint", "evaluate", "logging"))
    parser.add_argument("--steps", type=int, default=24)
    args = parser.parse_args()

    torch.manual_seed(0)
    width, depth, batch = 2048, 8, 256
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(batch, width, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    folder = tempfile.mkdtemp(prefix="periodic_host_work.")
    times = []

    def checkpoint(step):
        path = os.path.join(folder, f"ckpt_{step}.pt")
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, path)
        os.remove(path)

    def evaluate():
        model.eval()
        correct = 0
        with torch.no_grad():
            for _ in range(8):
                correct += (model(x).argmax(dim=1) == y).sum().item()
        model.train()
        return correct

    def log(step, loss):
        norms = [p.grad.norm().item() for p in model.parameters() if p.grad is not None]
        print(f"step {step} loss {loss.item():.4f} " +
              " ".join(f"{n:.3f}" for n in norms), flush=True)

    step_times = []
    for step in range(args.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        if args.mode == "logging":
            w0 = time.perf_counter()
            log(step, loss)
            times.append(time.perf_counter() - w0)
        opt.step()
        if args.mode == "checkpoint" and step % 4 == 3:
            w0 = time.perf_counter()
            checkpoint(step)
            times.append(time.perf_counter() - w0)
        if args.mode == "evaluate" and step % 5 == 4:
            w0 = time.perf_counter()
            evaluate()
            times.append(time.perf_counter() - w0)
        step_times.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    os.rmdir(folder)
    ms = [t * 1e3 for t in times]
    print(f"periodic_host_work {args.mode}: {len(ms)} occurrences, median "
          f"{statistics.median(ms):.1f} ms, total {sum(ms):.1f} ms; steps {args.steps}, "
          f"median step {statistics.median(step_times) * 1e3:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
