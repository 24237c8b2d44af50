#include "cli/run_command.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli/cli.h"
#include "collect/collection.h"
#include "collect/cuda_driver.h"
#include "core/same_file.h"
#include "core/text_safety.h"
#include "core/version.h"
#include "settings/environment.h"
#include "settings/option_table.h"
#include "settings/process_tree_warning.h"
#include "settings/python_site.h"

extern char** environ;

namespace gpuidle::internal {
namespace {

constexpr char kCudaInjection[] = "CUDA_INJECTION64_PATH";
constexpr char kNvtxInjection[] = "NVTX_INJECTION64_PATH";

// Debian's multiarch library directory, where GNUInstallDirs puts libraries for the prefix /usr.
#if defined(__x86_64__)
constexpr char kMultiarch[] = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr char kMultiarch[] = "aarch64-linux-gnu";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr char kMultiarch[] = "powerpc64le-linux-gnu";
#else
constexpr char kMultiarch[] = "";
#endif

// The command may change directory before the report is written; a relative output path means
// the directory gpuidle was started in. '%' in that directory is literal, not a placeholder.
std::string AbsoluteOutputPattern(const std::string& pattern) {
  if (pattern.empty() || pattern[0] == '/') return pattern;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return pattern;
  return absl::StrCat(absl::StrReplaceAll(cwd.string(), {{"%", "%%"}}), "/", pattern);
}

bool IsReadableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) == 0;
}

// --- running the child -------------------------------------------------------------------------

// The child to forward SIGTERM/SIGHUP to; 0 when there is none. Lock-free, so the handler may
// read it.
std::atomic<pid_t> forward_to{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

void ForwardSignal(int sig) {
  const int saved_errno = errno;
  const pid_t child = forward_to.load();
  if (child > 0) ::kill(child, sig);
  errno = saved_errno;
}

// Signal dispositions while the child runs, restored afterwards (RunCli also runs in tests).
class ChildSignals {
 public:
  ChildSignals() {
    sigemptyset(&forwarded_);
    sigaddset(&forwarded_, SIGTERM);
    sigaddset(&forwarded_, SIGHUP);
    // Held back until the child's pid is known, then forwarded.
    ::sigprocmask(SIG_BLOCK, &forwarded_, &old_mask_);
    sigemptyset(&child_default_);
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      ::sigaction(kSignals[i], nullptr, &old_action_[i]);
    }
    struct sigaction action {};
    sigemptyset(&action.sa_mask);
    // An inherited SIGCHLD = SIG_IGN would reap the child behind our back (and the command
    // could not wait for its own children).
    action.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &action, nullptr);
    // The terminal sends ^C and ^\ to the whole foreground group: the child gets them itself
    // and gpuidle waits for its exit status. A signal already ignored (a background job, nohup)
    // stays ignored in the child too.
    action.sa_handler = SIG_IGN;
    for (size_t i : {kInt, kQuit}) {
      ::sigaction(kSignals[i], &action, nullptr);
      if (old_action_[i].sa_handler != SIG_IGN) sigaddset(&child_default_, kSignals[i]);
    }
    action.sa_handler = ForwardSignal;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (size_t i : {kTerm, kHup}) {
      if (old_action_[i].sa_handler == SIG_IGN) continue;
      ::sigaction(kSignals[i], &action, nullptr);
      sigaddset(&child_default_, kSignals[i]);
    }
  }
  ~ChildSignals() {
    forward_to.store(0);
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      ::sigaction(kSignals[i], &old_action_[i], nullptr);
    }
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  ChildSignals(const ChildSignals&) = delete;
  ChildSignals& operator=(const ChildSignals&) = delete;

  // What the child starts with: the signal mask gpuidle was started with, default actions.
  const sigset_t& child_mask() const { return old_mask_; }
  const sigset_t& child_default() const { return child_default_; }

  // From now on SIGTERM/SIGHUP go to child (those that came meanwhile too).
  void ForwardTo(pid_t child) {
    forward_to.store(child);
    ::sigprocmask(SIG_UNBLOCK, &forwarded_, nullptr);
  }
  void StopForwarding() { forward_to.store(0); }

 private:
  static constexpr int kSignals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD};
  static constexpr size_t kInt = 0, kQuit = 1, kTerm = 2, kHup = 3;

  sigset_t forwarded_;
  sigset_t old_mask_;
  sigset_t child_default_;
  struct sigaction old_action_[std::size(kSignals)] = {};
};

bool IsElfFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, sizeof(magic)) && std::memcmp(magic,
                                                     "\x7f"
                                                     "ELF",
                                                     4) == 0;
}

// Where execvp would find command: itself if it holds a '/', else the first executable regular
// file of that name on PATH (the name itself if none).
std::string ResolveCommand(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/bin:/usr/bin", ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", command);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return command;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitInternal;
}

// Runs argv with envp; returns the exit code gpuidle passes on.
int Execute(const std::vector<std::string>& args, const std::vector<std::string>& env,
            std::ostream& err) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  err.flush();

  ChildSignals signals;
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  ::posix_spawnattr_setsigmask(&attr, &signals.child_mask());
  ::posix_spawnattr_setsigdefault(&attr, &signals.child_default());
  pid_t child = 0;
  // posix_spawnp reports a failed exec as its result (glibc >= 2.24), like execvp's errno.
  int spawn_error = ::posix_spawnp(&child, argv[0], nullptr, &attr, argv.data(), envp.data());
  if (spawn_error == ENOEXEC) {
    // An executable text file without "#!": shells and execvp run it with /bin/sh.
    std::vector<char*> shell_argv = {const_cast<char*>("/bin/sh")};
    shell_argv.insert(shell_argv.end(), argv.begin(), argv.end());
    const std::string resolved = ResolveCommand(args[0]);
    shell_argv[1] = const_cast<char*>(resolved.c_str());
    spawn_error = ::posix_spawn(&child, "/bin/sh", nullptr, &attr, shell_argv.data(), envp.data());
  }
  ::posix_spawnattr_destroy(&attr);
  if (spawn_error != 0) {
    err << "gpuidle: cannot run " << args[0] << ": " << std::strerror(spawn_error) << "\n";
    return spawn_error == ENOENT ? kExitCommandNotFound : kExitCannotExecute;
  }
  signals.ForwardTo(child);
  // Wait without reaping first: until the zombie is reaped its pid cannot be reused, so a late
  // SIGTERM never reaches a stranger.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) != 0 &&
         errno == EINTR) {
  }
  signals.StopForwarding();
  int status = 0;
  pid_t reaped = 0;
  do {
    reaped = ::waitpid(child, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  if (reaped != child) {
    err << "gpuidle: lost track of " << args[0] << ": " << std::strerror(errno) << "\n";
    return kExitInternal;
  }
  return ExitCodeOf(status);
}

}  // namespace

absl::StatusOr<std::string> FindInjectionLibrary() {
  if (const char* set = std::getenv("GPUIDLE_LIBRARY"); set != nullptr && set[0] != '\0') {
    // CUDA dlopen()s the path: a bare name would be searched for in the system's directories.
    std::error_code ec;
    std::string path = std::filesystem::absolute(set, ec).lexically_normal().string();
    if (ec) path = set;
    if (!IsReadableFile(path)) {
      return absl::NotFoundError(absl::StrCat(
          "GPUIDLE_LIBRARY=", ForMessage(set), ": ",
          ::access(path.c_str(), F_OK) == 0 ? "not a readable file" : std::strerror(ENOENT)));
    }
    // The CUDA driver would fail on anything else only once the command runs.
    if (!IsElfFile(path)) {
      return absl::NotFoundError(absl::StrCat("GPUIDLE_LIBRARY=", ForMessage(set),
                                              ": not a shared library (no ELF header)"));
    }
    return path;
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return absl::NotFoundError(
        "cannot find libgpuidle.so (the location of the gpuidle executable is unknown); set "
        "GPUIDLE_LIBRARY");
  }
  // /proc/self/exe has no symbolic links left, so bin/../lib may be folded lexically.
  const std::filesystem::path prefix = exe.parent_path().parent_path();
  std::vector<std::string> dirs = {(prefix / "lib").string()};
#ifdef GPUIDLE_INSTALL_RELATIVE_LIBDIR
  dirs.push_back((prefix / GPUIDLE_INSTALL_RELATIVE_LIBDIR).lexically_normal().string());
#endif
  if (kMultiarch[0] != '\0') dirs.push_back((prefix / "lib" / kMultiarch).string());
  const absl::string_view version = kVersion;
  // A runtime-only install has the SONAME file but not the development link.
  const std::string names[] = {
      "libgpuidle.so", absl::StrCat("libgpuidle.so.", version.substr(0, version.find('.')))};
  std::vector<std::string> looked_in;
  for (const std::string& dir : dirs) {
    if (std::find(looked_in.begin(), looked_in.end(), dir) != looked_in.end()) continue;
    looked_in.push_back(dir);
    for (const std::string& name : names) {
      const std::string path = absl::StrCat(dir, "/", name);
      if (IsReadableFile(path)) return path;
    }
  }
  return absl::NotFoundError(absl::StrCat("cannot find libgpuidle.so (looked in ",
                                          absl::StrJoin(looked_in, ", "),
                                          "); set GPUIDLE_LIBRARY"));
}

std::string RunOptionsUsage() {
  return absl::StrCat(
      "\nrun options (each sets a GPUIDLE_* variable for the program, overriding the "
      "environment):\n",
      SettingUsageLines(kSettingRunFlag));
}

std::string RunUsage() {
  return absl::StrCat(
      "usage: gpuidle run [options] [--] COMMAND [ARGS...]\n\n"
      "Runs COMMAND with gpuidle loaded into it (CUDA_INJECTION64_PATH) and tells why its GPUs\n"
      "were idle when it exits: a summary on stderr, and the files the options ask for\n"
      "(docs/INJECTION.md). A Python program gets gpuidle's Python layer unchanged. Options come\n"
      "before the command (\"--\" ends them); a value follows its option or an \"=\" (--out "
      "r.json,\n"
      "--out=r.json; -o is --out).\n",
      RunOptionsUsage(),
      "\nexit codes: the command's own status (128+N if signal N killed it, 126 if it cannot be\n"
      "  executed, 127 if not found); 2 bad command line, 5 libgpuidle.so not found (set\n"
      "  GPUIDLE_LIBRARY)\n");
}

int RunCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // Flags become variables; repeated --data-range flags add up. Their values are checked once,
  // with the inherited variables, after the last flag.
  std::map<std::string, std::string> variables;
  std::map<std::string, std::pair<std::string, std::string>> given;  // variable -> (flag, value)
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--help" || a == "-h") {
      out << RunUsage();
      return kExitOk;
    }
    const SettingSpec* setting = FindSettingByFlag(a);
    if (setting == nullptr || (setting->front_ends & kSettingRunFlag) == 0) {
      if (a.size() > 1 && a[0] == '-') {
        return UsageError(err, absl::StrCat("unknown option ", ForMessage(a)));
      }
      break;  // the command
    }
    const char* variable = setting->variable;
    if (setting->flag_value == nullptr) {  // --quiet, --no-python
      variables[variable] = setting->flag_sets;
      given[variable] = {a, setting->flag_sets};
      continue;
    }
    if (i + 1 >= args.size()) return UsageError(err, absl::StrCat(a, " needs a value"));
    std::string value = args[++i];
    // An empty --out or --trace turns that output off; nothing else may be empty.
    const bool is_path = setting->type == SettingType::kPath;
    if (value.empty() && !is_path) {
      return UsageError(err, absl::StrCat(a, " needs a non-empty value"));
    }
    const bool adds_up = setting->type == SettingType::kStrings;
    std::pair<std::string, std::string>& as_given = given[variable];
    as_given = {
        a, adds_up && !as_given.second.empty() ? absl::StrCat(as_given.second, ",", value) : value};
    std::string& slot = variables[variable];
    slot = adds_up && !slot.empty() ? absl::StrCat(slot, ",", value) : value;
  }

  // Switched off: the command runs as if gpuidle were not there, whatever else is set; but a
  // bad flag is still the user's mistake to hear about.
  const DisableSetting disable = ReadDisableVariable(std::getenv("GPUIDLE_DISABLE"));
  // Every value by the rules the injected library applies, once: a flag's named as typed, an
  // inherited variable's as found (the library would otherwise refuse it in the middle of the
  // run).
  const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromVariables(
      [&](const char* name) -> const char* {
        const auto it = variables.find(name);
        if (it != variables.end()) return it->second.c_str();
        return disable.disabled ? nullptr : std::getenv(name);
      },
      [&](const char* name, absl::string_view value, absl::string_view why) {
        const auto it = given.find(name);
        if (it == given.end()) {
          return absl::StrCat(name, "=", ForMessage(value), ": ", why, " (from the environment)");
        }
        return absl::StrCat(it->second.first, " ", QuoteForMessage(it->second.second), ": ", why);
      });
  if (!options.ok()) return UsageError(err, options.status().message());
  // The command may change directory: its output paths are made absolute here.
  for (auto& [variable, value] : variables) {
    const SettingSpec* setting = FindSettingByVariable(variable);
    if (setting != nullptr && setting->type == SettingType::kPath) {
      value = AbsoluteOutputPattern(value);
    }
  }
  const std::vector<std::string> command(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (command.empty())
    return UsageError(err, "run needs a command: gpuidle run [options] -- COMMAND");

  if (disable.disabled) {
    if (!disable.warning.empty()) err << "gpuidle: warning: " << disable.warning << "\n";
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    return Execute(command, env, err);
  }

  const absl::StatusOr<std::string> library = FindInjectionLibrary();
  if (!library.ok()) {
    err << "gpuidle: " << library.status().message() << "\n";
    return kExitNoLibrary;
  }

  std::vector<std::string> env;
  const char* cuda = std::getenv(kCudaInjection);
  if (cuda != nullptr && cuda[0] != '\0' && !SameFile(cuda, *library)) {
    // CUPTI has one owner per process: two tools would both lose data.
    err << "gpuidle: " << kCudaInjection << " is already set to " << cuda
        << " (another tool, such as Nsight Systems); gpuidle steps aside and runs the command "
           "without profiling it\n";
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    return Execute(command, env, err);
  }
  // Without a GPU the driver never loads the library: say so once for the whole process tree
  // (the preloaded library honours the same variable) rather than end without a report.
  // A build without CUPTI (GPUIDLE_WITH_CUPTI=OFF) says that instead.
  const absl::Status gpu = CollectionSupported() ? CheckForNvidiaGpu() : PrepareCollection();
  const bool have_gpu = gpu.ok();
  if (!have_gpu && !ProcessTreeWarned()) {
    err << "gpuidle: warning: " << gpu.message() << "; the command runs without profiling\n";
    variables[kWarnedVariable] = "1";
  }
  variables[kCudaInjection] = *library;
  // The command itself (the process this one starts) still says when it recorded no GPU work;
  // its children that did none stay silent.
  variables["GPUIDLE_RUN_PARENT"] = std::to_string(::getpid());
  // Python programs get gpuidle's Python layer (docs/INJECTION.md, "Python programs"): its
  // sitecustomize.py first on PYTHONPATH, which runs any sitecustomize the program had too.
  if (options->python_integration) {
    const std::string site = PythonSiteDir(*library);
    if (!site.empty()) {
      const char* path = std::getenv("PYTHONPATH");
      variables["PYTHONPATH"] = PrependToSearchPath(path != nullptr ? path : "", site);
    }
  }
  const char* nvtx = std::getenv(kNvtxInjection);
  if (nvtx != nullptr && nvtx[0] != '\0' && !SameFile(nvtx, *library)) {
    err << "gpuidle: " << kNvtxInjection << " is already set to " << nvtx
        << "; NVTX markers go to that tool, not to gpuidle\n";
  } else {
    variables[kNvtxInjection] = *library;
  }
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry = *e;
    const absl::string_view name = entry.substr(0, entry.find('='));
    if (variables.find(std::string(name)) == variables.end()) env.emplace_back(entry);
  }
  for (const auto& [name, value] : variables) env.push_back(absl::StrCat(name, "=", value));
  const int code = Execute(command, env, err);
  // A process ended by SIGTERM, SIGINT, SIGHUP, SIGQUIT or SIGABRT (left at their default
  // actions) wrote its report on the way out (core/termination_signals.h); by another signal
  // (SIGKILL, the OOM killer, a crash) it could not.
  if (have_gpu && options->print_summary && code > 128 && code < 128 + NSIG &&
      code != 128 + SIGPIPE && code != 128 + SIGINT && code != 128 + SIGTERM &&
      code != 128 + SIGHUP && code != 128 + SIGQUIT && code != 128 + SIGABRT) {
    const char* name = ::sigabbrev_np(code - 128);
    err << "gpuidle: the command was killed by signal " << code - 128
        << (name != nullptr ? absl::StrCat(" (SIG", name, ")") : "")
        << ", which leaves no time to write a report; the periodic summary "
           "(--summary-every-s, --summary-file) is what survives such an end\n";
  }
  return code;
}

}  // namespace gpuidle::internal
