"""A serving process's report in Python (docs/ANALYSIS.md, "Serving"): a torch.profiler trace
whose requests are record_function("gpuidle.request:<id>") ranges, read by gpuidle.analyze()."""
import json

import gpuidle


def _trace(tmp_path, events):
    path = tmp_path / "serving.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def _range(name, tid, ts, end):
    return {"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": tid, "ts": ts,
            "dur": end - ts, "args": {}}


def _launch(tid, ts, start, end, correlation):
    return [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": tid,
         "ts": ts, "dur": 5, "args": {"correlation": correlation}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": start,
         "dur": end - start, "args": {"device": 0, "stream": 7, "correlation": correlation}},
    ]


def test_a_request_waiting_behind_another_is_requests_waiting_with_a_batching_prediction(
        tmp_path):
    # Two threads, one model: request 2 arrives at 100 us and gets the model at 1000 us.
    events = [_range("gpuidle.request:1", 101, 0, 1000), _range("gpuidle.request:2", 102, 100, 2000)]
    for i, (tid, ts, start, end) in enumerate([(101, 10, 20, 200), (101, 400, 410, 600),
                                               (101, 800, 810, 990), (102, 1000, 1010, 1200),
                                               (102, 1500, 1510, 1990)]):
        events += _launch(tid, ts, start, end, i + 1)
    report = gpuidle.analyze(_trace(tmp_path, events))
    device = report.devices[0]
    assert device.idle_by_subcause["launch_bound.requests_waiting"] == 430_000
    assert device.demand_ns is not None and device.demand_busy_ns == 1_220_000
    serving = report.serving
    assert isinstance(serving, gpuidle.Serving)
    assert (serving.requests, serving.run_known, serving.in_flight_max) == (2, 2, 2)
    assert serving.queue == gpuidle.Percentiles(p50_ns=0, p90_ns=900_000, p99_ns=900_000)
    advice = report.advice[0]
    assert advice.subcause == "launch_bound.requests_waiting"
    assert advice.batch == 2 and advice.predicted_latency_ns == 1_000_000
    assert "serving: 2 requests" in report.format("text")
    # The timeline's requests in flight: each request's time inside the window, per bin.
    timeline = device.timeline
    assert timeline is not None and len(timeline.in_flight_ns) == len(timeline.busy_ns)
    start, end = timeline.start_ns, timeline.start_ns + device.window_ns
    want = sum(max(0, min(e, end) - max(a, start)) for a, e in ((0, 1_000_000),
                                                                 (100_000, 2_000_000)))
    assert sum(timeline.in_flight_ns) == want > 0
    means = timeline.in_flight()
    assert len(means) == len(timeline.busy_ns)
    assert max(means) == 2.0 and all(0 <= m <= 2.0 for m in means)


def test_without_requests_a_report_has_no_serving_figures(tmp_path):
    report = gpuidle.analyze(_trace(tmp_path, _launch(101, 10, 20, 200, 1)))
    assert report.serving is None
    assert report.devices[0].demand_ns is None
    assert report.devices[0].timeline.in_flight_ns is None
    assert report.devices[0].timeline.in_flight() is None
    assert "serving:" not in report.format("text")
