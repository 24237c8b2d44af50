#include "testing/subprocess.h"

#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

extern char** environ;

namespace gpuidle::testing {
namespace {

// The shared sanitizer runtime this test runs with (a GPUIDLE_SANITIZE build), or "".
std::string SanitizerRuntime() {
  std::string runtime;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const absl::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (absl::StrContains(name, "/libasan.so") || absl::StrContains(name, "/libtsan.so")) {
          *static_cast<std::string*>(data) = std::string(name);
          return 1;
        }
        return 0;
      },
      &runtime);
  return runtime;
}

}  // namespace

std::vector<std::string> CleanEnvironment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (absl::StartsWith(entry, "GPUIDLE_") || absl::StartsWith(entry, "CUDA_INJECTION64_PATH=") ||
        absl::StartsWith(entry, "NVTX_INJECTION64_PATH=") ||
        absl::StartsWith(entry, "LD_PRELOAD=")) {
      continue;
    }
    env.push_back(entry);
  }
  for (const auto& [name, value] : extra) {
    // libgpuidle.so of a sanitizer build needs the sanitizer's runtime loaded before it, and an
    // uninstrumented program (sh, python3) does not bring it: it goes first on LD_PRELOAD.
    static const std::string runtime = SanitizerRuntime();
    if (name == "LD_PRELOAD" && !runtime.empty() && !value.empty()) {
      env.push_back(absl::StrCat(name, "=", runtime, ":", value));
      continue;
    }
    env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

pid_t StartProcess(const TempDir& dir, const ProcessLaunch& launch) {
  std::vector<std::string> args = launch.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = CleanEnvironment(launch.env);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  const std::string out = dir.Path("process.stdout"), err = dir.Path("process.stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, launch.stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!launch.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, launch.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(error, 0) << "cannot start " << launch.argv[0];
  return error == 0 ? pid : -1;
}

ProcessResult FinishProcess(const TempDir& dir, pid_t pid) {
  ProcessResult p;
  int status = 0;
  if (pid <= 0 || ::waitpid(pid, &status, 0) != pid) return p;
  p.code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  p.out = ReadFileOrDie(dir.Path("process.stdout"));
  p.err = ReadFileOrDie(dir.Path("process.stderr"));
  return p;
}

}  // namespace gpuidle::testing
