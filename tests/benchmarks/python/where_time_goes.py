"""Where a traced step's extra host time goes, by shared object and function (issue 26, part 1).

  python3 where_time_goes.py --workload tiny_mlp [--variants full,bare-timed] [--repeats 20]
                             [--hz 4000] [--samples FILE]

The GPU machine has no perf, and leave-out rounds cannot price parts smaller than the rounds'
spread. This samples the program's thread (libgpuidle_wall_sampler.so, tests/benchmarks/
overhead/wall_sampler.cc: wall clock, the interrupted stack) in leave_out.py's visits: an
untraced round, then a traced round of each variant, shuffled. Each sample carries the round
and its part (the profile's start, the steps, the stop), so a table per part compares where
each variant's steps spend their time, in us per step, with the untraced steps'. A lab probe.
"""
import argparse
import bisect
import collections
import ctypes
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import leave_out  # noqa: E402
import profile_overhead  # noqa: E402
import workloads  # noqa: E402

STEPS, START, STOP = 0, 1, 2
PART_NAMES = ("steps", "start", "stop")


class Labelled:
    """A variant whose start, steps and stop carry labels of their own."""

    def __init__(self, variant, sampler, base):
        self.variant, self.sampler, self.base = variant, sampler, base
        self.mark = None

    def start(self):
        self.sampler.gpuidle_sampler_label(self.base + START)
        self.variant.start()
        self.mark = self.variant.mark
        self.sampler.gpuidle_sampler_label(self.base + STEPS)

    def stop(self):
        self.sampler.gpuidle_sampler_label(self.base + STOP)
        try:
            return self.variant.stop()
        finally:
            self.sampler.gpuidle_sampler_label(0)


class Symbols:
    """Offsets in an object to function names, from nm (the static table, else the dynamic)."""

    def __init__(self):
        self.tables = {}

    def table(self, path):
        if path not in self.tables:
            entries = []
            for extra in ([], ["-D"]):
                try:
                    out = subprocess.run(["nm", "-C", "--defined-only", *extra, path],
                                         capture_output=True, text=True, timeout=60).stdout
                except (OSError, subprocess.TimeoutExpired):
                    out = ""
                for line in out.splitlines():
                    fields = line.split(" ", 2)
                    if len(fields) == 3 and fields[1] in "TtWw":
                        entries.append((int(fields[0], 16), fields[2]))
                if entries:
                    break
            entries.sort()
            self.tables[path] = ([a for a, _ in entries], [n for _, n in entries])
        return self.tables[path]

    def name(self, path, offset):
        addrs, names = self.table(path)
        i = bisect.bisect_right(addrs, offset) - 1
        return names[i] if i >= 0 else f"+{offset:x}"


def short(path):
    return os.path.basename(path) if path else "?"


def read_samples(path):
    objects, samples = {}, []
    with open(path) as f:
        for line in f:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "object":
                index, _, name = rest.partition(" ")
                objects[index] = name
            elif kind == "sample":
                fields = rest.split(" ")
                frames = []
                for frame in fields[1:]:
                    if frame == "?":
                        frames.append((None, 0))
                    else:
                        index, _, offset = frame.partition("+")
                        frames.append((objects.get(index), int(offset, 16)))
                samples.append((int(fields[0]), frames))
    return samples


def table(title, per_label, labels, steps_of, period_us, top):
    """One column per label; rows by the first label's excess over the second's."""
    print(f"\n{title} (us per step)")
    rate = {label: period_us / max(steps_of[label], 1) for label in labels}
    keys = set()
    for label in labels:
        keys.update(per_label[label])

    def value(label, key):
        return per_label[label][key] * rate[label]

    a, b = labels[0], labels[1] if len(labels) > 1 else labels[0]
    rows = sorted(keys, key=lambda k: -(value(a, k) - value(b, k)))
    heads = "  ".join(f"{LABEL_TEXT[label]:>18}" for label in labels)
    print(f"  {heads}  {'1st-2nd':>9}  what")
    for key in rows[:top]:
        cells = "  ".join(f"{value(label, key):18.2f}" for label in labels)
        print(f"  {cells}  {value(a, key) - value(b, key):9.2f}  {key}")
    totals = [sum(per_label[label].values()) * rate[label] for label in labels]
    cells = "  ".join(f"{v:18.2f}" for v in totals)
    print(f"  {cells}  {totals[0] - totals[1 if len(labels) > 1 else 0]:9.2f}  (all)")


LABEL_TEXT = {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", required=True, choices=workloads.NAMES)
    parser.add_argument("--variants", default="full,bare-timed")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--steps", type=int, default=0)
    parser.add_argument("--hz", type=int, default=4000)
    parser.add_argument("--samples", default="where_time_goes.samples")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()

    import gpuidle  # noqa: F401  (before torch, as a user's script may)

    import torch

    sampler = ctypes.CDLL(os.environ.get("GPUIDLE_WALL_SAMPLER", "libgpuidle_wall_sampler.so"))
    sampler.gpuidle_sampler_dump.restype = ctypes.c_long
    step, steps = workloads.make(args.workload)
    steps = args.steps or steps
    names = [v for v in args.variants.split(",") if v]
    for _ in range(profile_overhead.warmup_steps(steps)):
        step()
    profile_overhead.timed_round(torch, step, steps)
    profile_overhead.timed_round(torch, step, steps, leave_out.Variant("full"))  # first attach
    # Labels: 10 the untraced steps; 10 * (i + 2) + part for variant i.
    untraced = 10
    LABEL_TEXT[untraced] = "untraced"
    bases = {}
    for i, n in enumerate(names):
        bases[n] = 10 * (i + 2)
        for part, text in enumerate(PART_NAMES):
            LABEL_TEXT[bases[n] + part] = f"{n}:{text}"
    rounds = collections.Counter()
    if sampler.gpuidle_sampler_start(args.hz) != 1:
        print("the sampler did not start", file=sys.stderr)
        return 1
    rng = random.Random(args.seed)
    for r in range(args.repeats):
        order = list(names)
        rng.shuffle(order)
        for n in order:
            sampler.gpuidle_sampler_label(untraced)
            profile_overhead.timed_round(torch, step, steps)
            sampler.gpuidle_sampler_label(0)
            rounds[untraced] += 1
            profile_overhead.timed_round(torch, step, steps,
                                         Labelled(leave_out.Variant(n), sampler, bases[n]))
            rounds[bases[n]] += 1
    written = sampler.gpuidle_sampler_dump(args.samples.encode())
    print(f"workload={args.workload} steps={steps} repeats={args.repeats} hz={args.hz} "
          f"samples={written}", flush=True)
    samples = read_samples(args.samples)
    symbols = Symbols()
    period_us = 1e6 / args.hz

    def where(frame):
        path, offset = frame
        if path is None:
            return "?"
        return f"{short(path)}!{symbols.name(path, offset)}"

    by_object = collections.defaultdict(collections.Counter)
    by_function = collections.defaultdict(collections.Counter)
    inclusive = collections.defaultdict(collections.Counter)
    for label, frames in samples:
        if not frames:
            continue
        by_object[label][short(frames[0][0])] += 1
        by_function[label][where(frames[0])] += 1
        seen = set()
        for frame in frames:
            if frame[0] is None:
                continue
            obj = short(frame[0])
            # Inclusive time of the objects a launch passes through, and of gpuidle's functions.
            key = where(frame) if "gpuidle" in obj else obj
            if key not in seen:
                seen.add(key)
                inclusive[label][key] += 1
    for n in names:
        if n == names[-1] and len(names) > 1:
            continue
        other = names[-1] if len(names) > 1 else None
        labels = [bases[n] + STEPS] + ([bases[other] + STEPS] if other else []) + [untraced]
        steps_of = {label: rounds[label - label % 10 if label != untraced else untraced] * steps
                    for label in labels}
        for title, data in (("self time by object", by_object),
                            ("self time by function", by_function),
                            ("inclusive time (objects; gpuidle's functions)", inclusive)):
            table(f"{args.workload} {n} vs {other or '-'} vs untraced, steps: {title}", data,
                  labels, steps_of, period_us, args.top)
    for n in names:
        for part in (START, STOP):
            label = bases[n] + part
            count = sum(by_object[label].values())
            per_round = count * period_us / 1e3 / max(rounds[bases[n]], 1)
            top = ", ".join(f"{k} {v * period_us / 1e3 / max(rounds[bases[n]], 1):.2f}"
                            for k, v in by_function[label].most_common(8))
            print(f"\n{n} {PART_NAMES[part]}: {per_round:.2f} ms a round: {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
