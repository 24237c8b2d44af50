"""JAX without jit: a small model's update written op by op, each op dispatched on its own.

A user porting NumPy code keeps `jax.numpy` calls eager: every step runs ~40 small operations
(matmuls of 128x128, elementwise updates, reductions) on tiny arrays, and JAX dispatches each
as its own XLA executable. Nothing in it knows about gpuidle: profile it from outside,

    gpuidle run -- python3 jax_op_by_op.py

The pathology: each op's kernel runs for a few microseconds, its dispatch from Python takes
longer, so the GPU finishes each kernel before the next is issued. At first use of each
operation (and shape) XLA compiles an executable for it.

Expected: start-up (CUDA initialisation, XLA's compilation of the first operations) reported
on its own, compilation named among the one-off parts (each op's first use is compiled, some
of them after the first kernel ran); the steady state launch-bound (launch_bound >= 80% of the
steady-state idle time). Fix: `jax.jit` the step.

Optional size: UNCHANGED_STEPS (default 200).
"""
import os
import time

import numpy as np

import jax.numpy as jnp

WIDTH = 128


def step(params, x, y):
    """Forward, a hand-written backward and an SGD-with-momentum update, op by op."""
    w1, w2, m1, m2 = params
    h = jnp.maximum(x @ w1, 0.0)
    out = h @ w2
    err = out - y
    loss = jnp.mean(err * err)
    g_out = 2.0 * err / err.size
    g_w2 = h.T @ g_out
    g_h = (g_out @ w2.T) * (h > 0)
    g_w1 = x.T @ g_h
    m1 = 0.9 * m1 + g_w1
    m2 = 0.9 * m2 + g_w2
    w1 = w1 - 1e-2 * m1
    w2 = w2 - 1e-2 * m2
    norm = jnp.sqrt(jnp.sum(w1 * w1) + jnp.sum(w2 * w2))
    w1 = jnp.where(norm > 100.0, w1 / norm, w1)
    w2 = jnp.where(norm > 100.0, w2 / norm, w2)
    return (w1, w2, m1, m2), loss


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "200"))
    rng = np.random.default_rng(0)
    w1 = jnp.asarray(rng.standard_normal((WIDTH, WIDTH)).astype(np.float32) * 0.1)
    w2 = jnp.asarray(rng.standard_normal((WIDTH, WIDTH)).astype(np.float32) * 0.1)
    params = (w1, w2, jnp.zeros_like(w1), jnp.zeros_like(w2))
    x = jnp.asarray(rng.standard_normal((64, WIDTH)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal((64, WIDTH)).astype(np.float32))
    t0 = time.perf_counter()
    for _ in range(steps):
        params, loss = step(params, x, y)
    loss.block_until_ready()
    wall = time.perf_counter() - t0
    print(f"jax_op_by_op: {steps} steps in {wall:.2f} s (loss {float(loss):.4f})")


if __name__ == "__main__":
    main()
