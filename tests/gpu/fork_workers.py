"""A training loop whose DataLoader forks worker processes: under `gpuidle run` only the parent
may collect and write a report (a forked child never touches CUPTI)."""
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        return torch.full((256,), float(i)), float(i * i)


def main():
    model = torch.nn.Linear(256, 1).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    loader = DataLoader(Squares(), batch_size=32, num_workers=2)
    for x, y in loader:
        loss = ((model(x.cuda()).squeeze(1) - y.cuda().float()) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print("fork_workers: done, 2 DataLoader workers")


if __name__ == "__main__":
    main()
