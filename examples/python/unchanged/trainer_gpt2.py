"""A transformers `Trainer` training a tiny GPT-2 from scratch on random tokens.

What a user would write to try a training set-up: GPT2Config with 2 layers of width 128, a
torch Dataset of random token ids, `Trainer.train()` for 100 steps in fp32, no evaluation, no
saving, no logging integrations. Nothing in it knows about gpuidle: profile it from outside,

    gpuidle run -- python3 trainer_gpt2.py

The pathology: the model is so small that each of the ~150 kernels of a step (forward,
backward, gradient clipping, AdamW) runs for a few microseconds, while PyTorch's eager
dispatch and the Trainer's Python around it take longer to issue them. The GPU finishes each
kernel before the host has issued the next.

Expected: start-up (CUDA initialisation, building the model and the Trainer, the first step)
reported on its own; the steady steps (one per optimizer step) launch-bound
(launch_bound >= 80% of the steady-state idle time), the launch offenders naming Python frames
of the model and the Trainer. Fix: a bigger batch or model per step, torch.compile, CUDA graphs.

Optional size: UNCHANGED_STEPS (default 100).
"""
import os
import tempfile
import time

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

VOCAB = 1024
SEQ = 64


class RandomTokens(Dataset):
    """Random token ids; the labels are the inputs (the model shifts them itself)."""

    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.tokens = torch.randint(0, VOCAB, (n, SEQ), generator=g)

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        ids = self.tokens[i]
        return {"input_ids": ids, "labels": ids}


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "100"))
    batch = 8
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=128, n_layer=2, n_head=4)
    model = GPT2LMHeadModel(config)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            max_steps=steps,
            per_device_train_batch_size=batch,
            learning_rate=3e-4,
            report_to="none",
            save_strategy="no",
            logging_strategy="no",
            disable_tqdm=True,
            seed=0,
        )
        trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(steps * batch))
        t0 = time.perf_counter()
        result = trainer.train()
        wall = time.perf_counter() - t0
    print(f"trainer_gpt2: {result.global_step} steps in {wall:.2f} s "
          f"(train loss {result.training_loss:.3f})")


if __name__ == "__main__":
    main()
