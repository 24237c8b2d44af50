// Switches a tracer on and off inside the benchmark process, between timed rounds, so that
// traced and untraced rounds of the same process can be compared (gpuidle_bench_overhead
// --pair). Compiled by the host compiler: the .cu file sees only this plain interface.
#ifndef GPUIDLE_TESTS_BENCHMARKS_OVERHEAD_TRACER_SWITCH_H_
#define GPUIDLE_TESTS_BENCHMARKS_OVERHEAD_TRACER_SWITCH_H_

#include <string>

namespace gpuidle_bench {

// "bare" (libgpuidle_bare_cupti: kernels only) or "gpuidle" (the C++ API, options from the
// GPUIDLE_* variables, no summary). False, with the reason on stderr, if it cannot.
bool KnownTracer(const std::string& name);
bool StartTracer(const std::string& name);
// Stopping gpuidle analyses what it recorded: outside the timed rounds, like starting.
bool StopTracer(const std::string& name);
// After a stop: detaches CUPTI from the process, so that nothing of this tracer stays (gpuidle
// detaches in its stop already). False, with the reason on stderr, if CUPTI stayed attached.
bool DetachTracer(const std::string& name);
// What the tracer recorded so far, for the result line (a tracer that recorded nothing would
// make tracing look free).
long long TracerRecords(const std::string& name);
// gpuidle only: the share of idle time it called launch_bound, in percent (-1: none known). The
// tiny workload is launch-bound throughout, so a collection that lost the launch calls shows.
double TracerLaunchBoundPercent(const std::string& name);

}  // namespace gpuidle_bench

#endif  // GPUIDLE_TESTS_BENCHMARKS_OVERHEAD_TRACER_SWITCH_H_
