#include "collect/callback_ids.h"

#include <cupti.h>

#include <algorithm>
#include <vector>

#include "collect/fake_cupti.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::Field;
using ::testing::UnorderedElementsAre;

TEST(NeededCallbackIds, KeepsTheLaunchSyncCopyAndWaitEventIdsAscendingWithTheirCategories) {
  const std::vector<NeededId> runtime =
      NeededCallbackIds(fake_cupti::FakeApi(), CUPTI_CB_DOMAIN_RUNTIME_API);
  ASSERT_FALSE(runtime.empty());
  EXPECT_TRUE(std::is_sorted(runtime.begin(), runtime.end(),
                             [](const NeededId& a, const NeededId& b) { return a.cbid < b.cbid; }));
  for (const NeededId& id : runtime) EXPECT_NE(id.category, CallCategory::kOther) << id.cbid;
  const auto find = [&](CUpti_CallbackId cbid) {
    return std::find_if(runtime.begin(), runtime.end(),
                        [&](const NeededId& id) { return id.cbid == cbid; });
  };
  ASSERT_NE(find(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000), runtime.end());
  EXPECT_EQ(find(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)->category, CallCategory::kLaunch);
  ASSERT_NE(find(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020), runtime.end());
  EXPECT_EQ(find(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020)->category,
            CallCategory::kSync);
  // cudaGetDevice, called 150k times in a tiny PyTorch loop, is never traced.
  EXPECT_EQ(find(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020), runtime.end());
}

TEST(NeededCallbackIds, NamesUnknownToCuptiAreSkipped) {
  // The fake names only a few ids of each domain; every other id is "unknown" to it.
  const std::vector<NeededId> driver =
      NeededCallbackIds(fake_cupti::FakeApi(), CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_THAT(driver, UnorderedElementsAre(
                          Field(&NeededId::cbid, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize),
                          Field(&NeededId::cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx)));
}

TEST(NeededCallbackIdTable, LooksTheIdsUpOncePerCupti) {
  NeededCallbackIdTable table;
  table.LookUp(fake_cupti::FakeApi());
  const size_t runtime = table.runtime().size();
  ASSERT_GT(runtime, 0u);
  EXPECT_EQ(&table.of(CUPTI_CB_DOMAIN_RUNTIME_API), &table.runtime());
  EXPECT_EQ(&table.of(CUPTI_CB_DOMAIN_DRIVER_API), &table.driver());
  table.LookUp(fake_cupti::FakeApi());
  EXPECT_EQ(table.runtime().size(), runtime);
}

}  // namespace
}  // namespace gpuidle::internal
