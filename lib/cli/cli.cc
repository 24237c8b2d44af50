#include "cli/cli.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cli/run_command.h"
#include "core/version.h"
#include "gpuidle/analyze.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

constexpr char kUsage[] = R"(usage: gpuidle <command> [options]

Tells why your GPU was idle: every idle gap of every GPU is data-starved, launch-bound or
sync-bound, with the evidence and the fix.

commands:
  analyze TRACE...   analyse PyTorch profiler traces (torch.profiler export_chrome_trace,
                     .json or .json.gz); several files are the ranks of one job
  run [options] -- COMMAND [ARGS...]
                     run a program with gpuidle loaded into it (CUDA_INJECTION64_PATH); it
                     reports why its GPUs were idle when it exits (docs/INJECTION.md)
  version            print the version
  help               print this help

analyze options:
  --format FMT           text (default) or json
  --out PATH             write the report to PATH (format from --format, else from the
                         extension: .json is JSON); the text summary still goes to stdout
  --quiet                print nothing on stdout
  --launch-gap-max-us N  host stretches between CUDA calls shorter than N us count as launch
                         overhead, longer ones as host work (default 1000)
  --dispatch-latency-max-us N
                         queued work that waits longer than N us with no cause in the
                         trace is unattributed, not kernel_gap (default 100)
  --data-range TEXT      host ranges whose name contains TEXT are data waits (repeatable;
                         adds to the defaults)
  --max-gaps N           longest gaps kept in the report (default 50)
  --skip-steps N         leave out the first N steps (warm-up: start-up costs that are not
                         the program's, such as a profiler's); the window begins at step N+1

run options (each sets a GPUIDLE_* variable for the program, overriding the environment):
  --out PATH             write the report to PATH when the program exits; %p pid, %r rank,
                         %h host, %% percent sign; an existing file is never replaced (the
                         pid is added to the name instead)
  --format FMT           text or json (default: from the --out extension)
  --trace PATH           write the recorded timeline to PATH (same placeholders)
  --quiet                no summary on standard error when the program exits
  --no-python            leave Python programs alone (GPUIDLE_PYTHON=0): no DataLoader
                         marks, call sites, optimizer steps or host stacks from Python
  --host-sample-ms N     sample the Python stacks of launching threads away from CUDA every
                         N ms (default 5; 0 = off)
  --launch-gap-max-us N, --dispatch-latency-max-us N, --data-range TEXT, --max-gaps N,
  --skip-steps N         as for analyze (N may have decimals; 0 is allowed)
  --max-records N        stop recording after N records (default 20000000)
  --buffer-mb N          CUPTI buffer memory in MiB, 1 to 4096 (default 64)

exit codes: 0 ok, 2 bad command line, 3 unreadable trace, 4 report not written,
  5 libgpuidle.so not found (set GPUIDLE_LIBRARY); otherwise run exits with the program's
  status: 128+N if signal N killed it, 126 if it cannot be executed, 127 if not found
)";

int Usage(std::ostream& err, absl::string_view problem) {
  err << "gpuidle: " << problem << "\n(run \"gpuidle help\" for usage)\n";
  return kExitUsage;
}

int Analyze(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  AnalysisOptions options;
  std::vector<std::string> traces;
  std::optional<std::string> format, out_path;
  bool quiet = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--format" || a == "--out" || a == "--launch-gap-max-us" || a == "--data-range" ||
        a == "--max-gaps" || a == "--dispatch-latency-max-us" || a == "--skip-steps") {
      if (i + 1 >= args.size()) return Usage(err, absl::StrCat(a, " needs a value"));
      const std::string& v = args[++i];
      if (a == "--format") {
        format = v;
      } else if (a == "--out") {
        out_path = v;
      } else if (a == "--data-range") {
        options.data_range_patterns.push_back(v);
      } else {
        int64_t n = 0;
        if (!absl::SimpleAtoi(v, &n) || n <= 0) {
          return Usage(err, absl::StrCat(a, " needs a positive integer, not \"", v, "\""));
        }
        if (a == "--max-gaps") {
          options.max_gap_records = static_cast<int>(std::min<int64_t>(n, 1'000'000));
        } else if (a == "--skip-steps") {
          options.skip_steps = static_cast<int>(std::min<int64_t>(n, 1'000'000));
        } else {
          if (n > 3'600'000'000) return Usage(err, absl::StrCat(a, " is too large"));
          (a == "--launch-gap-max-us" ? options.launch_gap_max_ns
                                      : options.dispatch_latency_max_ns) = n * 1000;
        }
      }
    } else if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--help" || a == "-h") {
      out << kUsage;
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return Usage(err, absl::StrCat("unknown option ", a));
    } else {
      traces.push_back(a);
    }
  }
  if (traces.empty()) return Usage(err, "analyze needs at least one trace file");
  if (format && !WriterForFormat(*format).ok()) {
    return Usage(err, WriterForFormat(*format).status().message());
  }

  absl::StatusOr<Report> report = AnalyzeTraceFiles(traces, options);
  if (!report.ok()) {
    err << "gpuidle: " << report.status().message() << "\n";
    return report.status().code() == absl::StatusCode::kInvalidArgument ||
                   report.status().code() == absl::StatusCode::kNotFound ||
                   report.status().code() == absl::StatusCode::kDataLoss ||
                   report.status().code() == absl::StatusCode::kPermissionDenied ||
                   report.status().code() == absl::StatusCode::kFailedPrecondition ||
                   report.status().code() == absl::StatusCode::kUnavailable
               ? kExitBadInput
               : kExitInternal;
  }
  if (out_path) {
    if (absl::Status s = SaveReport(*report, *out_path, format.value_or(""), options); !s.ok()) {
      err << "gpuidle: " << s.message() << "\n";
      return kExitBadOutput;
    }
    if (!quiet) out << *FormatReport(*report, "text", options);
    if (!quiet) out << "\nreport written to " << *out_path << "\n";
    return kExitOk;
  }
  if (quiet) return kExitOk;
  out << *FormatReport(*report, format.value_or("text"), options);
  // Standard output is the report here: one that could not be written (a full disk, a
  // closed file) is not a success.
  out.flush();
  if (!out) {
    err << "gpuidle: cannot write the report to standard output\n";
    return kExitBadOutput;
  }
  return kExitOk;
}

}  // namespace

absl::string_view CliUsage() { return kUsage; }

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << kUsage;
    return kExitUsage;
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "analyze") return Analyze(rest, out, err);
  if (command == "run") return RunCommand(rest, out, err);
  if (command == "version" || command == "--version") {
    out << "gpuidle " << kVersion << "\n";
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    out << kUsage;
    return kExitOk;
  }
  return Usage(err, absl::StrCat("unknown command \"", command, "\""));
}

}  // namespace gpuidle::internal
