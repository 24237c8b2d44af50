"""A load generator for gpt2_server.py (standard library only).

    python3 load.py --url http://127.0.0.1:8000/generate --concurrency 8 --duration-s 10
    python3 load.py --url http://127.0.0.1:8000/generate --rate 2 --arrivals fixed --duration-s 10

Closed loop (--concurrency N): N clients, each sends its next request as soon as its last one
was answered: the server's throughput at N requests in flight. Open loop (--rate R): requests
start at R per second whatever the server does (Poisson arrivals, or evenly spaced with
--arrivals fixed), each on a client thread of its own; a request's latency counts from its
scheduled start, so that a server that falls behind is not flattered by the client waiting for
it. Each client thread keeps one HTTP/1.1 connection.

No request starts after --duration-s; those under way are waited for. At the end one JSON line:
{"requests": answered, "requests_per_s": answered / (first start to last answer),
"latency_p50_ms", "latency_p90_ms", "latency_p99_ms" (nearest rank), "errors": failed requests,
and the load's settings}.
"""
import argparse
import concurrent.futures
import http.client
import json
import math
import random
import threading
import time
import urllib.parse


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="http://HOST:PORT/generate")
    load = parser.add_mutually_exclusive_group(required=True)
    load.add_argument("--concurrency", type=int, help="closed loop: this many clients")
    load.add_argument("--rate", type=float, help="open loop: requests per second")
    parser.add_argument("--arrivals", choices=("poisson", "fixed"), default="poisson",
                        help="open loop: exponential gaps between starts, or even ones")
    parser.add_argument("--duration-s", type=float, default=10, help="how long requests start")
    parser.add_argument("--prompt-tokens", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=8)
    parser.add_argument("--timeout-s", type=float, default=60, help="per request")
    parser.add_argument("--seed", type=int, default=0, help="open loop: the Poisson arrivals'")
    args = parser.parse_args()
    if (args.concurrency is not None and args.concurrency < 1) or \
            (args.rate is not None and args.rate <= 0) or args.duration_s <= 0:
        parser.error("--concurrency, --rate and --duration-s must be positive")
    return args


class Client:
    """One keep-alive connection; reconnects after an error."""

    def __init__(self, url, body, timeout_s):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = u.hostname, u.port or 80, u.path or "/"
        self.body = body
        self.timeout_s = timeout_s
        self.conn = None

    def send(self):
        """One request; True if answered with 200."""
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port,
                                                       timeout=self.timeout_s)
            self.conn.request("POST", self.path, body=self.body,
                              headers={"Content-Type": "application/json"})
            response = self.conn.getresponse()
            response.read()
            if response.will_close:
                self.close()
            return response.status == 200
        except (OSError, http.client.HTTPException):
            self.close()
            return False

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Tally:
    """Latencies and errors from every client thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = []
        self.errors = 0
        self.last_end = None

    def add(self, ok, start):
        end = time.perf_counter()
        with self.lock:
            if ok:
                self.latencies.append(end - start)
            else:
                self.errors += 1
            self.last_end = end if self.last_end is None else max(self.last_end, end)


def closed_loop(args, body, tally, t0):
    stop_at = t0 + args.duration_s

    def client():
        c = Client(args.url, body, args.timeout_s)
        while time.perf_counter() < stop_at:
            start = time.perf_counter()
            tally.add(c.send(), start)
        c.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def open_loop(args, body, tally, t0):
    rng = random.Random(args.seed)
    local = threading.local()
    clients = []
    clients_lock = threading.Lock()

    def one(scheduled):
        c = getattr(local, "client", None)
        if c is None:
            c = local.client = Client(args.url, body, args.timeout_s)
            with clients_lock:
                clients.append(c)
        tally.add(c.send(), scheduled)  # from its scheduled start: queueing here counts

    # Enough threads for every request that may be under way at once: a server that stalls
    # for the timeout holds rate x timeout of them.
    workers = max(4, min(256, math.ceil(args.rate * args.timeout_s)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        at = t0
        while True:
            at += rng.expovariate(args.rate) if args.arrivals == "poisson" else 1 / args.rate
            if at >= t0 + args.duration_s:
                break
            time.sleep(max(at - time.perf_counter(), 0))
            pool.submit(one, at)
    for c in clients:
        c.close()


def percentile_ms(sorted_s, p):
    if not sorted_s:
        return None
    rank = min(max(math.ceil(p * len(sorted_s)), 1), len(sorted_s))
    return round(sorted_s[rank - 1] * 1e3, 3)


def main():
    args = parse_args()
    body = json.dumps({"prompt_tokens": args.prompt_tokens,
                       "new_tokens": args.new_tokens}).encode()
    tally = Tally()
    t0 = time.perf_counter()
    if args.concurrency is not None:
        closed_loop(args, body, tally, t0)
    else:
        open_loop(args, body, tally, t0)
    elapsed = (tally.last_end or time.perf_counter()) - t0
    latencies = sorted(tally.latencies)
    result = {
        "requests": len(latencies),
        "requests_per_s": round(len(latencies) / elapsed, 3) if elapsed > 0 else 0.0,
        "latency_p50_ms": percentile_ms(latencies, 0.5),
        "latency_p90_ms": percentile_ms(latencies, 0.9),
        "latency_p99_ms": percentile_ms(latencies, 0.99),
        "errors": tally.errors,
        "elapsed_s": round(elapsed, 3),
        "load": (f"closed loop, {args.concurrency} clients" if args.concurrency is not None
                 else f"open loop, {args.rate:g}/s {args.arrivals}"),
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
