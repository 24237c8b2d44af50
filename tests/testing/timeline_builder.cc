#include "testing/timeline_builder.h"

#include "model/cuda_api.h"

namespace gpuidle::testing {

using internal::DeviceOp;
using internal::HostCall;
using internal::OpKind;

TimelineBuilder::TimelineBuilder() { t_.info.source = "test"; }

TimelineBuilder& TimelineBuilder::Device(int device) {
  device_ = device;
  return *this;
}

TimelineBuilder& TimelineBuilder::Stream(uint32_t stream) {
  stream_ = stream;
  return *this;
}

uint64_t TimelineBuilder::NextCorrelation() { return next_correlation_++; }

uint64_t TimelineBuilder::TakePending() {
  const uint64_t c = pending_.value_or(internal::kNoCorrelation);
  pending_.reset();
  return c;
}

TimelineBuilder& TimelineBuilder::Kernel(double start_us, double end_us, const std::string& name) {
  DeviceOp op;
  op.start_ns = Ns(start_us);
  op.end_ns = Ns(end_us);
  op.kind = OpKind::kKernel;
  op.name = t_.strings.Intern(name);
  op.stream = stream_;
  op.correlation_id = TakePending();
  op.communication = internal::IsCommunicationKernel(name);
  t_.DeviceFor(device_).ops.push_back(op);
  return *this;
}

TimelineBuilder& TimelineBuilder::NcclKernel(double start_us, double end_us) {
  return Kernel(start_us, end_us, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
}

TimelineBuilder& TimelineBuilder::Copy(double start_us, double end_us, CopyKind kind,
                                       bool pageable) {
  DeviceOp op;
  op.start_ns = Ns(start_us);
  op.end_ns = Ns(end_us);
  op.kind = OpKind::kMemcpy;
  op.copy_kind = kind;
  op.pageable = pageable;
  op.name = t_.strings.Intern(kind == CopyKind::kHtoD ? "Memcpy HtoD" : "Memcpy");
  op.stream = stream_;
  op.correlation_id = TakePending();
  op.bytes = 1 << 20;
  t_.DeviceFor(device_).ops.push_back(op);
  return *this;
}

TimelineBuilder& TimelineBuilder::Memset(double start_us, double end_us) {
  DeviceOp op;
  op.start_ns = Ns(start_us);
  op.end_ns = Ns(end_us);
  op.kind = OpKind::kMemset;
  op.name = t_.strings.Intern("Memset (Device)");
  op.stream = stream_;
  op.correlation_id = TakePending();
  op.bytes = 4096;
  t_.DeviceFor(device_).ops.push_back(op);
  return *this;
}

internal::HostCall& TimelineBuilder::AddCall(uint64_t thread, double start_us, double end_us,
                                             const std::string& api) {
  HostCall c;
  c.start_ns = Ns(start_us);
  c.end_ns = Ns(end_us);
  c.thread = thread;
  c.name = t_.strings.Intern(api);
  c.category = internal::CategorizeCudaApi(api);
  c.correlation_id = NextCorrelation();
  return t_.calls.emplace_back(c);
}

TimelineBuilder& TimelineBuilder::Launch(uint64_t thread, double start_us, double end_us,
                                         const std::string& api) {
  pending_ = AddCall(thread, start_us, end_us, api).correlation_id;
  return *this;
}

TimelineBuilder& TimelineBuilder::CopyCall(uint64_t thread, double start_us, double end_us,
                                           const std::string& api) {
  return Launch(thread, start_us, end_us, api);
}

TimelineBuilder& TimelineBuilder::Sync(uint64_t thread, double start_us, double end_us,
                                       const std::string& api) {
  AddCall(thread, start_us, end_us, api);
  return *this;
}

TimelineBuilder& TimelineBuilder::WaitEvent(uint64_t thread, double start_us, double end_us,
                                            uint32_t stream, uint32_t waited_stream) {
  Sync(thread, start_us, end_us, "cudaStreamWaitEvent");
  t_.calls.back().stream = stream;
  t_.calls.back().peer_stream = waited_stream;
  return *this;
}

TimelineBuilder& TimelineBuilder::OtherCall(uint64_t thread, double start_us, double end_us,
                                            const std::string& api) {
  return Sync(thread, start_us, end_us, api);
}

TimelineBuilder& TimelineBuilder::Range(uint64_t thread, double start_us, double end_us,
                                        RangeKind kind, const std::string& name) {
  internal::Range r;
  r.start_ns = Ns(start_us);
  r.end_ns = Ns(end_us);
  r.thread = thread;
  r.kind = kind;
  r.name = t_.strings.Intern(name);
  t_.ranges.push_back(r);
  return *this;
}

TimelineBuilder& TimelineBuilder::Step(uint64_t thread, double start_us, double end_us,
                                       const std::string& name) {
  return Range(thread, start_us, end_us, RangeKind::kStep, name);
}

TimelineBuilder& TimelineBuilder::Data(uint64_t thread, double start_us, double end_us) {
  return Range(thread, start_us, end_us, RangeKind::kData, "enumerate(DataLoader)#__next__");
}

TimelineBuilder& TimelineBuilder::Op(uint64_t thread, double start_us, double end_us,
                                     const std::string& name) {
  return Range(thread, start_us, end_us, RangeKind::kFrameworkOp, name);
}

TimelineBuilder& TimelineBuilder::Sample(uint64_t thread, double at_us, const std::string& stack) {
  internal::HostSample s;
  s.time_ns = Ns(at_us);
  s.thread = thread;
  s.stack = t_.strings.Intern(stack);
  t_.samples.push_back(s);
  return *this;
}

TimelineBuilder& TimelineBuilder::Visible(int device) {
  t_.info.visible_devices.push_back(device);
  t_.info.visible_device_names.push_back("");
  return *this;
}

TimelineBuilder& TimelineBuilder::Rank(int rank) {
  t_.info.rank = rank;
  return *this;
}

Timeline TimelineBuilder::Build() {
  t_.Finalize();
  return std::move(t_);
}

}  // namespace gpuidle::testing
