// Replays the traces of the unchanged real-client programs (examples/python/unchanged/*.py: a
// transformers Trainer, Lightning, JAX, CuPy, torch.compile), recorded on an H200 under
// `gpuidle run` with no change to their code (tests/gpu/run_on_device.sh unchanged,
// docs/VALIDATION.md), and checks on every CI run what tests/gpu/python/check_unchanged.py
// checked there: start-up reported apart with its largest part named, the expected cause holding
// at least 80% of the steady-state idle time, one-off compilation named where the program
// compiles, Python frames on the host stretches of the Python-framework programs; and that the
// trace reads back to the report the live run wrote.
//
// The traces are tests/data/traces/unchanged/<program>.trace.json.gz (the device run's
// traces/unchanged/<program>.trace.json.gz), the live reports <program>.report.json (its
// reports/unchanged/<program>.run.json).
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "testing/report_json.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::ReadFileOrDie;

std::string UnchangedPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/traces/unchanged/" + name;
}

// Where the Python frames of gap records and offenders are looked for.
enum class Frames {
  kNotChecked,
  kAny,              // some gap record or offender
  kOfExpectedCause,  // a gap record or offender of the expected cause
};

struct Expectation {
  std::string program;
  // Whether its trace is in tests/data/traces/unchanged/: rows are switched on as their traces
  // are recorded and copied there (a recorded trace without a switched-on row fails
  // EveryRecordedTraceHasItsRow).
  bool recorded;
  Cause cause;                            // >= 80% of the steady-state idle time
  std::optional<Subcause> subcause;       // also >= 80%, where one subcause is expected
  std::optional<OneOffKind> startup_top;  // the largest start-up part (gpu_busy aside)
  bool compilation;                       // a one-off compilation part (start-up or steady)
  Frames frames;
};

// One row per program, as its docstring states the right answer (and check_unchanged.py).
const std::vector<Expectation>& Programs() {
  static const std::vector<Expectation>* programs = new std::vector<Expectation>{
      // Tiny GPT-2, eager: each step's ~150 kernels are shorter than their dispatch.
      {"trainer_gpt2", true, Cause::kLaunchBound, std::nullopt, std::nullopt, false, Frames::kAny},
      // ~30 ms of Python in the collate_fn of a num_workers=0 DataLoader, per batch.
      {"lightning_slow_collate", true, Cause::kDataStarved, Subcause::kDataLoader, std::nullopt,
       false, Frames::kOfExpectedCause},
      // float(loss) after each jitted step of large matmuls, then ~2 ms of host work.
      {"jax_host_read", true, Cause::kSyncBound, std::nullopt, std::nullopt, true,
       Frames::kNotChecked},
      // jax.numpy without jit: ~40 tiny ops per step, each its own executable.
      {"jax_op_by_op", true, Cause::kLaunchBound, std::nullopt, std::nullopt, true,
       Frames::kNotChecked},
      // ~20 tiny CuPy kernels per step, compiled by NVRTC at first use.
      {"cupy_tiny_kernels", true, Cause::kLaunchBound, std::nullopt, std::nullopt, true,
       Frames::kNotChecked},
      // Inductor's compilation before the first step; then one launch per kernel.
      {"torch_compile_default", true, Cause::kLaunchBound, std::nullopt, OneOffKind::kCompilation,
       true, Frames::kNotChecked},
      // CUDA graphs: kernel_gap inside replays, launch_overhead between them.
      {"torch_compile_reduce_overhead", true, Cause::kLaunchBound, std::nullopt,
       OneOffKind::kCompilation, true, Frames::kNotChecked},
  };
  return *programs;
}

// Test names and failures show the program.
void PrintTo(const Expectation& e, std::ostream* os) { *os << e.program; }

std::vector<Expectation> RecordedPrograms() {
  std::vector<Expectation> recorded;
  for (const Expectation& e : Programs()) {
    if (e.recorded) recorded.push_back(e);
  }
  return recorded;
}

const Expectation* Find(const std::string& program) {
  for (const Expectation& e : Programs()) {
    if (e.program == program) return &e;
  }
  return nullptr;
}

Report MustAnalyze(const std::string& program) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({UnchangedPath(program + ".trace.json.gz")});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : Report{};
}

double Share(const DeviceReport& d, Cause c) {
  return d.idle_ns > 0 ? static_cast<double>(d.idle.CauseNs(c)) / static_cast<double>(d.idle_ns)
                       : 0.0;
}
double Share(const DeviceReport& d, Subcause s) {
  return d.idle_ns > 0 ? static_cast<double>(d.idle[s]) / static_cast<double>(d.idle_ns) : 0.0;
}
double SteadyIdleShare(const DeviceReport& d) {
  const int64_t steady = d.steady_end_ns - d.steady_start_ns;
  return steady > 0 ? static_cast<double>(d.idle_ns) / static_cast<double>(steady) : 0.0;
}

// The largest start-up part other than the GPU's own busy time; nullptr when there is none.
const OneOffTime* StartUpTop(const DeviceReport& d) {
  const OneOffTime* top = nullptr;
  for (const OneOffTime& o : d.one_off) {
    if (o.phase != Phase::kStartUp || o.kind == OneOffKind::kGpuBusy || o.ns <= 0) continue;
    if (top == nullptr || o.ns > top->ns) top = &o;
  }
  return top;
}

bool NamesAPythonFrame(absl::string_view text) {
  return absl::StrContains(text, ".py:") || absl::StrContains(text, ".py(");
}

class UnchangedProgram : public ::testing::TestWithParam<Expectation> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(UnchangedProgram);

TEST_P(UnchangedProgram, ReportsStartUpApartWithItsLargestPartNamed) {
  const Expectation& e = GetParam();
  const Report r = MustAnalyze(e.program);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceReport& d = r.devices[0];
  EXPECT_GT(d.PhaseNs(Phase::kStartUp), 0) << "start-up reported apart";
  const OneOffTime* top = StartUpTop(d);
  ASSERT_NE(top, nullptr) << "a named start-up part";
  if (e.startup_top) {
    EXPECT_EQ(top->kind, *e.startup_top)
        << "largest start-up part " << OneOffKindName(top->kind) << " (" << top->evidence << ")";
  }
}

TEST_P(UnchangedProgram, PutsAtLeast80PercentOfSteadyIdleTimeInTheExpectedCause) {
  const Expectation& e = GetParam();
  const Report r = MustAnalyze(e.program);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceReport& d = r.devices[0];
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.idle.TotalNs(), d.idle_ns);
  ASSERT_GT(d.idle_ns, 0);
  EXPECT_GE(Share(d, e.cause), 0.80) << CauseName(e.cause);
  if (e.subcause) {
    EXPECT_GE(Share(d, *e.subcause), 0.80) << QualifiedSubcauseName(*e.subcause);
  }
}

TEST_P(UnchangedProgram, NamesCompilationAsOneOffTimeWhereTheProgramCompiles) {
  const Expectation& e = GetParam();
  if (!e.compilation) GTEST_SKIP() << e.program << " compiles nothing of note";
  const Report r = MustAnalyze(e.program);
  ASSERT_EQ(r.devices.size(), 1u);
  int64_t compilation_ns = 0;
  for (const OneOffTime& o : r.devices[0].one_off) {
    if (o.kind == OneOffKind::kCompilation) compilation_ns += o.ns;
  }
  EXPECT_GT(compilation_ns, 0);
}

// The other way round (issue 28): a program that compiles nothing has no compilation part, however
// long its host work before the CUDA runtime loads its kernels (cuLibraryLoadData).
TEST_P(UnchangedProgram, ShowsNoCompilationWhereTheProgramCompilesNothing) {
  const Expectation& e = GetParam();
  if (e.compilation) GTEST_SKIP() << e.program << " compiles";
  const Report r = MustAnalyze(e.program);
  for (const DeviceReport& d : r.devices) {
    for (const OneOffTime& o : d.one_off) {
      EXPECT_NE(o.kind, OneOffKind::kCompilation) << o.evidence << ", " << o.ns << " ns";
    }
  }
}

TEST_P(UnchangedProgram, HostStretchesCarryPythonFrames) {
  const Expectation& e = GetParam();
  if (e.frames == Frames::kNotChecked) GTEST_SKIP() << "not a Python-framework program";
  const Report r = MustAnalyze(e.program);
  const auto wanted = [&](Subcause s) { return e.frames == Frames::kAny || CauseOf(s) == e.cause; };
  int named = 0;
  for (const GapRecord& g : r.longest_gaps) {
    if (wanted(g.subcause) && (NamesAPythonFrame(g.call_site) || NamesAPythonFrame(g.evidence))) {
      ++named;
    }
  }
  for (const Offender& o : r.offenders) {
    if (wanted(o.subcause) && (NamesAPythonFrame(o.site) || NamesAPythonFrame(o.what))) ++named;
  }
  EXPECT_GT(named, 0) << "a gap record or offender names a file.py:line";
}

TEST_P(UnchangedProgram, ReadsBackToTheReportTheLiveRunWrote) {
  const Expectation& e = GetParam();
  const std::string live = UnchangedPath(e.program + ".report.json");
  if (!std::filesystem::exists(live)) GTEST_SKIP() << "no live report kept for " << e.program;
  absl::StatusOr<std::string> replayed = FormatReport(MustAnalyze(e.program), "json");
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  // Recorded before the start-up's compilation needed compiler evidence (issue 28).
  EXPECT_TRUE(::gpuidle::testing::ReadsBackAsRecordedBeforeIssue28(*replayed, ReadFileOrDie(live)));
}

INSTANTIATE_TEST_SUITE_P(RecordedOnH200, UnchangedProgram, ::testing::ValuesIn(RecordedPrograms()),
                         [](const ::testing::TestParamInfo<Expectation>& param) {
                           return param.param.program;
                         });

TEST(UnchangedProgramsTest, EveryRecordedTraceHasItsRow) {
  const std::string dir = UnchangedPath("");
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no traces recorded yet";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".trace.json.gz";
    if (!absl::EndsWith(name, suffix)) continue;
    const Expectation* e = Find(name.substr(0, name.size() - suffix.size()));
    ASSERT_NE(e, nullptr) << name << " has no row in Programs()";
    EXPECT_TRUE(e->recorded) << name << " is recorded: switch its row on";
  }
}

TEST(UnchangedProgramsTest, CudaGraphsLeaveLessOfTheSteadyStateIdleThanDefaultMode) {
  const Expectation* graphs = Find("torch_compile_reduce_overhead");
  const Expectation* eager_launches = Find("torch_compile_default");
  if (!graphs->recorded || !eager_launches->recorded) GTEST_SKIP() << "needs both traces";
  const Report with_graphs = MustAnalyze(graphs->program);
  const Report without = MustAnalyze(eager_launches->program);
  ASSERT_EQ(with_graphs.devices.size(), 1u);
  ASSERT_EQ(without.devices.size(), 1u);
  EXPECT_LT(SteadyIdleShare(with_graphs.devices[0]), SteadyIdleShare(without.devices[0]));
  // Replayed graphs: the GPU's dispatch between queued kernels.
  EXPECT_GT(with_graphs.devices[0].idle[Subcause::kKernelGap], 0);
}

}  // namespace
}  // namespace gpuidle
