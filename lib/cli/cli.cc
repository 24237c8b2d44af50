#include "cli/cli.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cli/run_command.h"
#include "core/output_file.h"
#include "core/text_safety.h"
#include "core/version.h"
#include "gpuidle/analyze.h"
#include "report/writer.h"
#include "session/profiler_options.h"

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
                         extension: .json is JSON; a .gz name is compressed); the text
                         summary still goes to stdout. An existing file is not replaced
  --overwrite            let --out replace an existing regular file (never a link, a
                         device, a read-only file or an input trace)
  --quiet                print nothing on stdout
  --launch-gap-max-us N  host stretches between CUDA calls shorter than N us count as launch
                         overhead, longer ones as host work (default 1000; N may have
                         decimals, here and for --dispatch-latency-max-us)
  --dispatch-latency-max-us N
                         queued work that waits longer than N us with no cause in the
                         trace is unattributed, not kernel_gap (default 100)
  --data-range TEXT      host ranges whose name contains TEXT are data waits (repeatable;
                         adds to the defaults)
  --max-gaps N           longest gaps kept in the report (default 50; 0 to 1000000)
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
  --skip-steps N         as for analyze
  --max-records N        stop recording after N records (default 20000000)
  --buffer-mb N          CUPTI buffer memory in MiB, 1 to 4096 (default 64)

exit codes: 0 ok, 2 bad command line, 3 unreadable trace, 4 report not written,
  5 libgpuidle.so not found (set GPUIDLE_LIBRARY); otherwise run exits with the program's
  status: 128+N if signal N killed it, 126 if it cannot be executed, 127 if not found
)";

// Each flag is the GPUIDLE_* variable of the same meaning: the injected library reads only the
// environment. `gpuidle analyze` takes the analysis ones and --format.
struct Flag {
  const char* flag;
  const char* variable;
};
constexpr Flag kFlags[] = {
    {"--out", "GPUIDLE_OUT"},
    {"--format", "GPUIDLE_FORMAT"},
    {"--trace", "GPUIDLE_TRACE"},
    {"--launch-gap-max-us", "GPUIDLE_LAUNCH_GAP_MAX_US"},
    {"--dispatch-latency-max-us", "GPUIDLE_DISPATCH_LATENCY_MAX_US"},
    {"--data-range", "GPUIDLE_DATA_RANGE"},
    {"--max-gaps", "GPUIDLE_MAX_GAPS"},
    {"--skip-steps", "GPUIDLE_SKIP_STEPS"},
    {"--max-records", "GPUIDLE_MAX_RECORDS"},
    {"--buffer-mb", "GPUIDLE_BUFFER_MB"},
    {"--host-sample-ms", "GPUIDLE_HOST_SAMPLE_MS"},
};

int Analyze(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ProfilerOptions settings;  // only the analysis part and the format are used
  std::vector<std::string> traces;
  std::optional<std::string> format, out_path;
  bool quiet = false, overwrite = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--out" || a == "--format" || a == "--launch-gap-max-us" || a == "--data-range" ||
        a == "--max-gaps" || a == "--dispatch-latency-max-us" || a == "--skip-steps") {
      if (i + 1 >= args.size()) return UsageError(err, absl::StrCat(a, " needs a value"));
      const std::string& v = args[++i];
      if (v.empty()) return UsageError(err, absl::StrCat(a, " needs a non-empty value"));
      if (a == "--out") {
        out_path = v;
        continue;
      }
      // The rules of `gpuidle run` and the GPUIDLE_* variables, so that a value is good or bad
      // the same way everywhere.
      if (absl::Status s = ApplyProfilerVariable(VariableOfFlag(a), v, &settings); !s.ok()) {
        return UsageError(err, absl::StrCat(a, " ", QuoteForMessage(v), ": ", s.message()));
      }
      if (a == "--format") format = settings.report_format;
    } else if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--overwrite") {
      overwrite = true;
    } else if (a == "--help" || a == "-h") {
      out << kUsage;
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError(err, absl::StrCat("unknown option ", ForMessage(a)));
    } else {
      traces.push_back(a);
    }
  }
  const AnalysisOptions& options = settings.analysis;
  if (traces.empty()) return UsageError(err, "analyze needs at least one trace file");
  if (format && !WriterForFormat(*format).ok()) {
    return UsageError(err, WriterForFormat(*format).status().message());
  }

  absl::StatusOr<Report> report = AnalyzeTraceFiles(traces, options);
  if (!report.ok()) {
    err << "gpuidle: " << Printable(report.status().message()) << "\n";
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
    SaveOptions save;
    save.format = format.value_or("");
    save.overwrite = overwrite;
    if (absl::Status s = SaveReport(*report, *out_path, save); !s.ok()) {
      err << "gpuidle: " << Printable(s.message())
          << (ReplaceableIfAsked(s) ? " (--overwrite replaces it)" : "") << "\n";
      return kExitBadOutput;
    }
    if (!quiet) out << *FormatReport(*report, "text");
    if (!quiet) out << "\nreport written to " << Printable(*out_path) << "\n";
    return kExitOk;
  }
  if (quiet) return kExitOk;
  out << *FormatReport(*report, format.value_or("text"));
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

int UsageError(std::ostream& err, absl::string_view problem) {
  err << "gpuidle: " << Printable(problem) << "\n(run \"gpuidle help\" for usage)\n";
  return kExitUsage;
}

const char* VariableOfFlag(absl::string_view flag) {
  for (const Flag& f : kFlags) {
    if (flag == f.flag) return f.variable;
  }
  return nullptr;
}

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
  return UsageError(err, absl::StrCat("unknown command \"", ForMessage(command), "\""));
}

}  // namespace gpuidle::internal
