#include "cli/cli.h"

#include <unistd.h>

#include <iostream>
#include <optional>

#include "absl/strings/match.h"
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
                     .json or .json.gz, or a tensorboard_trace_handler directory); several
                     files are the ranks of one job, and gpuidle's JSON reports merge like
                     traces (analyze report.*.json)
  diff BEFORE AFTER  what changed between two runs (traces or reports): per cause, per step
                     and in step time, with a verdict ("the fix worked"); for the ranks of a
                     job, diff BEFORE... -- AFTER...
  run [options] -- COMMAND [ARGS...]
                     run a program with gpuidle loaded into it (CUDA_INJECTION64_PATH); it
                     reports why its GPUs were idle when it exits (docs/INJECTION.md)
  version            print the version
  help [COMMAND]     print this help, or a command's own (gpuidle COMMAND --help too)

A value follows its option or an "=": --out r.json, --out=r.json (-o r.json).
)";

constexpr char kUsageTail[] = R"(
exit codes: 0 ok, 2 bad command line, 3 unreadable trace, 4 report not written,
  5 libgpuidle.so not found (set GPUIDLE_LIBRARY); otherwise run exits with the program's
  status: 128+N if signal N killed it, 126 if it cannot be executed, 127 if not found
)";

constexpr char kAnalyzeHead[] = R"(usage: gpuidle analyze [options] TRACE...

Tells why the GPUs of a recorded run were idle. A TRACE is a PyTorch profiler (Kineto) trace
(export_chrome_trace) or a gpuidle trace, .json or .json.gz; several are the ranks of one job.
gpuidle's JSON reports merge like traces (analyze report.*.json). A directory written by
torch.profiler's tensorboard_trace_handler is one job: the newest trace of each worker is taken
(stderr says which; docs/TRACE_INPUTS.md). A value follows its option or an "=" (--out r.json,
--out=r.json).
)";

constexpr char kAnalyzeTail[] = R"(
exit codes: 0 ok, 2 bad command line, 3 unreadable trace, 4 report or trace not written
)";

// The flags of `gpuidle analyze` that are no setting of a collection (no GPUIDLE_* variable):
// where this one command writes, and how much it says.
struct CommandFlag {
  const char* flag;
  const char* help;
};
constexpr CommandFlag kAnalyzeOutputFlags[] = {
    {"-o, --out PATH",
     "write the report to PATH (format from --format, else from the extension: .json is JSON, "
     ".html or .htm HTML; a .gz name is compressed); the text summary still goes to stdout. An "
     "existing file is not replaced"},
    {"--trace PATH",
     "also write a gpuidle trace to PATH: the timeline with every idle gap drawn by its cause, "
     "for Perfetto UI (docs/TRACE_FORMAT.md). Several inputs write one each, PATH with the "
     "input's position before the extension (t.0.json, t.1.json). An existing file is not "
     "replaced"},
    {"--overwrite",
     "let --out and --trace replace an existing regular file (never a link, a device, a "
     "read-only file or an input trace)"},
};
constexpr CommandFlag kAnalyzeFlags[] = {
    {"--quiet, -q", "print nothing on stdout, and no progress or note on stderr"},
};

// The options of `gpuidle analyze`: its outputs, then its other flags and the settings of the
// option table (settings/option_table.h), so that the defaults and ranges shown are the ones
// applied.
std::string AnalyzeOptionsUsage() {
  std::string text = "\nanalyze outputs:\n";
  for (const CommandFlag& f : kAnalyzeOutputFlags) text += UsageLine(f.flag, f.help);
  text += "\nanalyze options:\n";
  for (const CommandFlag& f : kAnalyzeFlags) text += UsageLine(f.flag, f.help);
  text += SettingUsageLines(kSettingAnalyzeFlag);
  return text;
}

// The usage text: the commands, then each command's options.
const std::string& Usage() {
  static const std::string* usage = [] {
    std::string text = kUsageHead;
    text += AnalyzeOptionsUsage();
    text += DiffUsage();
    text += RunOptionsUsage();
    text += kUsageTail;
    return new std::string(std::move(text));
  }();
  return *usage;
}

std::string AnalyzeUsage() {
  return absl::StrCat(kAnalyzeHead, AnalyzeOptionsUsage(), kAnalyzeTail);
}

std::string DiffCommandUsage() {
  return absl::StrCat(
      "usage: gpuidle diff [options] BEFORE AFTER\n"
      "       gpuidle diff [options] BEFORE... -- AFTER...\n\n"
      "What changed between two runs: per cause, per step and in step time, with a verdict (\"the\n"
      "fix worked\"). Each side is what analyze takes: traces, gpuidle JSON reports or a\n"
      "tensorboard_trace_handler directory; several files a side are the ranks of one job. A\n"
      "value follows its option or an \"=\" (--out d.json, --out=d.json; -o is --out).\n",
      DiffUsage(),
      "  and the analysis thresholds of analyze (gpuidle analyze --help), applied to the traces\n"
      "  of both sides\n",
      "\nexit codes: 0 ok (a regression too: the verdict says it), 2 bad command line,\n"
      "  3 unreadable input, 4 diff not written\n");
}

// Whether `flag` takes a value on `command`'s command line: then "--flag=VALUE" is
// "--flag VALUE".
bool TakesValue(absl::string_view command, absl::string_view flag) {
  if (flag == "--out") return true;
  if (command == "analyze" && flag == "--trace") return true;
  if (command == "diff" && flag == "--format") return true;
  const SettingSpec* s = FindSettingByFlag(flag);
  const unsigned front_end = command == "run" ? kSettingRunFlag : kSettingAnalyzeFlag;
  return s != nullptr && s->flag_value != nullptr && (s->front_ends & front_end) != 0;
}

// Whether `flag` is a switch of `command` (it takes no value).
bool IsSwitch(absl::string_view command, absl::string_view flag) {
  if (flag == "--quiet" || flag == "--help") return true;
  if (command != "run" && flag == "--overwrite") return true;
  const SettingSpec* s = FindSettingByFlag(flag);
  const unsigned front_end = command == "run" ? kSettingRunFlag : kSettingAnalyzeFlag;
  return s != nullptr && s->flag_value == nullptr && (s->front_ends & front_end) != 0;
}

// The arguments of `command` with each "--flag=VALUE" of a flag that takes a value split in two,
// and (for diff and run, whose parsers know only --out) -o spelled --out, so that each command's
// parser sees one form. run's arguments from its command on are left as they are. Empty, with
// *problem set, for a value given to a switch.
std::vector<std::string> SplitFlagValues(absl::string_view command,
                                         const std::vector<std::string>& args,
                                         std::string* problem) {
  std::vector<std::string> out;
  out.reserve(args.size() + 2);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool option = a.size() > 1 && a[0] == '-';
    if (command == "run" && (a == "--" || !option)) {  // the command and its arguments
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const size_t eq = a.find('=');
    if (absl::StartsWith(a, "--") && eq != std::string::npos) {
      const std::string flag = a.substr(0, eq);
      if (TakesValue(command, flag)) {
        out.push_back(flag);
        out.push_back(a.substr(eq + 1));
        continue;
      }
      if (IsSwitch(command, flag)) {
        *problem = absl::StrCat(flag, " takes no value (", ForMessage(a), ")");
        return {};
      }
      out.push_back(a);  // the command's parser says what is wrong with it
      continue;
    }
    const bool short_out = a == "-o" && command != "analyze";
    out.push_back(short_out ? "--out" : a);
    // A value given apart is the value, whatever it looks like ("--out --x=1.json").
    if ((short_out || a == "-o" || TakesValue(command, a)) && i + 1 < args.size()) {
      out.push_back(args[++i]);
    }
  }
  return out;
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
  std::vector<std::string> inputs;
  std::optional<std::string> format, out_path, trace_path;
  bool quiet = false, overwrite = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool own_value = a == "--out" || a == "-o" || a == "--trace";
    const SettingSpec* setting = own_value ? nullptr : FindSettingByFlag(a);
    const bool takes_setting =
        setting != nullptr && (setting->front_ends & kSettingAnalyzeFlag) != 0;
    if (takes_setting && setting->flag_value == nullptr) {  // a switch: --as-recorded
      if (absl::Status s = setting->apply(setting->flag_sets, &settings); !s.ok()) {
        return UsageError(err, absl::StrCat(a, ": ", s.message()));
      }
    } else if (own_value || takes_setting) {
      if (i + 1 >= args.size()) return UsageError(err, absl::StrCat(a, " needs a value"));
      const std::string& v = args[++i];
      if (v.empty()) return UsageError(err, absl::StrCat(a, " needs a non-empty value"));
      if (a == "--out" || a == "-o") {
        out_path = v;
        continue;
      }
      if (a == "--trace") {
        trace_path = v;
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
      out << AnalyzeUsage();
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError(err, absl::StrCat("unknown option ", ForMessage(a)));
    } else {
      inputs.push_back(a);
    }
  }
  const AnalysisOptions& options = settings.analysis;
  if (inputs.empty()) return UsageError(err, "analyze needs at least one trace file");
  if (format && !WriterForFormat(*format).ok()) {
    return UsageError(err, WriterForFormat(*format).status().message());
  }
  if (out_path && trace_path && *out_path == *trace_path) {
    return UsageError(err, absl::StrCat("--out and --trace name one file, ", ForMessage(*out_path),
                                        ": give each its own"));
  }

  // Directories of torch.profiler traces become their files; what was taken is said once.
  absl::StatusOr<ExpandedInputs> expanded = ExpandTraceDirectories(inputs);
  if (!expanded.ok()) {
    err << "gpuidle: " << Printable(expanded.status().message()) << "\n";
    return ExitCodeForAnalysis(expanded.status());
  }
  const std::vector<std::string>& traces = expanded->paths;
  if (!quiet) {
    for (const std::string& note : expanded->notes) err << "gpuidle: " << Printable(note) << "\n";
  }

  // A progress bar for a long read, on a terminal only (core/terminal.h, cli/progress_bar.h).
  std::optional<ProgressBar> bar;
  if (!quiet && FdOf(err) >= 0 && IsTerminal(FdOf(err))) bar.emplace(err, FileSizes(traces));
  FileProgress progress;
  if (bar) progress = [&](size_t file, uint64_t bytes) { bar->Update(file, bytes); };
  // With --trace the timelines are kept for the trace (its gaps from the pass that made the
  // report); without, the analysis drops them as it goes.
  std::optional<AnalyzedTimelines> analyzed;
  std::optional<Report> plain;
  absl::Status failed;
  if (trace_path) {
    absl::StatusOr<AnalyzedTimelines> a = AnalyzeTraceFilesForTraces(traces, options, progress);
    if (a.ok()) analyzed = *std::move(a);
    failed = a.status();
  } else {
    absl::StatusOr<Report> r = AnalyzeTraceFilesWithProgress(traces, options, progress);
    if (r.ok()) plain = *std::move(r);
    failed = r.status();
  }
  if (bar) bar->Finish();
  // Colour for the summary on a terminal's standard output (GPUIDLE_COLOR, NO_COLOR...).
  const bool color = UseColor(ParseColorWhen(settings.color).value_or(ColorWhen::kAuto), FdOf(out));
  if (!failed.ok()) {
    err << "gpuidle: " << Printable(failed.message()) << "\n";
    return ExitCodeForAnalysis(failed);
  }
  const Report* report = analyzed ? &analyzed->report : &*plain;
  const auto write_failed = [&](const absl::Status& s) {
    err << "gpuidle: " << Printable(s.message())
        << (ReplaceableIfAsked(s) ? " (--overwrite replaces it)" : "") << "\n";
    return kExitBadOutput;
  };
  if (out_path) {
    SaveOptions save;
    save.format = format.value_or("");
    save.overwrite = overwrite;
    if (absl::Status s = SaveReport(*report, *out_path, save); !s.ok()) return write_failed(s);
  }
  // Where the lines naming the files written go: after the summary on stdout, or on stderr
  // where stdout is the report itself (JSON, HTML).
  const bool summary_on_stdout = out_path || format.value_or("text") == "text";
  std::vector<std::string> traces_written;
  if (trace_path) {
    SaveOptions save;
    save.overwrite = overwrite;
    const absl::Status s = SaveGpuidleTraces(
        *analyzed, *trace_path, save, [&](const std::string& p) { traces_written.push_back(p); });
    if (!s.ok()) {
      if (!quiet && out_path) err << "gpuidle: report written to " << Printable(*out_path) << "\n";
      for (const std::string& p : traces_written) {
        if (!quiet) err << "gpuidle: trace written to " << Printable(p) << "\n";
      }
      return write_failed(s);
    }
  }
  if (quiet) return kExitOk;
  if (summary_on_stdout) {
    out << *FormatText(*report, color);
    if (out_path || !traces_written.empty()) out << "\n";
    if (out_path) out << "report written to " << Printable(*out_path) << "\n";
    for (const std::string& p : traces_written) out << "trace written to " << Printable(p) << "\n";
  } else {
    out << *FormatReport(*report, *format);
    for (const std::string& p : traces_written) {
      err << "gpuidle: trace written to " << Printable(p) << "\n";
    }
  }
  if (out_path) return kExitOk;
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

int ExitCodeForAnalysis(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnavailable:
      return kExitBadInput;
    default:
      return kExitInternal;
  }
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << Usage();
    return kExitUsage;
  }
  const std::string& command = args[0];
  if (command == "analyze" || command == "run" || command == "diff") {
    std::string problem;
    const std::vector<std::string> rest =
        SplitFlagValues(command, std::vector<std::string>(args.begin() + 1, args.end()), &problem);
    if (!problem.empty()) return UsageError(err, problem);
    if (command == "analyze") return Analyze(rest, out, err);
    if (command == "run") return RunCommand(rest, out, err);
    // diff's own usage (the diff command prints the whole one).
    for (const std::string& a : rest) {
      if (a == "--help" || a == "-h") {
        out << DiffCommandUsage();
        return kExitOk;
      }
    }
    return DiffCommand(rest, out, err);
  }
  if (command == "version" || command == "--version") {
    out << "gpuidle " << kVersion << "\n";
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    const std::string topic = args.size() > 1 ? args[1] : "";
    if (topic == "analyze") {
      out << AnalyzeUsage();
    } else if (topic == "run") {
      out << RunUsage();
    } else if (topic == "diff") {
      out << DiffCommandUsage();
    } else if (topic.empty()) {
      out << Usage();
    } else {
      return UsageError(err, absl::StrCat("no help for \"", ForMessage(topic),
                                          "\": the commands are analyze, diff and run"));
    }
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
