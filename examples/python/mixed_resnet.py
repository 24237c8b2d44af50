"""Mixed: a small-batch ResNet-18 fed by a single-process DataLoader.

Each step first waits for its batch (data-starved), then the host launches a few hundred
small kernels that each finish before the next is issued (launch-bound). A real workload
has several causes at once; gpuidle should report the share of each.
"""
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset

from _profile_steps import parse_args, run_profiled


class SlowImages(Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        deadline = time.perf_counter() + 0.0015  # 1.5 ms "JPEG decode" per image
        while time.perf_counter() < deadline:
            pass
        return torch.rand(3, 64, 64), i % 100


def main():
    args = parse_args(__doc__, "mixed_resnet.json.gz")
    model = torchvision.models.resnet18(num_classes=100).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batches = iter(DataLoader(SlowImages(), batch_size=8, num_workers=0))

    def step():
        x, y = next(batches)
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    run_profiled(step, args)


if __name__ == "__main__":
    main()
