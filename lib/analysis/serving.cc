#include "analysis/serving.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/trace_names.h"

namespace gpuidle::internal {
namespace {

// A range's request id: what follows "gpuidle.request:" (or "gpuidle.request_run:"); a range
// of gpuidle's request category named otherwise is its whole name.
absl::string_view IdOf(const Timeline& t, const Range& r, absl::string_view prefix) {
  const absl::string_view name = t.strings.Get(r.name);
  return RequestIdOf(name, prefix).value_or(name);
}

// The length of [s, e) covered by `merged` (sorted, disjoint).
int64_t CoveredNs(const std::vector<Interval>& merged, int64_t s, int64_t e) {
  int64_t covered = 0;
  auto it = std::upper_bound(merged.begin(), merged.end(), s,
                             [](int64_t v, const Interval& i) { return v < i.end_ns; });
  for (; it != merged.end() && it->start_ns < e; ++it) {
    covered += std::min(e, it->end_ns) - std::max(s, it->start_ns);
  }
  return covered;
}

int64_t Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

Serving::Percentiles PercentilesOf(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return {Percentile(v, 0.5), Percentile(v, 0.9), Percentile(v, 0.99)};
}

}  // namespace

Demand::Demand(const Timeline& t) {
  // Requests by id, and by thread for runs without one.
  absl::flat_hash_map<std::string, std::vector<size_t>> by_id;
  std::vector<uint64_t> threads;
  for (const Range& r : t.ranges) {
    if (r.kind != RangeKind::kRequest || r.end_ns < r.start_ns) continue;
    by_id[std::string(IdOf(t, r, kRequestName))].push_back(requests_.size());
    requests_.push_back({r.start_ns, r.end_ns, std::nullopt});
    threads.push_back(r.thread);
  }
  if (requests_.empty()) return;
  // Each run to the request of its id (or, unnamed, of its thread) that holds its start; ranges
  // are sorted by start, so the latest such request is the innermost.
  for (const Range& r : t.ranges) {
    if (r.kind != RangeKind::kRequestRun) continue;
    const absl::string_view id = IdOf(t, r, kRequestRunName);
    auto it = by_id.find(id);
    if (it == by_id.end()) continue;
    for (auto k = it->second.rbegin(); k != it->second.rend(); ++k) {
      ServedRequest& q = requests_[*k];
      if (q.arrival_ns > r.start_ns || q.end_ns < r.start_ns) continue;
      if (id.empty() && threads[*k] != r.thread) continue;
      if (!q.run_start_ns.has_value() || r.start_ns < *q.run_start_ns) q.run_start_ns = r.start_ns;
      break;
    }
  }
  // The rest, in order of arrival: one that arrived while no other request ran was taken up at
  // once; one that arrived while another ran, at the first launch of its own thread inside it (a
  // thread per request that waited for the model's lock), else never known.
  absl::flat_hash_map<uint64_t, std::vector<int64_t>> launches;
  bool any_unknown = false;
  for (const ServedRequest& q : requests_) any_unknown |= !q.run_start_ns.has_value();
  if (any_unknown) {
    for (const HostCall& c : t.calls) {
      if (c.category == CallCategory::kLaunch) launches[c.thread].push_back(c.start_ns);
    }
  }
  // Runs by start, taken in as arrivals pass them: the latest end of those begun is whether one
  // runs at an arrival.
  using Run = std::pair<int64_t, int64_t>;  // start, end
  std::priority_queue<Run, std::vector<Run>, std::greater<>> runs;
  for (const ServedRequest& q : requests_) {
    if (q.run_start_ns.has_value()) runs.emplace(*q.run_start_ns, q.end_ns);
  }
  int64_t latest_end = std::numeric_limits<int64_t>::min();
  std::vector<Interval> in_flight, waiting;
  for (size_t i = 0; i < requests_.size(); ++i) {
    ServedRequest& q = requests_[i];
    while (!runs.empty() && runs.top().first <= q.arrival_ns) {
      latest_end = std::max(latest_end, runs.top().second);
      runs.pop();
    }
    if (!q.run_start_ns.has_value()) {
      if (latest_end <= q.arrival_ns) {
        q.run_start_ns = q.arrival_ns;
      } else if (auto l = launches.find(threads[i]); l != launches.end()) {
        auto first = std::lower_bound(l->second.begin(), l->second.end(), q.arrival_ns);
        if (first != l->second.end() && *first < q.end_ns) q.run_start_ns = *first;
      }
      if (q.run_start_ns.has_value()) runs.emplace(*q.run_start_ns, q.end_ns);
    }
    in_flight.push_back({q.arrival_ns, q.end_ns});
    if (q.run_start_ns.has_value()) waiting.push_back({q.arrival_ns, *q.run_start_ns});
  }
  in_flight_ = MergedIntervals(std::move(in_flight));
  waiting_ = MergedIntervals(std::move(waiting));
}

void ApplyDemand(const Demand& demand, const std::vector<Interval>& busy, Interval steady,
                 PhasedDevice* phased, DeviceReport* d) {
  const std::vector<Interval>& in_flight = demand.in_flight();
  std::vector<IdlePiece> pieces;
  pieces.reserve(phased->steady.size());
  OneOffTime no_demand{Phase::kSteady, OneOffKind::kNoDemand, 0, 0, ""};
  int64_t last_no_demand_end = std::numeric_limits<int64_t>::min();
  auto keep = [&](const IdlePiece& from, int64_t s, int64_t e, Subcause subcause) {
    if (e <= s) return;
    IdlePiece p = from;
    p.start_ns = s;
    p.end_ns = e;
    p.subcause = subcause;
    pieces.push_back(p);
  };
  // Inside demand: the parts where a request waited are requests_waiting.
  auto in_demand = [&](const IdlePiece& piece, int64_t s, int64_t e) {
    const std::vector<Interval>& waiting = demand.waiting();
    auto w = std::upper_bound(waiting.begin(), waiting.end(), s,
                              [](int64_t v, const Interval& i) { return v < i.end_ns; });
    for (; w != waiting.end() && w->start_ns < e; ++w) {
      const int64_t from = std::max(s, w->start_ns), to = std::min(e, w->end_ns);
      keep(piece, s, from, piece.subcause);
      keep(piece, from, to, Subcause::kRequestsWaiting);
      s = to;
    }
    keep(piece, s, e, piece.subcause);
  };
  auto none = [&](int64_t s, int64_t e) {
    if (e <= s) return;
    no_demand.ns += e - s;
    if (s != last_no_demand_end) ++no_demand.count;
    last_no_demand_end = e;
  };
  for (const IdlePiece& piece : phased->steady) {
    int64_t s = piece.start_ns;
    const int64_t e = piece.end_ns;
    auto f = std::upper_bound(in_flight.begin(), in_flight.end(), s,
                              [](int64_t v, const Interval& i) { return v < i.end_ns; });
    for (; f != in_flight.end() && f->start_ns < e; ++f) {
      const int64_t from = std::max(s, f->start_ns), to = std::min(e, f->end_ns);
      none(s, from);
      in_demand(piece, from, to);
      s = to;
    }
    none(s, e);
  }
  phased->steady = std::move(pieces);
  if (no_demand.ns > 0) {
    phased->one_off.push_back(no_demand);
    std::stable_sort(phased->one_off.begin(), phased->one_off.end(),
                     [](const OneOffTime& a, const OneOffTime& b) {
                       return a.phase != b.phase ? a.phase < b.phase : a.ns > b.ns;
                     });
  }
  // The busy share while there is demand.
  d->demand_ns = CoveredNs(in_flight, steady.start_ns, steady.end_ns);
  int64_t busy_in_demand = 0;
  for (const Interval& b : busy) {
    const int64_t s = std::max(b.start_ns, steady.start_ns), e = std::min(b.end_ns, steady.end_ns);
    if (e > s) busy_in_demand += CoveredNs(in_flight, s, e);
  }
  d->demand_busy_ns = busy_in_demand;
}

void AddInFlight(const Demand& demand, Interval window, TimelineSummary* t) {
  t->in_flight_ns.clear();
  if (demand.empty() || t->bin_ns <= 0 || t->bins.empty()) return;
  // A sweep over arrivals and ends: between two edges the count is constant, and that stretch
  // adds count * its length to the bins it crosses (requests can span many bins).
  std::vector<std::pair<int64_t, int>> edges;
  for (const ServedRequest& q : demand.requests()) {
    const int64_t a = std::max(q.arrival_ns, window.start_ns);
    const int64_t e = std::min(q.end_ns, window.end_ns);
    if (e <= a) continue;
    edges.emplace_back(a, 1);
    edges.emplace_back(e, -1);
  }
  std::sort(edges.begin(), edges.end());
  std::vector<int64_t> in_flight(t->bins.size());
  const auto last = static_cast<int64_t>(t->bins.size()) - 1;
  int64_t count = 0;
  for (size_t k = 0; k < edges.size(); ++k) {
    count += edges[k].second;
    if (count <= 0 || k + 1 == edges.size()) continue;
    int64_t s = edges[k].first;
    const int64_t e = edges[k + 1].first;
    int64_t i = std::clamp<int64_t>((s - t->start_ns) / t->bin_ns, 0, last);
    while (s < e) {
      const int64_t bin_end = i == last ? e : std::min(e, t->start_ns + (i + 1) * t->bin_ns);
      in_flight[static_cast<size_t>(i)] += count * (bin_end - s);
      s = bin_end;
      ++i;
    }
  }
  t->in_flight_ns = std::move(in_flight);
}

Serving SummariseServing(const Demand& demand, Interval steady, std::span<const Interval> steps) {
  Serving s;
  std::vector<int64_t> latency, queue, run;
  // +1 at arrivals, -1 at ends, inside the steady state.
  std::vector<std::pair<int64_t, int>> edges;
  std::vector<int64_t> run_starts, run_ends;
  double in_flight_ns = 0;
  for (const ServedRequest& q : demand.requests()) {
    const int64_t a = std::max(q.arrival_ns, steady.start_ns);
    const int64_t e = std::min(q.end_ns, steady.end_ns);
    if (e > a) {
      in_flight_ns += static_cast<double>(e - a);
      edges.emplace_back(a, 1);
      edges.emplace_back(e, -1);
    }
    if (q.run_start_ns.has_value() && q.end_ns > *q.run_start_ns) {
      run_starts.push_back(*q.run_start_ns);
      run_ends.push_back(q.end_ns);
    }
    // Requests in flight during the steady state: the last one's response is written after
    // the last kernel, where the steady state of a process without steps ends.
    if (q.end_ns <= steady.start_ns || q.arrival_ns >= steady.end_ns) continue;
    latency.push_back(q.end_ns - q.arrival_ns);
    if (!q.run_start_ns.has_value()) continue;
    queue.push_back(std::max<int64_t>(0, *q.run_start_ns - q.arrival_ns));
    run.push_back(q.end_ns - std::max(q.arrival_ns, *q.run_start_ns));
  }
  const int64_t span = steady.end_ns - steady.start_ns;
  s.requests = static_cast<int64_t>(latency.size());
  s.run_known = static_cast<int64_t>(run.size());
  if (span > 0) {
    s.requests_per_s = static_cast<double>(s.requests) * 1e9 / static_cast<double>(span);
    s.in_flight_mean = in_flight_ns / static_cast<double>(span);
  }
  s.latency = PercentilesOf(std::move(latency));
  s.queue = PercentilesOf(std::move(queue));
  s.run = PercentilesOf(std::move(run));
  // Ends before arrivals at one instant: a request that ends as the next arrives is not two.
  std::sort(edges.begin(), edges.end());
  int64_t now = 0;
  for (const auto& [at, delta] : edges) {
    now += delta;
    s.in_flight_max = std::max(s.in_flight_max, now);
  }
  // Requests running per step: runs that overlap it (a batch, or continuous batching's slots).
  if (!steps.empty() && !run_starts.empty()) {
    std::sort(run_starts.begin(), run_starts.end());
    std::sort(run_ends.begin(), run_ends.end());
    double total = 0;
    for (const Interval& step : steps) {
      const auto started =
          std::lower_bound(run_starts.begin(), run_starts.end(), step.end_ns) - run_starts.begin();
      const auto ended =
          std::upper_bound(run_ends.begin(), run_ends.end(), step.start_ns) - run_ends.begin();
      total += static_cast<double>(started - ended);
    }
    s.batch_mean = total / static_cast<double>(steps.size());
  }
  return s;
}

void AddServing(const Serving& part, int64_t part_span_ns, bool concurrent, Serving* sum,
                int64_t* sum_span_ns) {
  const double n = static_cast<double>(sum->requests), m = static_cast<double>(part.requests);
  auto mean = [&](int64_t a, int64_t b) {
    return n + m > 0
               ? std::llround((static_cast<double>(a) * n + static_cast<double>(b) * m) / (n + m))
               : 0;
  };
  auto merge = [&](Serving::Percentiles* a, const Serving::Percentiles& b) {
    a->p50_ns = mean(a->p50_ns, b.p50_ns);
    a->p90_ns = mean(a->p90_ns, b.p90_ns);
    a->p99_ns = std::max(a->p99_ns, b.p99_ns);
  };
  merge(&sum->latency, part.latency);
  // The run figures are of the requests whose run is known.
  const double rn = static_cast<double>(sum->run_known), rm = static_cast<double>(part.run_known);
  auto run_mean = [&](int64_t a, int64_t b) {
    return rn + rm > 0 ? std::llround((static_cast<double>(a) * rn + static_cast<double>(b) * rm) /
                                      (rn + rm))
                       : 0;
  };
  for (auto [a, b] : {std::pair{&sum->queue, &part.queue}, std::pair{&sum->run, &part.run}}) {
    a->p50_ns = run_mean(a->p50_ns, b->p50_ns);
    a->p90_ns = run_mean(a->p90_ns, b->p90_ns);
    a->p99_ns = std::max(a->p99_ns, b->p99_ns);
  }
  if (part.batch_mean.has_value()) {
    sum->batch_mean = sum->batch_mean.has_value() && n + m > 0
                          ? (*sum->batch_mean * n + *part.batch_mean * m) / (n + m)
                          : *part.batch_mean;
  }
  const int64_t before_ns = *sum_span_ns;
  if (concurrent) {
    sum->requests_per_s += part.requests_per_s;
    sum->in_flight_mean += part.in_flight_mean;
    sum->in_flight_max += part.in_flight_max;
    *sum_span_ns = std::max(before_ns, part_span_ns);
  } else {
    *sum_span_ns = before_ns + part_span_ns;
    const double total = static_cast<double>(*sum_span_ns);
    if (total > 0) {
      sum->in_flight_mean = (sum->in_flight_mean * static_cast<double>(before_ns) +
                             part.in_flight_mean * static_cast<double>(part_span_ns)) /
                            total;
      sum->requests_per_s = static_cast<double>(sum->requests + part.requests) * 1e9 / total;
    }
    sum->in_flight_max = std::max(sum->in_flight_max, part.in_flight_max);
  }
  sum->requests += part.requests;
  sum->run_known += part.run_known;
}

}  // namespace gpuidle::internal
