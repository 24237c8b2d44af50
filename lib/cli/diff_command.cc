#include "cli/diff_command.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "core/output_file.h"
#include "core/text_safety.h"
#include "gpuidle/analyze.h"
#include "gpuidle/settings.h"
#include "settings/option_table.h"

namespace gpuidle::internal {
namespace {

struct CommandFlag {
  const char* flag;
  const char* help;
};
constexpr CommandFlag kDiffFlags[] = {
    {"--format FMT", "text (the default) or json (schema gpuidle.diff/1)"},
    {"--out PATH",
     "write the diff to PATH (format from --format, else from the extension: .json is JSON; a "
     ".gz name is compressed); the text summary still goes to stdout. An existing file is not "
     "replaced"},
    {"--overwrite",
     "let --out replace an existing regular file (never a link, a device, a read-only file or "
     "an input)"},
    {"--quiet", "print nothing on stdout"},
};

bool IsDiffFormat(absl::string_view f) { return f == "text" || f == "txt" || f == "json"; }

}  // namespace

std::string DiffUsage() {
  std::string text =
      "\ndiff options (and the analysis thresholds of analyze, applied to traces on both "
      "sides):\n";
  for (const CommandFlag& f : kDiffFlags) text += UsageLine(f.flag, f.help);
  return text;
}

int DiffCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ProfilerOptions settings;  // only the analysis part is used
  std::vector<std::string> before, after;
  bool separator = false;
  std::optional<std::string> format, out_path;
  bool quiet = false, overwrite = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const SettingSpec* setting = a == "--out" || a == "--format" ? nullptr : FindSettingByFlag(a);
    const bool takes_setting =
        setting != nullptr && (setting->front_ends & kSettingAnalyzeFlag) != 0;
    if (a == "--out" || a == "--format" || takes_setting) {
      if (i + 1 >= args.size()) return UsageError(err, absl::StrCat(a, " needs a value"));
      const std::string& v = args[++i];
      if (v.empty()) return UsageError(err, absl::StrCat(a, " needs a non-empty value"));
      if (a == "--out") {
        out_path = v;
      } else if (a == "--format") {
        if (!IsDiffFormat(v)) {
          return UsageError(err, absl::StrCat("--format ", QuoteForMessage(v),
                                              ": must be \"text\" or "
                                              "\"json\""));
        }
        format = v;
      } else if (absl::Status s = setting->apply(v, &settings); !s.ok()) {
        return UsageError(err, absl::StrCat(a, " ", QuoteForMessage(v), ": ", s.message()));
      }
    } else if (a == "--") {
      if (separator) return UsageError(err, "diff takes one \"--\" (BEFORE... -- AFTER...)");
      separator = true;
    } else if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--overwrite") {
      overwrite = true;
    } else if (a == "--help" || a == "-h") {
      out << CliUsage();
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError(err, absl::StrCat("unknown option ", ForMessage(a)));
    } else {
      (separator ? after : before).push_back(a);
    }
  }
  if (!separator && before.size() == 2) {
    after.push_back(before.back());
    before.pop_back();
  }
  if (before.empty() || after.empty()) {
    return UsageError(err,
                      "diff needs the run before and the run after: gpuidle diff BEFORE AFTER, "
                      "or for the ranks of a job gpuidle diff BEFORE... -- AFTER...");
  }

  absl::StatusOr<ReportDiff> diff = DiffReportFiles(before, after, settings.analysis);
  if (!diff.ok()) {
    err << "gpuidle: " << Printable(diff.status().message()) << "\n";
    return ExitCodeForAnalysis(diff.status());
  }
  if (out_path) {
    SaveOptions save;
    save.format = format.value_or("");
    save.overwrite = overwrite;
    if (absl::Status s = SaveDiff(*diff, *out_path, save); !s.ok()) {
      err << "gpuidle: " << Printable(s.message())
          << (ReplaceableIfAsked(s) ? " (--overwrite replaces it)" : "") << "\n";
      return kExitBadOutput;
    }
    if (!quiet)
      out << *FormatDiff(*diff, "text") << "\ndiff written to " << Printable(*out_path) << "\n";
    return kExitOk;
  }
  if (quiet) return kExitOk;
  out << *FormatDiff(*diff, format.value_or("text"));
  out.flush();
  if (!out) {
    err << "gpuidle: cannot write the diff to standard output\n";
    return kExitBadOutput;
  }
  return kExitOk;
}

}  // namespace gpuidle::internal
