"""CuPy: a storm of tiny elementwise kernels, custom kernels among them.

A simulation-style loop on arrays of 4096 floats: each step runs ~20 CuPy operations
(ufuncs, a reduction, a fused custom `ElementwiseKernel` and a hand-written `RawKernel`),
each launching one kernel of a few microseconds. CuPy compiles every kernel with NVRTC the
first time it is used (its ufuncs too) and caches it on disk. Nothing in it knows about
gpuidle: profile it from outside,

    gpuidle run -- python3 cupy_tiny_kernels.py

The pathology: each kernel finishes long before CuPy's Python dispatch has issued the next.

Expected: start-up (CUDA initialisation, NVRTC compilation of the first kernels) reported on
its own, compilation named among the one-off parts (each kernel compiled at its first use,
some after the first kernel ran); the steady state launch-bound (launch_bound >= 80% of the
steady-state idle time). Fix: fuse the step (cupy.fuse, one ElementwiseKernel or RawKernel),
bigger arrays per launch, CUDA graphs.

Optional sizes: UNCHANGED_STEPS (default 300), UNCHANGED_N (default 4096).
"""
import os
import time

import numpy as np

import cupy as cp

# Compiled by NVRTC at first use.
axpby = cp.ElementwiseKernel(
    "float32 x, float32 y, float32 a, float32 b", "float32 z",
    "z = a * x + b * y", "unchanged_axpby")

clamp_source = r"""
extern "C" __global__ void unchanged_clamp(float* v, float lo, float hi, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) v[i] = fminf(fmaxf(v[i], lo), hi);
}
"""
clamp = cp.RawKernel(clamp_source, "unchanged_clamp")


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "300"))
    n = int(os.environ.get("UNCHANGED_N", "4096"))
    rng = np.random.default_rng(0)
    pos = cp.asarray(rng.standard_normal(n).astype(np.float32))
    vel = cp.asarray(rng.standard_normal(n).astype(np.float32))
    dt = np.float32(1e-3)
    block = 256
    grid = (n + block - 1) // block
    t0 = time.perf_counter()
    for _ in range(steps):
        force = -cp.sin(pos) * cp.float32(0.5)
        force += cp.cos(vel) * cp.float32(0.1)
        fast = cp.abs(vel) > 1.0
        drag = vel * fast * cp.float32(0.01)
        force -= drag
        vel = axpby(vel, force, np.float32(1.0), dt)
        pos = axpby(pos, vel, np.float32(1.0), dt)
        clamp((grid,), (block,), (pos, np.float32(-10.0), np.float32(10.0), np.int32(n)))
        energy = cp.sum(vel * vel) * cp.float32(0.5)
        pos = pos - cp.mean(pos)
        vel = cp.tanh(vel)
    total = float(energy)  # one read, at the end
    cp.cuda.Device().synchronize()
    wall = time.perf_counter() - t0
    print(f"cupy_tiny_kernels: {steps} steps in {wall:.2f} s (energy {total:.3f})")


if __name__ == "__main__":
    main()
