"""What a profiler leaves behind in the process after it stops (issue 26, part 2).

  python3 after_profile.py --profiler gpuidle|torch [--profiles 8] [--steps 20]

One process, one profiler. A launch-bound probe step (200 tiny kernels, then a synchronize) is
timed before the first profile; then, --profiles times: a round of the healthy workload
(workloads.py; --steps steps) untraced, the same round inside the profiler (start and stop
included), and one probe round right after the stop (where a profiler that detaches lazily, at
the program's next CUDA call, pays for it). After the last profile the probe is timed again.
Prints one `profile` line per profile and

  result profiler=... profile_added_ms=<median traced - untraced round> first_probe_ratio=<the
      probe round just after each stop over the probe before, median> after_ratio=<the probe
      after the last profile over before>

after_ratio above 1 means the profiler left CUPTI intercepting the program's calls (a profiler
that detaches at stop leaves about 1.0). torch.profiler keeps CUPTI once it has run, so each
profiler runs in a process of its own.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profiler", required=True, choices=("gpuidle", "torch"))
    parser.add_argument("--profiles", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    if args.profiler == "gpuidle":
        import gpuidle
    import torch

    x = torch.ones(256, device="cuda")

    def probe_ms(n=30):
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            for _ in range(200):
                x.mul_(1.0)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e3

    step, _ = workloads.make("healthy")

    def round_ms(profiled):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        if not profiled:
            for _ in range(args.steps):
                step()
            torch.cuda.synchronize()
        elif args.profiler == "gpuidle":
            with gpuidle.profile(quiet=True) as p:
                for _ in range(args.steps):
                    with p.step():
                        step()
                torch.cuda.synchronize()
        else:
            activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            with torch.profiler.profile(activities=activities) as prof:
                for _ in range(args.steps):
                    step()
                    prof.step()
                torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    probe_ms(10)
    round_ms(False)
    round_ms(True)  # the first attach in a process, thrown away
    probe_ms(10)
    before = probe_ms()
    added, firsts = [], []
    for i in range(args.profiles):
        untraced = round_ms(False)
        traced = round_ms(True)
        first = probe_ms(1)
        added.append(traced - untraced)
        firsts.append(first / before)
        print(f"profile {i} untraced_ms={untraced:.3f} traced_ms={traced:.3f} "
              f"probe_after_stop_ms={first:.3f}", flush=True)
    after = probe_ms()
    print(f"result profiler={args.profiler} steps={args.steps} profiles={args.profiles} "
          f"profile_added_ms={statistics.median(added):.3f} probe_before_ms={before:.3f} "
          f"first_probe_ratio={statistics.median(firsts):.3f} probe_after_ms={after:.3f} "
          f"after_ratio={after / before:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
