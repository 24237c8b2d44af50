// A CUDA program that knows nothing of gpuidle and misbehaves on request, for the fault matrix
// (docs/RELIABILITY.md): it ends in every way a process can end, launches from 8 threads at
// once, resets the device mid-run, replays CUDA graphs, launches bursts big enough to strain
// tiny activity buffers, forks with and without exec, and (built with -DGPUIDLE_FAULT_CUPTI_CLIENT
// and -lcupti) takes CUPTI itself before or after gpuidle did.
//
//   fault_program MODE [ARGS...]
//     plain K                   K kernels, then exit 0
//     exit KIND                 100 kernels, then end by KIND: normal, exit (3), _exit (4),
//                               throw (uncaught: abort, 134), sigterm (143), sigint (130),
//                               sighup (129), sigquit (131),
//                               wait (print "ready", then sleep until a signal arrives)
//     threads N K               N host threads start together, each launches K kernels on its
//                               own stream
//     reset K                   K kernels, cudaDeviceReset, K kernels
//     graph NODES LAUNCHES      a graph of NODES kernels captured once, launched LAUNCHES times
//     burst N K NODES LAUNCHES  threads N K, then graph NODES LAUNCHES
//     fork-noexec               100 kernels, fork; the child exits without touching CUDA
//     fork-exec                 100 kernels, fork; the child execs "fault_program exit normal"
//     cupti-client first|after  another CUPTI client (the GPUIDLE_FAULT_CUPTI_CLIENT build)
//
// Every mode's last line on stdout says what it did and what the device counted (each kernel
// adds one to a counter), so the checker can tell that gpuidle changed nothing the program
// does: "fault_program MODE: launched L kernels, device counted C".
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef GPUIDLE_FAULT_CUPTI_CLIENT
#include <cupti.h>
#endif

namespace {

__global__ void Tick(unsigned long long* counter) { atomicAdd(counter, 1ull); }

// Ends the program with the CUDA error's name (deterministic, so that the output compares).
void Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::printf("fault_program: CUDA error in %s: %s\n", what, cudaGetErrorName(e));
  std::fflush(stdout);
  std::exit(1);
}

unsigned long long* NewCounter() {
  unsigned long long* counter = nullptr;
  Check(cudaMalloc(&counter, sizeof(*counter)), "cudaMalloc");
  Check(cudaMemset(counter, 0, sizeof(*counter)), "cudaMemset");
  return counter;
}

unsigned long long ReadCounter(unsigned long long* counter) {
  unsigned long long value = 0;
  Check(cudaMemcpy(&value, counter, sizeof(value), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return value;
}

long Launch(unsigned long long* counter, long kernels, cudaStream_t stream = nullptr) {
  for (long i = 0; i < kernels; ++i) Tick<<<1, 1, 0, stream>>>(counter);
  Check(cudaGetLastError(), "launch");
  return kernels;
}

void Done(const char* mode, long launched, unsigned long long counted) {
  std::printf("fault_program %s: launched %ld kernels, device counted %llu\n", mode, launched,
              counted);
  std::fflush(stdout);
}

long Number(const char* text) {
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 0) {
    std::fprintf(stderr, "fault_program: bad number %s\n", text);
    std::exit(2);
  }
  return n;
}

// N threads that start launching at the same moment (a barrier), each on its own stream.
long Threads(unsigned long long* counter, int threads, long kernels) {
  std::mutex mu;
  std::condition_variable cv;
  int ready = 0;
  bool go = false;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      cudaStream_t stream = nullptr;
      Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      {
        std::unique_lock<std::mutex> lock(mu);
        ++ready;
        cv.notify_all();
        cv.wait(lock, [&] { return go; });
      }
      Launch(counter, kernels, stream);
      Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      Check(cudaStreamDestroy(stream), "cudaStreamDestroy");
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ready == threads; });
    go = true;
  }
  cv.notify_all();
  for (std::thread& t : pool) t.join();
  return static_cast<long>(threads) * kernels;
}

long Graph(unsigned long long* counter, long nodes, long launches) {
  cudaStream_t stream = nullptr;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaGraph_t graph = nullptr;
  Check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  Launch(counter, nodes, stream);  // captured, not run
  Check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  Check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  for (long i = 0; i < launches; ++i) Check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  Check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  Check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  Check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return nodes * launches;
}

int EndBy(const std::string& kind, long launched, unsigned long long counted) {
  Done(("exit " + kind).c_str(), launched, counted);
  if (kind == "normal") return 0;
  if (kind == "exit") std::exit(3);
  if (kind == "_exit") _exit(4);
  if (kind == "throw") throw std::runtime_error("fault_program: an exception nobody catches");
  if (kind == "sigterm") raise(SIGTERM);
  if (kind == "sigint") raise(SIGINT);
  if (kind == "sighup") raise(SIGHUP);
  if (kind == "sigquit") raise(SIGQUIT);
  if (kind == "wait") {
    std::printf("fault_program: ready\n");
    std::fflush(stdout);
    for (int i = 0; i < 120; ++i) sleep(1);  // the signal ends it; 2 minutes at most
    return 5;
  }
  std::fprintf(stderr, "fault_program: unknown exit kind %s\n", kind.c_str());
  return 2;
}

int Fork(const char* self, bool exec) {
  unsigned long long* counter = NewCounter();
  const long launched = Launch(counter, 100);
  const unsigned long long counted = ReadCounter(counter);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    std::perror("fault_program: fork");
    return 1;
  }
  if (child == 0) {
    if (exec) {
      execl("/proc/self/exe", self, "exit", "normal", static_cast<char*>(nullptr));
      std::perror("fault_program: exec");
      _exit(127);
    }
    // A forked child may not use CUDA; it ends through exit() so that exit handlers run.
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const int child_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::printf("fault_program: parent pid %d, child pid %d exited with %d\n",
              static_cast<int>(getpid()), static_cast<int>(child), child_code);
  Done(exec ? "fork-exec" : "fork-noexec", launched, counted);
  return child_code == 0 ? 0 : 1;
}

#ifdef GPUIDLE_FAULT_CUPTI_CLIENT
// A minimal CUPTI activity client, as another tool in the process would be: it subscribes
// (Nsight's way; a refusal is printed, not fatal), registers its own buffers and enables kernel
// records (Kineto's way, which works even when the subscription was refused), and counts the
// kernel records it receives.
unsigned long long client_kernels = 0;
std::mutex client_mu;
std::vector<uint8_t*> client_buffers;

void CUPTIAPI ClientBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = size_t{1} << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
  std::lock_guard<std::mutex> lock(client_mu);
  client_buffers.push_back(*buffer);
}

void CUPTIAPI ClientBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(client_mu);
  bool mine = false;
  for (uint8_t* b : client_buffers) mine |= b == buffer;
  if (!mine) {
    // Someone else's buffer came to us: count it as the other tool would see it, and leave it.
    std::printf("fault_program: cupti client got a buffer it never handed out\n");
    return;
  }
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++client_kernels;
  }
}

void CUPTIAPI ClientCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void StartClient() {
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult s = cuptiSubscribe(&subscriber, &ClientCallback, nullptr);
  const char* text = nullptr;
  cuptiGetResultString(s, &text);
  std::printf("fault_program: cupti client subscribe: %s\n", text != nullptr ? text : "?");
  cuptiActivityRegisterCallbacks(&ClientBufferRequested, &ClientBufferCompleted);
  const CUptiResult e = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiGetResultString(e, &text);
  std::printf("fault_program: cupti client enable: %s\n", text != nullptr ? text : "?");
}

int CuptiClient(const std::string& order) {
  const bool first = order == "first";
  if (first) StartClient();  // before CUDA is initialised: before gpuidle's injection
  unsigned long long* counter = NewCounter();
  long launched = Launch(counter, 100);
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (!first) StartClient();  // after gpuidle took CUPTI at cuInit
  launched += Launch(counter, 100);
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::printf("fault_program: cupti client counted %llu kernels\n", client_kernels);
  Done(first ? "cupti-client first" : "cupti-client after", launched, ReadCounter(counter));
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  auto arg = [&](int i) { return i < argc ? Number(argv[i]) : 0; };
  if (mode == "plain" && argc == 3) {
    unsigned long long* counter = NewCounter();
    const long launched = Launch(counter, arg(2));
    Done("plain", launched, ReadCounter(counter));
    return 0;
  }
  if (mode == "exit" && argc == 3) {
    unsigned long long* counter = NewCounter();
    const long launched = Launch(counter, 100);
    return EndBy(argv[2], launched, ReadCounter(counter));
  }
  if (mode == "threads" && argc == 4) {
    unsigned long long* counter = NewCounter();
    const long launched = Threads(counter, static_cast<int>(arg(2)), arg(3));
    Done("threads", launched, ReadCounter(counter));
    return 0;
  }
  if (mode == "reset" && argc == 3) {
    unsigned long long* counter = NewCounter();
    long launched = Launch(counter, arg(2));
    unsigned long long counted = ReadCounter(counter);
    Check(cudaDeviceReset(), "cudaDeviceReset");  // frees the counter with the context
    counter = NewCounter();
    launched += Launch(counter, arg(2));
    counted += ReadCounter(counter);
    Done("reset", launched, counted);
    return 0;
  }
  if (mode == "graph" && argc == 4) {
    unsigned long long* counter = NewCounter();
    const long launched = Graph(counter, arg(2), arg(3));
    Done("graph", launched, ReadCounter(counter));
    return 0;
  }
  if (mode == "burst" && argc == 6) {
    unsigned long long* counter = NewCounter();
    long launched = Threads(counter, static_cast<int>(arg(2)), arg(3));
    launched += Graph(counter, arg(4), arg(5));
    Done("burst", launched, ReadCounter(counter));
    return 0;
  }
  if (mode == "fork-noexec" || mode == "fork-exec") return Fork(argv[0], mode == "fork-exec");
#ifdef GPUIDLE_FAULT_CUPTI_CLIENT
  if (mode == "cupti-client" && argc == 3) return CuptiClient(argv[2]);
#endif
  std::fprintf(stderr, "usage: fault_program MODE [ARGS...] (see the source)\n");
  return 2;
}
