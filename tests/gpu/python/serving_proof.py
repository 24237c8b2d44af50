#!/usr/bin/env python3
"""Issue 33 on the GPU machine: a server's idle GPU, no demand against requests that wait, and
what batching them would buy, against a batching server.

  PYTHONPATH=<package> tests/gpu/python/serving_proof.py OUT_DIR GPUIDLE_CLI

examples/python/serving/gpt2_server.py (GPT-2 small's generate() behind the standard library's
HTTP server) driven by examples/python/serving/load.py, each case a server process of its own
that serves for the load's time and exits:
a) one request at a time (--mode one), closed loop of 8 clients, untraced: the truth;
b) the same server at low load (open loop, 2 requests/s evenly spaced) under `gpuidle run`,
   unchanged (gpuidle's automatic request marks): the idle time is no demand (most of what is not
   busy), no advice to batch, and the report says no request was in flight;
c) the same server at the high load of a) under `gpuidle run`, unchanged, with a trace: requests
   waiting is the largest idle subcause, the first advice batches them (batch, predicted
   requests/s and latency), and the report's requests/s is the load's (within 15%);
d) the batching server (--mode batch, --max-batch = c)'s batch), same load, untraced: its
   requests/s against c)'s prediction, within 25% (the issue's criterion); its latency against
   the predicted latency, for information;
e) that batching server under `gpuidle run`: requests waiting at most a quarter of c)'s share of
   the steady state;
f) the server of c) profiled with --gpuidle (gpuidle.profile() in the program): the same
   attribution and batch as through `gpuidle run`.
Then `GPUIDLE_CLI analyze` of c)'s trace must give c)'s attribution and batch (CI replays it).
`gpuidle run` here is `python -m gpuidle run`: the package's own libgpuidle.so, whose Python
layer (sitecustomize) makes the automatic marks. Writes OUT_DIR/serving.md; keeps each case's
report, logs and c)'s trace (gzip). Exit status 1 if a check fails.
"""
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from proof_checks import check, finish

HERE = os.path.dirname(os.path.abspath(__file__))
SERVING = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples", "python", "serving"))
SERVER = os.path.join(SERVING, "gpt2_server.py")
LOAD = os.path.join(SERVING, "load.py")

PROMPT_TOKENS, NEW_TOKENS = 32, 8  # a generate() of ~50 ms: the server's warm-up shape too
LOAD_S = 10  # each case's load; c)'s trace stays small enough to keep for replay
TAIL_S = 4  # the server serves this much longer than the load, then exits
CLIENTS = 8  # high load: closed loop
LOW_RATE = 2.0  # low load: requests/s, evenly spaced (a request never meets another)
QUEUE_DELAY_MS = 10
# No case starts after it; the whole script stays within 8 minutes (less where the round that
# runs it has less: SERVING_BUDGET_S).
BUDGET_S = int(os.environ.get("SERVING_BUDGET_S", "420"))
CASE_S = 90  # what a case may need at most (start-up, load, report): none starts with less left
WAITING = "launch_bound.requests_waiting"

T0 = time.monotonic()


def left_s():
    return BUDGET_S - (time.monotonic() - T0)


def wait_s(cap):
    """A wait of at most cap seconds, and at most 30 s past the budget."""
    return max(min(cap, left_s() + 30), 5)


class Server:
    """A server process (under `gpuidle run` or not): its output in a log, the port it listens
    on and its warm-up times read from that output."""

    def __init__(self, out, name, command, untraced):
        self.log_path = os.path.join(out, f"{name}.server.log")
        self.log = open(self.log_path, "w")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        if untraced:  # no gpuidle at all: not even importable (the batch worker would import it)
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                if p and not os.path.isdir(os.path.join(p, "gpuidle")))
        # A session of its own: `gpuidle run` and the server end together when killed.
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env, start_new_session=True)
        self.port = None
        self.last_line = ""  # what a server that did not start said last
        self.warmup_ms = {}  # batch size -> ms of one generate()
        self.listening = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.log.write(line)
            if line.strip():
                self.last_line = line.strip()[-300:]
            m = re.match(r"warm-up: batch (\d+): .*: ([0-9.]+) ms", line)
            if m:
                self.warmup_ms[int(m.group(1))] = float(m.group(2))
            m = re.match(r"listening on (\d+)", line)
            if m:
                self.port = int(m.group(1))
                self.listening.set()
        self.listening.set()  # ended without listening: wake the waiter

    def wait_listening(self, timeout_s):
        self.listening.wait(timeout_s)
        return self.port

    def wait_exit(self, timeout_s):
        return self.proc.wait(timeout=timeout_s)

    def close(self):
        if self.proc.poll() is None:
            for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
                try:
                    os.killpg(self.proc.pid, sig)
                    self.proc.wait(timeout=wait_s)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        self.reader.join(timeout=10)
        self.log.close()


def run_case(out, name, server_args, load_args, traced=False, trace=False):
    """One server, one load. Returns (the load's JSON line, the report or None, the server's
    warm-up times), or None where the case failed (a FAIL check says why)."""
    if left_s() < CASE_S:
        check(f"{name}: run", False, f"not run: {left_s():.0f} s of the script's {BUDGET_S} s "
                                     f"left, a case may need {CASE_S}")
        return None
    report = os.path.join(out, f"{name}.report.json")
    trace_path = os.path.join(out, f"{name}.trace.json")
    for old in (report, trace_path):  # gpuidle never replaces a file: it would write beside it
        if os.path.exists(old):
            os.remove(old)
    command = [sys.executable, SERVER, *server_args, "--port", "0", "--warmup", "3",
               "--duration-s", str(LOAD_S + TAIL_S)]
    if traced:
        command = [sys.executable, "-m", "gpuidle", "run", "--out", report, "--format", "json",
                   *(["--trace", trace_path] if trace else []), "--", *command]
    explicit = "--gpuidle" in server_args
    server = Server(out, name, command, untraced=not traced and not explicit)
    try:
        port = server.wait_listening(wait_s(240))
        if port is None:
            try:
                rc = server.wait_exit(10)
            except subprocess.TimeoutExpired:
                rc = "none yet"
            check(f"{name}: run", False, f"the server did not listen (exit {rc}; "
                                         f"{server.log_path}: {server.last_line})")
            return None
        p = subprocess.run([sys.executable, LOAD, "--url", f"http://127.0.0.1:{port}/generate",
                            *load_args, "--duration-s", str(LOAD_S), "--prompt-tokens",
                            str(PROMPT_TOKENS), "--new-tokens", str(NEW_TOKENS)],
                           capture_output=True, text=True, timeout=LOAD_S + 60)
        with open(os.path.join(out, f"{name}.load.log"), "w") as f:
            f.write(p.stdout + p.stderr)
        lines = p.stdout.strip().splitlines()
        if p.returncode != 0 or not lines:
            check(f"{name}: run", False, f"load.py exit {p.returncode}: {p.stderr[-500:]}")
            return None
        load = json.loads(lines[-1])
        # The server ends by itself (--duration-s), and `gpuidle run` writes the report then.
        rc = server.wait_exit(wait_s(TAIL_S + 150))
        if rc != 0:
            check(f"{name}: run", False, f"server exit {rc} ({server.log_path}: "
                                         f"{server.last_line})")
            return None
    except subprocess.TimeoutExpired as e:
        check(f"{name}: run", False, f"timed out: {e}")
        return None
    finally:
        server.close()
    got = None
    if traced or explicit:
        try:
            with open(report) as f:
                got = json.load(f)
        except (OSError, ValueError) as e:
            check(f"{name}: run", False, f"no report: {e}")
            return None
    return load, got, server.warmup_ms


# --- what a report says ---------------------------------------------------------------------

def device(r):
    return r["devices"][0]


def steady_ns(r):
    return max(device(r)["phases"]["steady"]["ns"], 1)


def no_demand_ns(r):
    return sum(p["ns"] for p in device(r)["phases"]["steady"]["parts"] if p["kind"] == "no_demand")


def waiting_ns(r):
    return device(r)["idle_by_subcause"].get(WAITING, 0)


def largest_subcause(r):
    by = device(r)["idle_by_subcause"]
    return max(by, key=by.get) if any(by.values()) else None


def advice_for(r, subcause=WAITING):
    return next((a for a in r.get("advice", []) if a["subcause"] == subcause), None)


def subcause_shares(r, n=3):
    d = device(r)
    by = sorted(((k, v) for k, v in d["idle_by_subcause"].items() if v), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v / max(d['idle_ns'], 1):.0%}" for k, v in by[:n]) or "none"


def row(name, server, load, r):
    """The table's row of a case: requests/s by the load and by the report, latency p50, and
    the steady state's shares (busy, no demand, requests waiting, other idle)."""
    if r is None:
        return (f"| {name} | {server} | {load['load']} | {load['requests_per_s']:.2f} | - | "
                f"{load['latency_p50_ms'] or 0:.1f} | - | - | - | - | {load['errors']} |")
    s, d = steady_ns(r), device(r)
    serving = r.get("serving") or {}
    rps = f"{serving['requests_per_s']:.2f}" if serving else "no serving"
    return (f"| {name} | {server} | {load['load']} | {load['requests_per_s']:.2f} | {rps} | "
            f"{load['latency_p50_ms'] or 0:.1f} | {d['busy_ns'] / s:.0%} | "
            f"{no_demand_ns(r) / s:.0%} | {waiting_ns(r) / s:.0%} | "
            f"{(d['idle_ns'] - waiting_ns(r)) / s:.0%} | {load['errors']} |")


def main():
    out, cli = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    high = ["--concurrency", str(CLIENTS)]
    low = ["--rate", str(LOW_RATE), "--arrivals", "fixed"]
    lines = ["# Serving (issue 33): GPT-2 small's generate() behind http.server", "",
             f"Requests of {PROMPT_TOKENS} prompt + {NEW_TOKENS} new tokens; each load "
             f"{LOAD_S} s. Shares are of the report's steady state.", "",
             "| case | server | load | requests/s (load) | requests/s (report) | latency p50 ms "
             "(load) | busy | no demand | requests waiting | other idle | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    results = {}

    def case(name, label, server_args, load_args, **kw):
        got = run_case(out, name, server_args, load_args, **kw)
        if got is not None:
            results[name] = got
            load, r, warmup = got
            lines.append(row(name, label, load, r))
            if warmup:
                notes.append(f"{name}: untraced generate() at warm-up: " + ", ".join(
                    f"batch {b} {ms:.1f} ms" for b, ms in sorted(warmup.items())))
        return got

    # a) The untraced truth of the naive server under high load.
    a = case("a_one_untraced", "one", ["--mode", "one"], high)

    # c) The same, unchanged, under gpuidle run (first: d needs its batch).
    c = case("c_one_high", "one, gpuidle run", ["--mode", "one"], high, traced=True, trace=True)
    prediction = None
    if c is not None:
        load, r, _ = c
        check("c: requests waiting is the largest idle subcause", largest_subcause(r) == WAITING,
              subcause_shares(r))
        first = (r.get("advice") or [None])[0]
        ok = (first is not None and first["subcause"] == WAITING and (first.get("batch") or 0) >= 2
              and (first.get("predicted_requests_per_s") or 0) > 0
              and (first.get("predicted_latency_ns") or 0) > 0 and "batch" in first["fix"].lower())
        check("c: the first advice batches the waiting requests, with a prediction", ok,
              f"{first['subcause']}: batch {first.get('batch')}, "
              f"{first.get('predicted_requests_per_s') or 0:.2f} requests/s, latency "
              f"{(first.get('predicted_latency_ns') or 0) / 1e6:.1f} ms; fix: {first['fix']}; "
              f"evidence: {first['evidence']}" if first else "no advice")
        if ok:
            prediction = first
        serving = r.get("serving")
        if serving:
            ratio = serving["requests_per_s"] / max(load["requests_per_s"], 1e-9)
            check("c: the report's requests/s is the load's (within 15%)", abs(ratio - 1) <= 0.15,
                  f"report {serving['requests_per_s']:.2f}/s ({serving['requests']} requests), "
                  f"load {load['requests_per_s']:.2f}/s ({load['requests']}): {ratio:.2f}x")
            if a is not None:
                notes.append(f"c against the untraced truth a): report "
                             f"{serving['requests_per_s']:.2f}/s, load under gpuidle "
                             f"{load['requests_per_s']:.2f}/s, untraced "
                             f"{a[0]['requests_per_s']:.2f}/s; latency p50 under gpuidle "
                             f"{load['latency_p50_ms']} ms, untraced {a[0]['latency_p50_ms']} ms")
            d = device(r)
            busy_share = d.get("demand_busy_ns", 0) / max(d.get("demand_ns") or 0, 1)
            notes.append(f"c: {serving['in_flight_mean']:.2f} requests in flight (mean), "
                         f"{serving['in_flight_max']} at most; run p50 "
                         f"{serving['run']['p50_ns'] / 1e6:.1f} ms, queue p50 "
                         f"{serving['queue']['p50_ns'] / 1e6:.1f} ms; GPU busy {busy_share:.0%} "
                         f"while requests were in flight, "
                         f"{d.get('demand_busy_ns', 0) / max(serving['requests'], 1) / 1e6:.2f} "
                         f"ms of GPU time per request")
        else:
            check("c: the report's requests/s is the load's (within 15%)", False,
                  "the report has no serving object")

    # d) The batching server the advice describes, untraced: the criterion.
    batch = prediction["batch"] if prediction else CLIENTS
    d_case = case("d_batch_untraced", f"batch {batch}", ["--mode", "batch", "--max-batch",
                  str(batch), "--queue-delay-ms", str(QUEUE_DELAY_MS)], high)
    if d_case is not None and prediction is not None:
        load = d_case[0]
        predicted = prediction["predicted_requests_per_s"]
        ratio = load["requests_per_s"] / predicted
        check("d: the batching server's requests/s is the predicted (within 25%)",
              abs(ratio - 1) <= 0.25, f"measured {load['requests_per_s']:.2f}/s, predicted "
              f"{predicted:.2f}/s for batches of {batch}: {ratio:.2f}x")
        predicted_ms = prediction["predicted_latency_ns"] / 1e6
        measured_ms = load["latency_p50_ms"] or 0
        notes.append(f"d: latency p50 {measured_ms:.1f} ms against the predicted "
                     f"{predicted_ms:.1f} ms ({measured_ms / predicted_ms:.2f}x; within 50%: "
                     f"{'yes' if abs(measured_ms / predicted_ms - 1) <= 0.5 else 'no'}; not a "
                     f"check)")
    elif d_case is not None:
        check("d: the batching server's requests/s is the predicted (within 25%)", False,
              "c) gave no prediction")

    # b) Low load: the GPU idles for want of requests.
    b = case("b_one_low", "one, gpuidle run", ["--mode", "one"], low, traced=True)
    if b is not None:
        load, r, _ = b
        d = device(r)
        none = no_demand_ns(r)
        check("b: no demand holds most of the steady state's time not busy",
              none > 0.5 * (none + d["idle_ns"]),
              f"no demand {none / 1e6:.0f} ms, idle {d['idle_ns'] / 1e6:.0f} ms "
              f"({subcause_shares(r)}), busy {d['busy_ns'] / 1e6:.0f} ms")
        advice = [a["subcause"] for a in r.get("advice", [])]
        check("b: no advice to batch", WAITING not in advice, f"advice: {advice or 'none'}")
        # What a person reads: the report's text (`analyze` of the JSON report).
        text = subprocess.run([cli, "analyze", os.path.join(out, "b_one_low.report.json")],
                              capture_output=True, text=True, timeout=wait_s(120))
        with open(os.path.join(out, "b_one_low.report.txt"), "w") as f:
            f.write(text.stdout + text.stderr)
        said = [ln.strip() for ln in text.stdout.splitlines()
                if "no request in flight" in ln or "nothing worth fixing" in ln]
        if text.returncode != 0:  # the JSON's own words, then
            said = [f"(JSON, analyze exit {text.returncode}) {p['kind']}: {p['evidence']}"
                    for p in d["phases"]["steady"]["parts"]
                    if "no request in flight" in p["evidence"]]
        verdict = r.get("verdict") or {}
        check("b: the report says the GPU had no request in flight", bool(said),
              f"worth fixing: {verdict.get('worth_fixing')}, lost "
              f"{verdict.get('lost_share', 0):.1%}; " + (" / ".join(said) or "not said"))

    # e) The batching server under gpuidle run: little left waiting.
    e = case("e_batch_high", f"batch {batch}, gpuidle run", ["--mode", "batch", "--max-batch",
             str(batch), "--queue-delay-ms", str(QUEUE_DELAY_MS)], high, traced=True)
    if e is not None and c is not None:
        r_e, r_c = e[1], c[1]
        share_e, share_c = waiting_ns(r_e) / steady_ns(r_e), waiting_ns(r_c) / steady_ns(r_c)
        check("e: batching leaves at most a quarter of c's requests waiting",
              share_e <= 0.25 * share_c, f"requests waiting {share_e:.1%} of the steady state, "
              f"c) {share_c:.1%}; idle: {subcause_shares(r_e)}")
        serving = r_e.get("serving")
        if serving:
            d = device(r_e)
            per_request = d.get("demand_busy_ns", 0) / max(serving["requests"], 1)
            notes.append(f"e: run p50 {serving['run']['p50_ns'] / 1e6:.1f} ms, queue p50 "
                         f"{serving['queue']['p50_ns'] / 1e6:.1f} ms, "
                         f"{serving['in_flight_mean']:.2f} in flight; GPU time per batch of "
                         f"{batch} about {batch * per_request / 1e6:.2f} ms (c: the prediction "
                         f"takes {batch} x one request's)")

    # f) The same naive server, profiled from inside with gpuidle.profile().
    f_case = case("f_one_explicit", "one, --gpuidle", ["--mode", "one", "--gpuidle",
                  os.path.join(out, "f_one_explicit.report.json")], high)
    if f_case is not None:
        r = f_case[1]
        first = (r.get("advice") or [None])[0]
        said = (f"{first['subcause']} batch {first.get('batch')}, "
                f"{first.get('predicted_requests_per_s') or 0:.2f}/s" if first else "none")
        check("f: gpuidle.profile() in the server: requests waiting first, the batch of c)",
              largest_subcause(r) == WAITING and first is not None and
              first["subcause"] == WAITING and (prediction is None or
                                                first.get("batch") == prediction["batch"]),
              f"{subcause_shares(r)}; advice: {said}")
        trace = os.path.join(out, "f_one_explicit.report.trace.json")
        if os.path.exists(trace):
            os.remove(trace)

    # CI replays c)'s trace: it must say what the live report said.
    trace = os.path.join(out, "c_one_high.trace.json")
    if c is not None and os.path.exists(trace):
        live = c[1]
        p = subprocess.run([cli, "analyze", "--format", "json", trace], capture_output=True,
                           text=True, timeout=wait_s(180))
        again = json.loads(p.stdout) if p.returncode == 0 else None
        if again:
            a_share = waiting_ns(again) / max(device(again)["idle_ns"], 1)
            l_share = waiting_ns(live) / max(device(live)["idle_ns"], 1)
            first = advice_for(again) or {}
            live_first = prediction or {}
            check("analyze of c's trace: the same requests waiting and batch",
                  abs(a_share - l_share) <= 0.02 and first.get("batch") is not None and
                  first.get("batch") == live_first.get("batch"),
                  f"requests waiting {a_share:.1%} of idle (live {l_share:.1%}); batch "
                  f"{first.get('batch')}, {first.get('predicted_requests_per_s') or 0:.2f}/s "
                  f"(live {live_first.get('batch')}, "
                  f"{live_first.get('predicted_requests_per_s') or 0:.2f}/s)")
        else:
            check("analyze of c's trace", False, f"exit {p.returncode}: {p.stderr[-500:]}")
        with open(trace, "rb") as f, gzip.open(trace + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(trace)
        notes.append(f"c's trace for replay: {os.path.getsize(trace + '.gz') / 2**20:.1f} MiB "
                     f"gzipped")

    loads = {name: got[0] for name, got in results.items()}
    check("every load was answered without errors",
          loads and all(x["errors"] == 0 and x["requests"] > 0 for x in loads.values()),
          ", ".join(f"{n}: {x['requests']} answered, {x['errors']} errors"
                    for n, x in loads.items()) or "no load ran")
    lines += [""] + [f"- {n}" for n in notes]
    lines.append(f"\n{time.monotonic() - T0:.0f} s in all")
    return finish(out, "serving.md", "serving", lines)


if __name__ == "__main__":
    sys.exit(main())
