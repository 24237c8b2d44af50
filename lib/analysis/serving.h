// Serving (docs/ANALYSIS.md, "Serving"): the requests a process marked, when they were in
// flight and when they waited to be taken up, and what that makes of the device's idle time:
// idle with no request in flight is no demand (not lost); idle while a request waited is
// launch_bound.requests_waiting; the rest keeps its cause.
#ifndef GPUIDLE_LIB_ANALYSIS_SERVING_H_
#define GPUIDLE_LIB_ANALYSIS_SERVING_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "analysis/attribution.h"
#include "analysis/phases.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

struct ServedRequest {
  int64_t arrival_ns = 0;
  int64_t end_ns = 0;
  // When the server took it up: its request_run range; else its arrival if no other request ran
  // then, or the first launch call of its own thread inside it; nullopt where none says (then it
  // never counts as waiting).
  std::optional<int64_t> run_start_ns;
};

class Demand {
 public:
  // The timeline's requests (RangeKind::kRequest), each with its run: the kRequestRun range of
  // the same id (an unnamed one: the request of its thread that holds its start).
  explicit Demand(const Timeline& t);

  bool empty() const { return requests_.empty(); }
  const std::vector<ServedRequest>& requests() const { return requests_; }
  const std::vector<Interval>& in_flight() const { return in_flight_; }  // merged, by start
  const std::vector<Interval>& waiting() const { return waiting_; }      // merged, by start

 private:
  std::vector<ServedRequest> requests_;
  std::vector<Interval> in_flight_;
  std::vector<Interval> waiting_;
};

// Recasts the steady-state idle pieces of one device by demand: outside every request they
// become the steady state's no-demand time (one-off kNoDemand, never lost), inside a request's
// wait launch_bound.requests_waiting. Sets the device's demand_ns and demand_busy_ns from the
// device's busy intervals (merged, by start).
void ApplyDemand(const Demand& demand, const std::vector<Interval>& busy, Interval steady,
                 PhasedDevice* phased, DeviceReport* d);

// Fills t->in_flight_ns (one per bin of t) with the requests in flight inside `window`,
// integrated over each bin: request nanoseconds. Leaves it empty when the demand is.
void AddInFlight(const Demand& demand, Interval window, TimelineSummary* t);

// The requests in flight during [steady.start_ns, steady.end_ns): rate, latency, concurrency, and
// the requests running per step where `steps` (the steady steps' spans) are given.
Serving SummariseServing(const Demand& demand, Interval steady, std::span<const Interval> steps);

// Adds the serving figures of one part of a run to those of the others: parts side by side
// (`concurrent`: ranks of a job, whose rates and requests in flight add) or one after the other
// (a sampled collection's windows, weighted by their steady spans; the spans add up in
// *sum_span_ns). Percentiles of parts do not merge exactly: p50 and p90 become the
// request-weighted means of the parts', p99 the larger.
void AddServing(const Serving& part, int64_t part_span_ns, bool concurrent, Serving* sum,
                int64_t* sum_span_ns);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_SERVING_H_
