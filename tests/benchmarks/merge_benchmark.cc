// What merging a job's per-rank reports costs (issue 16: "Merging 64 ranks of a realistic job
// takes under 2 s here, 1024 ranks' reports under 10 s with bounded memory"): N one-process
// reports of a data-parallel job (testing/realistic_rank_reports.h: 600 steps of 8 all-reduces,
// the collective table at its 4096 rows, a row per step, gaps, offenders, eight visible GPUs per
// host, hosts an hour apart with wall-clock priors, one straggler) are written as JSON files by
// gpuidle::FormatReport, then merged the way a user does:
//
//   cli      `gpuidle analyze rank*.json --out merged.json --overwrite` (the CLI binary, a child
//            process; its text summary to /dev/null): wall time, and the child's peak RSS
//            (getrusage of the child)
//   library  gpuidle::AnalyzeTraceFiles(paths) + gpuidle::SaveReport(merged.json), in this
//            process: wall time, and the peak RSS of the round (VmHWM, reset before it through
//            /proc/self/clear_refs)
//   parts    the library's round by part: reading the reports back, MergeRanks, the JSON
//
//   build-speed/bin/merge_benchmark [--ranks 64,1024] [--rounds 5] [--no-prior] [--seq]
//                                   [--host-offset-ns NS] [--steps N] [--kinds K] [--cli PATH]
//                                   [--keep DIR]
//
// --no-prior drops the wall-clock priors (traces without them: every host's offset is then
// found by votes), --seq gives the rows the trace's sequence numbers, --host-offset-ns sets how
// far apart the hosts' clocks are (host h reads h x NS ahead; default an hour and a bit),
// --steps the run's length (default 600: a row per step in each report, up to
// Report::kMaxStepRows; the collective table stays at its 4096 rows), --kinds the collective
// kinds the rows are spread over (default 1; issue 29's worst case: thousands). Every
// merged report must name the straggler and align the hosts' clocks (within 5 us of the truth):
// otherwise the benchmark prints what it got and exits 1. Prints the medians of R rounds, their
// range, the peak RSS and the reports' sizes; the targets are checked and reported (not an exit
// status).
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/rank_merge.h"
#include "gpuidle/analyze.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "ingest/report_reader.h"
#include "rapidjson/document.h"
#include "testing/rank_reports.h"
#include "testing/realistic_rank_reports.h"

namespace {

using gpuidle::Report;
using gpuidle::testing::JobSpec;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "merge_benchmark: FAILED: %s\n", what.c_str());
  std::exit(1);
}

// This process's peak resident set (VmHWM) in kB.
int64_t PeakRssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      int64_t kb = 0;
      std::sscanf(line.c_str(), "VmHWM: %ld", &kb);
      return kb;
    }
  }
  return -1;
}

// Resets VmHWM to the current resident set (Linux 4.0+).
void ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

struct Job {
  JobSpec spec;
  int straggler;
  std::string dir;
  std::vector<std::string> paths;
  std::vector<int64_t> sizes;  // bytes per report file
};

Job WriteJob(int ranks, bool prior, bool seq, std::optional<int64_t> host_offset_ns,
             std::optional<int> steps, int kinds, const std::string& base) {
  Job job;
  // The straggler on a host other than the first (whose clock is the job's).
  job.straggler = ranks * 5 / 8 + 3;
  job.spec = gpuidle::testing::RealisticJob(ranks, job.straggler);
  job.spec.wall_clock_prior = prior;
  job.spec.with_seq = seq;
  if (host_offset_ns) job.spec.host_offset_ns = *host_offset_ns;
  if (steps) job.spec.steps = *steps;
  job.spec.kinds = kinds;
  job.dir = absl::StrCat(base, "/ranks", ranks);
  std::filesystem::remove_all(job.dir);
  std::filesystem::create_directories(job.dir);
  for (int r = 0; r < ranks; ++r) {
    char name[32];
    std::snprintf(name, sizeof(name), "/rank%05d.json", r);
    const std::string path = job.dir + name;
    // As SaveReport writes it (FormatReport), without its fsync of every file.
    const absl::StatusOr<std::string> json =
        gpuidle::FormatReport(gpuidle::testing::RealisticRankReport(job.spec, r), "json");
    if (!json.ok()) Fail(json.status().ToString());
    std::ofstream f(path, std::ios::binary);
    f.write(json->data(), static_cast<std::streamsize>(json->size()));
    f.close();
    if (!f.good()) Fail(absl::StrCat("writing ", path));
    job.paths.push_back(path);
    job.sizes.push_back(static_cast<int64_t>(std::filesystem::file_size(path)));
  }
  return job;
}

// The merged report must name the straggler and put every rank on host 0's clock.
void Check(const Job& job, const Report& r, const std::string& how) {
  const std::string where = absl::StrCat(how, ", ", job.paths.size(), " ranks");
  if (r.straggler_rank != job.straggler) {
    Fail(absl::StrCat(where, ": straggler_rank ",
                      r.straggler_rank ? absl::StrCat(*r.straggler_rank) : "null", ", expected ",
                      job.straggler));
  }
  if (r.ranks.size() != job.paths.size()) {
    Fail(absl::StrCat(where, ": ", r.ranks.size(), " ranks in the merged report"));
  }
  if (r.clock.method != "aligned" || r.clock.residual_ns > 5'000) {
    Fail(absl::StrCat(where, ": clock ", r.clock.method, " residual ", r.clock.residual_ns, " ns"));
  }
  for (const gpuidle::RankReport& rr : r.ranks) {
    const int host = rr.rank / job.spec.ranks_per_host;
    const int64_t want =
        gpuidle::testing::HostClock(job.spec, 0) - gpuidle::testing::HostClock(job.spec, host);
    if (std::abs(rr.clock_offset_ns - want) > 5'000) {
      Fail(absl::StrCat(where, ": rank ", rr.rank, " clock offset ", rr.clock_offset_ns,
                        ", expected ", want));
    }
  }
}

// What Check looks at, from the merged JSON report (rapidjson: ReadReportFile refuses a report
// of more than Report::kMaxStepRows step rows, which a merge of over 500 devices writes).
Report JobFieldsOf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) Fail(absl::StrCat(path, ": not JSON"));
  Report r;
  if (doc.HasMember("straggler_rank") && doc["straggler_rank"].IsInt()) {
    r.straggler_rank = doc["straggler_rank"].GetInt();
  }
  if (doc.HasMember("clock") && doc["clock"].IsObject()) {
    r.clock.method = doc["clock"]["method"].GetString();
    r.clock.residual_ns = doc["clock"]["residual_ns"].GetInt64();
  }
  if (doc.HasMember("ranks") && doc["ranks"].IsArray()) {
    for (const rapidjson::Value& v : doc["ranks"].GetArray()) {
      gpuidle::RankReport& rr = r.ranks.emplace_back();
      rr.rank = v["rank"].GetInt();
      rr.clock_offset_ns = v["clock_offset_ns"].GetInt64();
    }
  }
  return r;
}

struct Round {
  double seconds;
  int64_t peak_rss_kb;
};

Round RunCli(const std::string& cli, const Job& job, const std::string& out) {
  std::vector<std::string> args = {cli, "analyze"};
  args.insert(args.end(), job.paths.begin(), job.paths.end());
  args.insert(args.end(), {"--out", out, "--overwrite"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);  // else the child prints what is buffered again
  const Clock::time_point start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) Fail("fork");
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    execv(cli.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) Fail("wait4");
  const Clock::time_point end = Clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Fail(absl::StrCat(cli, " analyze exited with status ", status));
  }
  Check(job, JobFieldsOf(out), "cli");
  return {Seconds(start, end), usage.ru_maxrss};
}

struct Parts {
  double read, merge, json;
};

Round RunLibrary(const Job& job, const std::string& out) {
  ResetPeakRss();
  const Clock::time_point start = Clock::now();
  absl::StatusOr<Report> r = gpuidle::AnalyzeTraceFiles(job.paths);
  if (!r.ok()) Fail(absl::StrCat("AnalyzeTraceFiles: ", r.status().ToString()));
  gpuidle::SaveOptions save;
  save.overwrite = true;
  if (absl::Status s = gpuidle::SaveReport(*r, out, save); !s.ok()) Fail(s.ToString());
  const Clock::time_point end = Clock::now();
  const int64_t peak = PeakRssKb();
  Check(job, *r, "library");
  return {Seconds(start, end), peak};
}

Parts RunParts(const Job& job) {
  const Clock::time_point t0 = Clock::now();
  std::vector<Report> ranks;
  for (const std::string& p : job.paths) {
    absl::StatusOr<Report> r = gpuidle::internal::ReadReportFile(p);
    if (!r.ok()) Fail(r.status().ToString());
    ranks.push_back(*std::move(r));
  }
  const Clock::time_point t1 = Clock::now();
  absl::StatusOr<Report> merged = gpuidle::internal::MergeRanks(std::move(ranks), job.paths, {});
  if (!merged.ok()) Fail(merged.status().ToString());
  const Clock::time_point t2 = Clock::now();
  absl::StatusOr<std::string> json = gpuidle::FormatReport(*merged, "json");
  if (!json.ok()) Fail(json.status().ToString());
  const Clock::time_point t3 = Clock::now();
  Check(job, *merged, "parts");
  return {Seconds(t0, t1), Seconds(t1, t2), Seconds(t2, t3)};
}

std::string Range(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return absl::StrCat(absl::SixDigits(*lo), "-", absl::SixDigits(*hi));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ranks = {64, 1024};
  int rounds = 5;
  bool prior = true, seq = false;
  std::string cli = GPUIDLE_CLI_PATH;
  std::optional<std::string> keep;
  std::optional<int64_t> host_offset_ns;
  std::optional<int> steps;
  int kinds = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--ranks" && has_value) {
      ranks.clear();
      for (absl::string_view n : absl::StrSplit(argv[++i], ',')) {
        int v = 0;
        if (!absl::SimpleAtoi(n, &v) || v < 2) Fail(absl::StrCat("bad --ranks ", n));
        ranks.push_back(v);
      }
    } else if (a == "--rounds" && has_value) {
      if (!absl::SimpleAtoi(argv[++i], &rounds) || rounds < 1) Fail("bad --rounds");
    } else if (a == "--cli" && has_value) {
      cli = argv[++i];
    } else if (a == "--keep" && has_value) {
      keep = argv[++i];
    } else if (a == "--host-offset-ns" && has_value) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(argv[++i], &v)) Fail("bad --host-offset-ns");
      host_offset_ns = v;
    } else if (a == "--steps" && has_value) {
      int v = 0;
      if (!absl::SimpleAtoi(argv[++i], &v) || v < 2) Fail("bad --steps");
      steps = v;
    } else if (a == "--kinds" && has_value) {
      if (!absl::SimpleAtoi(argv[++i], &kinds) || kinds < 1) Fail("bad --kinds");
    } else if (a == "--no-prior") {
      prior = false;
    } else if (a == "--seq") {
      seq = true;
    } else {
      std::fprintf(stderr,
                   "usage: merge_benchmark [--ranks 64,1024] [--rounds 5] [--no-prior] [--seq] "
                   "[--host-offset-ns NS] [--steps N] [--kinds K] [--cli PATH] [--keep DIR]\n");
      return 2;
    }
  }
  std::string base;
  if (keep) {
    base = *keep;
  } else {
    std::string tmpl = (std::filesystem::temp_directory_path() / "merge_benchmark.XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) Fail("mkdtemp");
    base = tmpl;
  }
  std::printf("merge_benchmark: %s priors, %s sequence numbers, %d rounds, cli %s\n",
              prior ? "wall-clock" : "no", seq ? "with" : "without", rounds, cli.c_str());
  bool all_met = true;
  for (int n : ranks) {
    const Clock::time_point g0 = Clock::now();
    const Job job = WriteJob(n, prior, seq, host_offset_ns, steps, kinds, base);
    const Clock::time_point g1 = Clock::now();
    int64_t total = 0;
    for (int64_t s : job.sizes) total += s;
    const auto [lo, hi] = std::minmax_element(job.sizes.begin(), job.sizes.end());
    std::printf(
        "\n%d ranks: reports %.0f kB each (%.0f-%.0f), %.1f MB in all; written in %.1f s; "
        "straggler rank %d\n",
        n, static_cast<double>(total) / n / 1e3, static_cast<double>(*lo) / 1e3,
        static_cast<double>(*hi) / 1e3, static_cast<double>(total) / 1e6, Seconds(g0, g1),
        job.straggler);
    const std::string out = job.dir + "/merged.json";
    std::vector<double> cli_s, lib_s, read_s, merge_s, json_s;
    std::vector<int64_t> cli_kb, lib_kb;
    for (int i = 0; i < rounds; ++i) {
      const Round c = RunCli(cli, job, out);
      cli_s.push_back(c.seconds);
      cli_kb.push_back(c.peak_rss_kb);
      const Round l = RunLibrary(job, out);
      lib_s.push_back(l.seconds);
      lib_kb.push_back(l.peak_rss_kb);
      const Parts p = RunParts(job);
      read_s.push_back(p.read);
      merge_s.push_back(p.merge);
      json_s.push_back(p.json);
    }
    const double limit = n <= 64 ? 2.0 : n <= 1024 ? 10.0 : 0;
    const double cli_median = Median(cli_s);
    const bool met = limit == 0 || cli_median < limit;
    all_met &= met;
    std::printf("  cli      median %.3f s (%s), peak RSS %.0f MB (max of rounds)%s\n", cli_median,
                Range(cli_s).c_str(),
                static_cast<double>(*std::max_element(cli_kb.begin(), cli_kb.end())) / 1024,
                limit > 0
                    ? absl::StrCat("  target < ", limit, " s: ", met ? "met" : "MISSED").c_str()
                    : "");
    std::printf("  library  median %.3f s (%s), peak RSS %.0f MB (round's VmHWM)\n", Median(lib_s),
                Range(lib_s).c_str(),
                static_cast<double>(*std::max_element(lib_kb.begin(), lib_kb.end())) / 1024);
    std::printf("  parts    read %.3f s, MergeRanks %.3f s, JSON %.3f s (medians)\n",
                Median(read_s), Median(merge_s), Median(json_s));
    std::printf("  merged report %.0f kB; straggler %d and every host's clock found each round\n",
                static_cast<double>(std::filesystem::file_size(out)) / 1e3, job.straggler);
    if (!keep) std::filesystem::remove_all(job.dir);
  }
  if (!keep) std::filesystem::remove_all(base);
  std::printf("\ntargets %s\n", all_met ? "met" : "MISSED");
  return 0;
}
