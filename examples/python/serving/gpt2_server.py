"""A small text-generation server: GPT-2 small behind the standard library's HTTP server.

    python3 gpt2_server.py --mode one --port 8000 --warmup 3
    curl -d '{"prompt_tokens": 32, "new_tokens": 8}' localhost:8000/generate

POST /generate with a JSON body {"prompt_tokens": N, "new_tokens": M} generates M tokens after a
prompt of N random token ids (there is no tokenizer: the model is GPT2Config()'s, with random
weights, built here and never downloaded) and answers {"tokens": [...the M new ids...]}.

Two ways to serve (--mode):
- one: one request at a time. Each HTTP request runs model.generate() on its own handler thread,
  behind a lock: the naive server. Under load the requests queue on the lock while the GPU runs
  one small, launch-bound generation after another.
- batch: dynamic batching. Handler threads put their requests on a queue; one worker thread takes
  what has queued (up to --max-batch, waiting at most --queue-delay-ms for more), runs ONE
  generate() on the left-padded batch and answers each request.

The default path never imports gpuidle: `gpuidle run -- python3 gpt2_server.py ...` profiles it
unchanged, and gpuidle marks its requests by itself (each HTTP request, and generate() as the
run of the request it serves: docs/PYTHON.md, "Serving: requests"). Two places use gpuidle when it
is there: --gpuidle REPORT profiles the serving with gpuidle.profile() explicitly, and the batch
worker marks the requests it takes up as running (the handler threads only wait), which it does
only if gpuidle imports and something records; without gpuidle the server runs the same.

--duration-s serves that long after "listening on PORT", then exits with status 0, so that
`gpuidle run` writes its report at the exit. tests/gpu/python/serving_proof.py drives it with
load.py (beside this file).
"""
import argparse
import contextvars
import http.server
import json
import queue
import threading
import time

# The warm-up's requests: the shape tests/gpu/python/serving_proof.py sends.
WARMUP_PROMPT_TOKENS = 32
WARMUP_NEW_TOKENS = 8


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("one", "batch"), default="one",
                        help="one request at a time behind a lock, or dynamic batching")
    parser.add_argument("--port", type=int, default=8000,
                        help="port on 127.0.0.1 (0: any free one; the server prints it)")
    parser.add_argument("--warmup", type=int, default=3, metavar="N",
                        help="generate() calls before listening (each batch size the mode uses), "
                             "so that the first requests pay no start-up costs")
    parser.add_argument("--duration-s", type=float, default=0,
                        help="serve this long, then exit with status 0 (0: until Ctrl-C)")
    parser.add_argument("--max-batch", type=int, default=8,
                        help="batch mode: the most requests in one generate()")
    parser.add_argument("--queue-delay-ms", type=float, default=10,
                        help="batch mode: how long the worker waits for more requests once one "
                             "has come, before it runs what it has")
    parser.add_argument("--gpuidle", metavar="REPORT",
                        help="profile the serving with gpuidle.profile() and write its report "
                             "(JSON) there, its trace beside it (.trace.json)")
    args = parser.parse_args()
    if args.max_batch < 1 or args.queue_delay_ms < 0 or args.warmup < 0 or args.duration_s < 0:
        parser.error("--max-batch must be at least 1; --queue-delay-ms, --warmup and "
                     "--duration-s at least 0")
    return parser, args


class Model:
    """GPT-2 small with random weights on the GPU, and generate() on a batch of prompts."""

    def __init__(self):
        import torch
        import transformers

        self.torch = torch
        torch.manual_seed(0)
        config = transformers.GPT2Config()  # GPT-2 small: 12 layers, 768 wide, 124M parameters
        # Built on the CPU and cast there: the GPU's first kernels are the serving's own.
        model = transformers.GPT2LMHeadModel(config).to(torch.bfloat16)
        self.model = model.cuda().eval()
        self.vocab_size = config.vocab_size
        self.pad_id = config.eos_token_id  # GPT-2 has no pad token; its end-of-text pads

    def prompt(self, tokens):
        """A prompt of random token ids on the CPU (where a tokenizer would put them)."""
        return self.torch.randint(0, self.vocab_size, (tokens,))

    def generate(self, prompts, new_tokens):
        """Exactly new_tokens greedy tokens after each prompt (left-padded to one length, as
        batched generation needs): one generate() call; the new ids of each, as lists."""
        torch = self.torch
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):
            ids[i, width - len(p):] = p
            mask[i, width - len(p):] = 1
        with torch.inference_mode():
            out = self.model.generate(ids.cuda(), attention_mask=mask.cuda(),
                                      max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                      do_sample=False, pad_token_id=self.pad_id)
        return out[:, width:].tolist()


class OneAtATime:
    """The naive server: each handler thread runs its own request, one at a time."""

    def __init__(self, model):
        self.model = model
        self.lock = threading.Lock()

    def submit(self, prompt, new_tokens):
        with self.lock:  # the other requests wait here, the GPU idle between the launches
            return self.model.generate([prompt], new_tokens)[0]

    def stop(self):
        pass


def _request_marker():
    """A function that marks the request current in a handler's context as running (its
    `r.running()`): gpuidle's request of that HTTP request, where gpuidle marks requests
    (`gpuidle run`'s automatic marks, or --gpuidle). A no-op where gpuidle is not importable;
    with nothing recording there is no current request and nothing is marked."""
    try:
        from gpuidle._requests import current  # the current request of a thread or task
    except ImportError:
        return lambda context: None

    def mark(context):
        r = context.run(current)
        if r is not None:
            r.running()

    return mark


class _Job:
    __slots__ = ("prompt", "new_tokens", "context", "done", "tokens", "error")

    def __init__(self, prompt, new_tokens):
        self.prompt = prompt
        self.new_tokens = new_tokens
        # The handler thread's context: it holds the request that gpuidle's automatic HTTP mark
        # made current there (a ContextVar), which the worker thread cannot see by itself.
        self.context = contextvars.copy_context()
        self.done = threading.Event()
        self.tokens = None
        self.error = None


class Batcher:
    """Dynamic batching: handler threads queue their requests; one worker runs them in batches."""

    def __init__(self, model, max_batch, queue_delay_s):
        self.model = model
        self.max_batch = max_batch
        self.queue_delay_s = queue_delay_s
        self.jobs = queue.Queue()
        self.worker = threading.Thread(target=self._work, name="batcher", daemon=True)
        self.worker.start()

    def submit(self, prompt, new_tokens):
        job = _Job(prompt, new_tokens)
        self.jobs.put(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.tokens

    def stop(self):
        self.jobs.put(None)
        self.worker.join(timeout=60)

    def _take(self):
        """The next batch: the first request to come, then what comes within the queue delay,
        up to max_batch; None once stopped."""
        first = self.jobs.get()
        if first is None:
            return None
        batch = [first]
        deadline = time.monotonic() + self.queue_delay_s
        while len(batch) < self.max_batch:
            try:
                job = self.jobs.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                break
            if job is None:  # stopping: this batch is the last
                self.jobs.put(None)
                break
            batch.append(job)
        return batch

    def _work(self):
        mark = _request_marker()  # here, not at import: gpuidle run loads gpuidle with torch
        while True:
            batch = self._take()
            if batch is None:
                return
            for job in batch:  # taken up: from here the server works on them
                mark(job.context)
            try:
                # In the first request's context, so that gpuidle's mark of generate() finds a
                # request it serves (marked already) rather than making one of its own.
                out = batch[0].context.run(self.model.generate, [j.prompt for j in batch],
                                           max(j.new_tokens for j in batch))
                for job, tokens in zip(batch, out):
                    job.tokens = tokens[:job.new_tokens]
            except Exception as e:  # answered as an error; the server serves on
                for job in batch:
                    job.error = e
            for job in batch:
                job.done.set()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client's connection serves its next request
    # The response goes out as two writes (headers, body): without TCP_NODELAY, Nagle's algorithm
    # holds the body until the client's delayed ACK, up to 40 ms per request.
    disable_nagle_algorithm = True

    def do_POST(self):
        if self.path != "/generate":
            self._reply(404, {"error": "POST /generate"})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            prompt_tokens = int(body["prompt_tokens"])
            new_tokens = int(body["new_tokens"])
            if prompt_tokens < 1 or new_tokens < 1 or prompt_tokens + new_tokens > 1024:
                raise ValueError("1 <= prompt_tokens, 1 <= new_tokens, and their sum <= 1024 "
                                 "(GPT-2's context)")
        except (ValueError, TypeError, KeyError) as e:
            self._reply(400, {"error": f"{type(e).__name__}: {e}"})
            return
        try:
            tokens = self.server.scheduler.submit(self.server.model.prompt(prompt_tokens),
                                                  new_tokens)
        except Exception as e:
            self._reply(500, {"error": f"{type(e).__name__}: {e}"})
            return
        self._reply(200, {"tokens": tokens})

    def _reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass  # no line per request on stderr


class Server(http.server.ThreadingHTTPServer):
    # The listen backlog (5 by default): clients that connect at once must not be refused, or
    # they retry a second later.
    request_queue_size = 128


def warm_up(model, args):
    """Runs generate() at each batch size the mode uses; prints the last call's time."""
    sizes = [1] if args.mode == "one" else sorted({1, args.max_batch})
    for size in sizes:
        prompts = [model.prompt(WARMUP_PROMPT_TOKENS) for _ in range(size)]
        for _ in range(args.warmup):
            t0 = time.perf_counter()
            model.generate(prompts, WARMUP_NEW_TOKENS)  # returns lists: the GPU is done
            ms = (time.perf_counter() - t0) * 1e3
        if args.warmup:
            print(f"warm-up: batch {size}: generate() of {WARMUP_PROMPT_TOKENS}+"
                  f"{WARMUP_NEW_TOKENS} tokens: {ms:.1f} ms", flush=True)


def serve(server, duration_s):
    if duration_s:
        timer = threading.Timer(duration_s, server.shutdown)
        timer.daemon = True
        timer.start()
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


def main():
    parser, args = parse_args()
    profile = None
    if args.gpuidle:
        try:
            import gpuidle  # only for --gpuidle: the default path is the unchanged server
        except ImportError as e:
            parser.error(f"--gpuidle needs the gpuidle package ({e})")
        trace = args.gpuidle.rsplit(".json", 1)[0] + ".trace.json"
        profile = gpuidle.profile(out=args.gpuidle, format="json", trace=trace)
    model = Model()
    warm_up(model, args)
    if args.mode == "one":
        scheduler = OneAtATime(model)
    else:
        scheduler = Batcher(model, args.max_batch, args.queue_delay_ms / 1e3)
    server = Server(("127.0.0.1", args.port), Handler)
    server.model = model
    server.scheduler = scheduler
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        if profile is not None:
            with profile:  # the serving alone: the model's build and warm-up are not in it
                serve(server, args.duration_s)
        else:
            serve(server, args.duration_s)
    finally:
        scheduler.stop()
        server.server_close()


if __name__ == "__main__":
    main()
