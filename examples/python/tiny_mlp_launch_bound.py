"""Launch-bound: a 12-layer MLP, width 64, batch 8, trained eagerly.

Every kernel runs for a few microseconds; launching it costs more. The GPU finishes each
kernel before the host has issued the next. Expected: launch_bound. Fix (--fix, as gpuidle
advises): the step captured in a CUDA graph.
"""
import torch

from _profile_steps import parse_args, run_profiled


def _eager_step(capturable=False):
    """The tiny MLP's model, optimizer and one eager training step on static inputs."""
    layers = []
    for _ in range(12):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False, capturable=capturable)
    x = torch.randn(8, 64, device="cuda")
    y = torch.randn(8, 64, device="cuda")

    def step():
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step, model, opt, x, y


def make_step():
    """One training step of the tiny MLP (tests/benchmarks/python uses it too)."""
    return _eager_step()[0]


def make_graphed_step():
    """The same step captured once in a CUDA graph (--fix, as gpuidle advises): one launch
    replays all its kernels. The optimizer is capturable; inputs are static."""
    eager, model, opt, x, y = _eager_step(capturable=True)
    side = torch.cuda.Stream()  # warm-up before capture, on a side stream as capture requires
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            eager()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)  # the graph's backward allocates the gradients it writes
    with torch.cuda.graph(graph):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return graph.replay


def main():
    args = parse_args(__doc__, "tiny_mlp_launch_bound.json.gz")  # first: --help needs no GPU
    run_profiled(make_graphed_step() if args.fix else make_step(), args)


if __name__ == "__main__":
    main()
