"""Where a profile's cost goes, part by part, in one process (issue 26, part 1).

  python3 leave_out.py --workload tiny_mlp|resnet50|gpt2 [--variants full,-torch,...] [--repeats 4]

Earlier leave-out runs gave each variant a process of its own, and the untraced step of one
workload differed between processes by more than any part costs (docs/PERFORMANCE.md). Here
every variant runs in the same process: each repeat visits the variants in a shuffled order,
and each visit is an untraced round followed by a traced round (the whole profile timed, start
and stop included, as profile_overhead.py times it). A variant's figure is the median over its
repeats of traced / untraced of the same visit, so the process's drift cancels out.

Variants (comma-separated):
  full          gpuidle.profile(quiet=True), as shipped
  -torch        without gpuidle's PyTorch hooks (module and optimizer hooks, DataLoader marks)
  -call-sites   without the Python call-site marks
  -sampler      without the host-stack sampler (host_sample_ms=0)
  -marks        without the profile's step marker (Profile.step) after each step
  -python       all three left out
  -A+B          several parts at once (-memcpy-records+memset-records)
  -PART         a collector part left out (GPUIDLE_BENCH_LEAVE_OUT=PART, tests/benchmarks/
                overhead/probe_settings.cc: other-kinds, call-timing, driver, ...); needs a package
                built with the collector's probes (a product build ignores the variable, and
                the variant measures as full)
  bare-timed    the floor of knowing when each launch was made (bare_cupti_collector.cc)
  bare          CUPTI's kernel records alone

gpuidle detaches CUPTI at each stop and so does the bare collector, so they share a process.
The leave-outs of the Python layer patch it from here for one profile, then restore it: lab
probes of this benchmark, never user settings.
"""
import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_overhead  # noqa: E402  (the timed round and the profilers; needs no torch)
import workloads  # noqa: E402

PYTHON_PARTS = ("torch", "call-sites", "sampler")
BENCHMARK_PARTS = ("marks",)  # how the benchmark drives the profile, not a part of gpuidle


class Variant:
    """One way of profiling: start() and stop() as profile_overhead's profilers."""

    def __init__(self, name):
        self.name = name
        self.mark = None
        parts = PYTHON_PARTS if name == "-python" else (
            tuple(name[1:].split("+")) if name.startswith("-") else ())
        self.python_parts = [p for p in parts if p in PYTHON_PARTS]
        self.marks = "marks" not in parts
        self.collector_parts = [p for p in parts if p not in PYTHON_PARTS + BENCHMARK_PARTS]
        if name in ("bare", "bare-timed"):
            self.inner = profile_overhead.BareCupti(times_launches=name == "bare-timed")
        elif name == "full" or name.startswith("-"):
            self.inner = None  # a new gpuidle.profile per round
        else:
            raise ValueError(f"unknown variant {name!r}")
        self.restore = []

    def start(self):
        if self.inner is not None:
            self.inner.start()
            self.mark = self.inner.mark
            return
        import gpuidle
        import gpuidle._call_sites
        import gpuidle._profile

        keywords = {}
        for part in self.python_parts:
            if part == "torch":
                cls = gpuidle._profile.Profile
                self.restore.append((cls, "_install_torch", cls.__dict__["_install_torch"]))
                cls._install_torch = lambda self: None
            elif part == "call-sites":
                mod = gpuidle._call_sites
                self.restore.append((mod, "enable", mod.enable))
                mod.enable = lambda: None
            else:
                keywords["host_sample_ms"] = 0
        if self.collector_parts:
            os.environ["GPUIDLE_BENCH_LEAVE_OUT"] = ",".join(self.collector_parts)
        self.inner = profile_overhead.Gpuidle()
        self.inner.keywords.update(keywords)
        try:
            self.inner.start()
        except RuntimeError:
            self._undo()
            raise
        self.mark = self.inner.mark if self.marks else None

    def stop(self):
        try:
            return self.inner.stop()
        finally:
            if isinstance(self.inner, profile_overhead.Gpuidle):
                self.inner = None
            self._undo()

    def _undo(self):
        for owner, attr, value in reversed(self.restore):
            setattr(owner, attr, value)
        self.restore.clear()
        os.environ.pop("GPUIDLE_BENCH_LEAVE_OUT", None)
        if isinstance(self.inner, profile_overhead.Gpuidle):
            self.inner = None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", required=True, choices=workloads.NAMES)
    parser.add_argument("--variants", default="full,-torch,-call-sites,-sampler,-python,bare-timed,bare")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--steps", type=int, default=0, help="steps per round")
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()

    import gpuidle  # before torch, as a user's script may

    import torch

    print(f"gpuidle {gpuidle.__version__} from {os.path.dirname(gpuidle.__file__)}", flush=True)
    step, steps = workloads.make(args.workload)
    steps = args.steps or steps
    names = [v for v in args.variants.split(",") if v]
    variants = {n: Variant(n) for n in names}
    for _ in range(profile_overhead.warmup_steps(steps)):
        step()
    profile_overhead.timed_round(torch, step, steps)
    # CUPTI's first attach in a process is far slower than later ones: one profile thrown away.
    profile_overhead.timed_round(torch, step, steps, Variant("full"))
    ratios = {n: [] for n in names}
    traced = {n: [] for n in names}
    step_added = {n: [] for n in names}  # us per step, traced - untraced, per visit
    start_ms = {n: [] for n in names}
    end_added = {n: [] for n in names}  # ms, traced - untraced (the stop and the final sync)
    failed = {}
    rng = random.Random(args.seed)
    for r in range(args.repeats):
        order = [n for n in names if n not in failed]
        rng.shuffle(order)
        for n in order:
            u, u_info = profile_overhead.timed_round(torch, step, steps)
            try:
                t, info = profile_overhead.timed_round(torch, step, steps, variants[n])
            except (RuntimeError, OSError) as e:
                failed[n] = f"{type(e).__name__}: {e}"
                print(f"visit repeat={r} variant={n} failed=\"{failed[n]}\"", flush=True)
                continue
            ratios[n].append(t / u)
            traced[n].append(t)
            up, tp = u_info["parts"], info["parts"]
            step_added[n].append(tp["step_us"] - up["step_us"])
            start_ms[n].append(tp["start"])
            end_added[n].append(tp["end"] - up["end"])
            print(f"visit repeat={r} variant={n} untraced_ms={u:.3f} traced_ms={t:.3f} "
                  f"ratio={t / u:.4f} untraced_step_us={up['step_us']:.2f} "
                  f"{profile_overhead.info_text(info)}", flush=True)
    full = statistics.median(ratios["full"]) if ratios.get("full") else None
    for n in names:
        if n in failed and not ratios[n]:
            print(f"result workload={args.workload} variant={n} failed=\"{failed[n]}\"")
            continue
        ratio = statistics.median(ratios[n])
        spread = max(ratios[n]) - min(ratios[n])
        versus = f" ratio_minus_full={ratio - full:+.4f}" if full is not None else ""
        # The round's excess split: per step (the median step's added host time, paired within
        # each visit) and once (the start, and what the stop adds to the final sync).
        print(f"result workload={args.workload} variant={n} visits={len(ratios[n])} steps={steps} "
              f"ratio={ratio:.4f} spread={spread:.4f} traced_ms={statistics.median(traced[n]):.3f}"
              f" step_added_us={statistics.median(step_added[n]):.2f}"
              f" start_ms={statistics.median(start_ms[n]):.2f}"
              f" stop_added_ms={statistics.median(end_added[n]):.2f}{versus}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
