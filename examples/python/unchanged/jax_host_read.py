"""A jit-compiled JAX training step whose loss is read on the host after every step.

Gradient descent on a 6-layer tanh MLP of width 4096 (batch 4096, fp32): one `jax.jit` step
of large matmuls, a few milliseconds of GPU work. After each step the script reads the loss
(`float(loss)`) and spends ~2 ms of host work with it (a running average, a log line, an
early-stopping test) before dispatching the next step. Nothing in it knows about gpuidle:
profile it from outside,

    gpuidle run -- python3 jax_host_read.py

The pathology: `float(loss)` blocks until the GPU has drained (in XLA's runtime the copy to
the host and the wait happen on threads other than the Python thread), and the host work
after it cannot overlap GPU work: each step's GPU time is followed by an idle gap as long as
the host work. Had the read not waited, the host would have dispatched ahead.

Expected: start-up (CUDA initialisation, XLA's compilation and autotuning of the step)
reported on its own, compilation named among the one-off parts; the steady state sync-bound
(sync_bound >= 80% of the steady-state idle time). Fix: keep metrics on the device and read
them every N steps, or read the previous step's loss after dispatching the next step.

Optional sizes: UNCHANGED_STEPS (default 150), UNCHANGED_WIDTH (default 4096).
"""
import os
import time

import numpy as np

import jax
import jax.numpy as jnp

LAYERS = 6


def loss_fn(weights, x, y):
    h = x
    for w in weights:
        h = jnp.tanh(h @ w)
    return jnp.mean((h - y) ** 2)


@jax.jit
def train_step(weights, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(weights, x, y)
    return [w - 1e-3 * g for w, g in zip(weights, grads)], loss


def host_work(history, loss):
    """~2 ms of bookkeeping with the value read from the device."""
    history.append(loss)
    deadline = time.perf_counter() + 0.002
    average = 0.0
    while time.perf_counter() < deadline:
        average = sum(history[-50:]) / len(history[-50:])
    return average


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "150"))
    width = int(os.environ.get("UNCHANGED_WIDTH", "4096"))
    rng = np.random.default_rng(0)
    scale = 1.0 / np.sqrt(width)
    weights = [jax.device_put((rng.standard_normal((width, width)) * scale).astype(np.float32))
               for _ in range(LAYERS)]
    x = jax.device_put(rng.standard_normal((width, width)).astype(np.float32))
    y = jax.device_put(rng.standard_normal((width, width)).astype(np.float32))
    history = []
    t0 = time.perf_counter()
    for _ in range(steps):
        weights, loss = train_step(weights, x, y)
        average = host_work(history, float(loss))
    wall = time.perf_counter() - t0
    print(f"jax_host_read: {steps} steps in {wall:.2f} s (loss {average:.4f})")


if __name__ == "__main__":
    main()
