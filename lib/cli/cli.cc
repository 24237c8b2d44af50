#include "cli/cli.h"

#include <unistd.h>

#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/analyze.h"
#include "cli/diff_command.h"
#include "cli/progress_bar.h"
#include "cli/run_command.h"
#include "core/output_file.h"
#include "core/terminal.h"
#include "core/text_safety.h"
#include "core/version.h"
#include "gpuidle/analyze.h"
#include "gpuidle/cli.h"
#include "gpuidle/settings.h"
#include "report/writer.h"
#include "settings/option_table.h"

namespace gpuidle::internal {
namespace {

constexpr char kUsageHead[] = R"(usage: gpuidle <command> [options]

Tells why your GPU was idle: every idle gap of every GPU is data-starved, launch-bound or
sync-bound, with the evidence and the fix.

commands:
  analyze TRACE...   analyse PyTorch profiler traces (torch.profiler export_chrome_trace,
                     .json or .json.gz); several files are the ranks of one job, and
                     gpuidle's JSON reports merge like traces (analyze report.*.json)
  diff BEFORE AFTER  what changed between two runs (traces or reports): per cause, per step
                     and in step time, with a verdict ("the fix worked"); for the ranks of a
                     job, diff BEFORE... -- AFTER...
  run [options] -- COMMAND [ARGS...]
                     run a program with gpuidle loaded into it (CUDA_INJECTION64_PATH); it
                     reports why its GPUs were idle when it exits (docs/INJECTION.md)
  version            print the version
  help               print this help
)";

constexpr char kUsageTail[] = R"(
exit codes: 0 ok, 2 bad command line, 3 unreadable trace, 4 report not written,
  5 libgpuidle.so not found (set GPUIDLE_LIBRARY); otherwise run exits with the program's
  status: 128+N if signal N killed it, 126 if it cannot be executed, 127 if not found
)";

// The flags of `gpuidle analyze` that are no setting of a collection (no GPUIDLE_* variable):
// where this one command writes, and how much it says.
struct CommandFlag {
  const char* flag;
  const char* help;
};
constexpr CommandFlag kAnalyzeFlags[] = {
    {"--out PATH",
     "write the report to PATH (format from --format, else from the extension: .json is JSON, "
     ".html or .htm HTML; a .gz name is compressed); the text summary still goes to stdout. An "
     "existing file is not replaced"},
    {"--overwrite",
     "let --out replace an existing regular file (never a link, a device, a read-only file or "
     "an input trace)"},
    {"--quiet", "print nothing on stdout"},
};

// The usage text: the commands, then each command's options from the option table
// (settings/option_table.h), so that the defaults and ranges it shows are the ones applied.
const std::string& Usage() {
  static const std::string* usage = [] {
    std::string text = kUsageHead;
    text += "\nanalyze options:\n";
    for (const CommandFlag& f : kAnalyzeFlags) text += UsageLine(f.flag, f.help);
    text += SettingUsageLines(kSettingAnalyzeFlag);
    text += DiffUsage();
    text +=
        "\nrun options (each sets a GPUIDLE_* variable for the program, overriding the "
        "environment):\n";
    text += SettingUsageLines(kSettingRunFlag);
    text += kUsageTail;
    return new std::string(std::move(text));
  }();
  return *usage;
}

// The descriptor behind a stream RunCli was given: only the process's own standard streams can
// be terminals (a test's or a binding's string stream is none).
int FdOf(const std::ostream& s) {
  if (&s == &std::cout) return STDOUT_FILENO;
  if (&s == &std::cerr) return STDERR_FILENO;
  return -1;
}

int Analyze(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ProfilerOptions settings;  // only the analysis part and the format are used
  std::vector<std::string> traces;
  std::optional<std::string> format, out_path;
  bool quiet = false, overwrite = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const SettingSpec* setting = a == "--out" ? nullptr : FindSettingByFlag(a);
    const bool takes_setting =
        setting != nullptr && (setting->front_ends & kSettingAnalyzeFlag) != 0;
    if (takes_setting && setting->flag_value == nullptr) {  // a switch: --as-recorded
      if (absl::Status s = setting->apply(setting->flag_sets, &settings); !s.ok()) {
        return UsageError(err, absl::StrCat(a, ": ", s.message()));
      }
    } else if (a == "--out" || takes_setting) {
      if (i + 1 >= args.size()) return UsageError(err, absl::StrCat(a, " needs a value"));
      const std::string& v = args[++i];
      if (v.empty()) return UsageError(err, absl::StrCat(a, " needs a non-empty value"));
      if (a == "--out") {
        out_path = v;
        continue;
      }
      // The rules of `gpuidle run` and the GPUIDLE_* variables, so that a value is good or bad
      // the same way everywhere.
      if (absl::Status s = setting->apply(v, &settings); !s.ok()) {
        return UsageError(err, absl::StrCat(a, " ", QuoteForMessage(v), ": ", s.message()));
      }
      if (a == "--format") format = settings.report_format;
    } else if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--overwrite") {
      overwrite = true;
    } else if (a == "--help" || a == "-h") {
      out << Usage();
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

  // A progress bar for a long read, on a terminal only (core/terminal.h, cli/progress_bar.h).
  std::optional<ProgressBar> bar;
  if (!quiet && FdOf(err) >= 0 && IsTerminal(FdOf(err))) bar.emplace(err, FileSizes(traces));
  FileProgress progress;
  if (bar) progress = [&](size_t file, uint64_t bytes) { bar->Update(file, bytes); };
  absl::StatusOr<Report> report = AnalyzeTraceFilesWithProgress(traces, options, progress);
  if (bar) bar->Finish();
  // Colour for the summary on a terminal's standard output (GPUIDLE_COLOR, NO_COLOR...).
  const bool color = UseColor(ParseColorWhen(settings.color).value_or(ColorWhen::kAuto), FdOf(out));
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
    if (!quiet) out << *FormatText(*report, color);
    if (!quiet) out << "\nreport written to " << Printable(*out_path) << "\n";
    return kExitOk;
  }
  if (quiet) return kExitOk;
  const std::string chosen = format.value_or("text");
  out << (chosen == "text" ? *FormatText(*report, color) : *FormatReport(*report, chosen));
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

absl::string_view CliUsage() { return Usage(); }

int UsageError(std::ostream& err, absl::string_view problem) {
  err << "gpuidle: " << Printable(problem) << "\n(run \"gpuidle help\" for usage)\n";
  return kExitUsage;
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << Usage();
    return kExitUsage;
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "analyze") return Analyze(rest, out, err);
  if (command == "run") return RunCommand(rest, out, err);
  if (command == "diff") return DiffCommand(rest, out, err);
  if (command == "version" || command == "--version") {
    out << "gpuidle " << kVersion << "\n";
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    out << Usage();
    return kExitOk;
  }
  return UsageError(err, absl::StrCat("unknown command \"", ForMessage(command), "\""));
}

}  // namespace gpuidle::internal

namespace gpuidle {

int RunCommandLine(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return internal::RunCli(args, out, err);
}

const char* Version() { return internal::kVersion; }

}  // namespace gpuidle
