"""The training steps of the profiler overhead benchmark (profile_overhead.py).

make(name) returns (step, steps_per_round): step() queues one training step on the GPU and
returns without waiting for it; a round of steps_per_round steps lasts about 130 ms (healthy,
as in issue 15) or 0.2-0.5 s (the others) on an H200. Every input is made once, on the GPU,
before the first step: the benchmark prices the profiler, not a data pipeline.

  tiny_mlp  12 x (Linear 64x64 + ReLU), batch 32, MSE loss, Adam (PyTorch's default
            implementation: foreach on CUDA). Hundreds of kernels of a few microseconds per
            step: the launch-bound case, where a tracer's cost per launch shows in full.
  resnet50  torchvision's ResNet-50 (random weights), batch 64 of 3x224x224, cross entropy,
            SGD with momentum, autocast bf16 (no GradScaler: bf16 needs none), model and input
            channels_last. cuDNN's autotuner stays off (its first-step search would only
            lengthen every process's warm-up).
  gpt2      transformers' GPT2LMHeadModel built from a GPT-2 small GPT2Config (12 layers, 768
            wide, 12 heads, vocabulary 50257; nothing downloaded), batch 8 x 512 tokens,
            language-model loss, AdamW, autocast bf16.
  resnet50_graphed  the same ResNet-50 step captured whole in one CUDA graph (forward, backward,
            optimizer; autocast without its cast cache, as capture needs) and replayed: the fix
            that gpuidle's launch-bound advice names, for measuring a predicted gain.
  healthy   examples/python/healthy_matmul.py's step: eight 8192x8192 bf16 matmuls; the GPU
            is the bottleneck and the queue never drains.
  dataloader  a DataLoader with num_workers=0 over a dataset of 0.3 ms of Python per sample
            (batch 32), feeding a 3-layer MLP: the GPU waits for input (data-starved).
  item_sync six 8192x8192 bf16 matmuls, then loss.item() and 4 ms of host work that uses the
            value: the GPU idles while the host works after each sync (sync-bound).

Importing this module needs no torch (profile_overhead.py --dry-run and --help run anywhere).
"""

import os
import sys
import time

NAMES = ("tiny_mlp", "resnet50", "resnet50_graphed", "gpt2", "healthy", "dataloader", "item_sync")

# Rough guesses for an H200, only for profile_overhead.py's time estimate: seconds from the
# process's start to the first step (imports, CUDA, the model), and one untraced step's ms.
STARTUP_S = {"tiny_mlp": 4.0, "resnet50": 6.0, "resnet50_graphed": 8.0, "gpt2": 9.0, "healthy": 4.0, "dataloader": 4.0,
             "item_sync": 4.0}
STEP_MS = {"tiny_mlp": 1.5, "resnet50": 25.0, "resnet50_graphed": 15.0, "gpt2": 35.0, "healthy": 6.5, "dataloader": 12.0,
           "item_sync": 13.0}
STEPS_PER_ROUND = {"tiny_mlp": 200, "resnet50": 12, "resnet50_graphed": 12, "gpt2": 10, "healthy": 20, "dataloader": 30,
                   "item_sync": 30}


def make(name):
    """(step, steps_per_round) of the workload called name (NAMES)."""
    makers = {"tiny_mlp": _tiny_mlp, "resnet50": _resnet50, "resnet50_graphed": _resnet50_graphed,
              "gpt2": _gpt2, "healthy": _healthy,
              "dataloader": _dataloader, "item_sync": _item_sync}
    if name not in makers:
        raise ValueError(f"unknown workload {name!r} (workloads: {', '.join(NAMES)})")
    return makers[name](), STEPS_PER_ROUND[name]


def _tiny_mlp():
    import torch

    layers = []
    for _ in range(12):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(32, 64, device="cuda")
    y = torch.randn(32, 64, device="cuda")

    def step():
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _resnet50_parts():
    import torch
    import torchvision

    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device="cuda")

    def step(cache_casts=True):
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=cache_casts):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return torch, step


def _resnet50():
    return _resnet50_parts()[1]


def _resnet50_graphed():
    # PyTorch's whole-network capture: warm up on a side stream (the optimizer's state is made
    # there), capture one step, replay it.
    torch, step = _resnet50_parts()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(cache_casts=False)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step(cache_casts=False)
    return graph.replay


def _gpt2():
    # The machine has no network: transformers must not try it.
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(var, "1")
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
    model = GPT2LMHeadModel(config).cuda()
    model.train()
    print(f"gpt2: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters, attention "
          f"{getattr(model.config, '_attn_implementation', 'unknown')}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, config.vocab_size, (8, 512), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=tokens, labels=tokens).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _healthy():
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                            "examples", "python")
    sys.path.insert(0, os.path.normpath(examples))
    import healthy_matmul

    return healthy_matmul.make_step()


def _busy_wait(seconds):
    deadline = time.perf_counter() + seconds
    x = 0.0
    while time.perf_counter() < deadline:
        x += 1.0
    return x


def _dataloader():
    import torch
    from torch.utils.data import DataLoader, Dataset

    class SlowDataset(Dataset):
        def __len__(self):
            return 1 << 30

        def __getitem__(self, i):
            _busy_wait(0.0003)  # "decode and augment", in the training process
            return torch.full((1024,), float(i % 7)), i % 10

    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    batches = iter(DataLoader(SlowDataset(), batch_size=32, num_workers=0))

    def step():
        x, y = next(batches)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _item_sync():
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) * 0.01

    def step():
        c = a
        for _ in range(6):
            c = torch.tanh(c @ b)
        value = c.mean().item()  # the host sync
        _busy_wait(0.004)  # host work that uses the value
        return value

    return step
