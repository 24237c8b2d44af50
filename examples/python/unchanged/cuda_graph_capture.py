"""A whole training step captured in a CUDA graph by hand (`torch.cuda.graph`), then replayed.

The recipe of PyTorch's CUDA-graph documentation ("whole network capture"): a 12-layer MLP of
width 256, batch 64, fp32, SGD; three warm-up iterations on a side stream, the forward,
backward and optimizer step captured once into a `torch.cuda.CUDAGraph` with static input and
target tensors, then 300 replays, each after copying the next batch into the static inputs.
Nothing in it knows about gpuidle: profile it from outside,

    gpuidle run -- python3 cuda_graph_capture.py

What happens: between cudaStreamBeginCapture and cudaStreamEndCapture the step's ~100 launches
are recorded into the graph, not run, and the GPU idles by design; cudaGraphInstantiate then
builds the executable graph. From then on each replay is one cudaGraphLaunch.

Expected: the capture and the instantiation reported as one-off graph_capture time (start-up,
or taken out of the steady state), never as launch-bound steady time; the steady replays
launch-bound (kernel_gap between the graph's tiny kernels, launch_overhead for the copies and
the Python between replays).

Optional size: UNCHANGED_STEPS (default 300).
"""
import os
import time

import torch

WIDTH = 256
BATCH = 64


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "300"))
    torch.manual_seed(0)
    layers = []
    for _ in range(12):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    batches = [(torch.randn(BATCH, WIDTH, device="cuda"), torch.randn(BATCH, WIDTH, device="cuda"))
               for _ in range(8)]
    static_x = torch.randn(BATCH, WIDTH, device="cuda")
    static_y = torch.randn(BATCH, WIDTH, device="cuda")

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()

    t0 = time.perf_counter()
    for i in range(steps):
        x, y = batches[i % len(batches)]
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(f"cuda_graph_capture: {steps} steps in {wall:.2f} s (loss {static_loss.item():.4f})")


if __name__ == "__main__":
    main()
