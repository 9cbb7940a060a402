// The vendor's own selection beside convlab's find and get (autotune/vendor.hpp):
// oneDNN auto's pick on the CPU with our measured time for it, cuDNN's Find and
// Get_v7 on a GPU, and honest "no device" / "not built" answers otherwise.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/cpu/onednn.hpp"
#include "algorithms/registry.hpp"
#include "autotune/compare.hpp"
#include "autotune/find.hpp"
#include "autotune/vendor.hpp"
#include "core/device.hpp"
#include "core/layers.hpp"
#include "report/layers.hpp"

namespace convlab {
namespace {

TEST(Vendor, OnednnFamilyMapping) {
  EXPECT_EQ(onednn_family("jit:avx512_core"), "direct");
  EXPECT_EQ(onednn_family("jit_1x1:avx2"), "direct");
  EXPECT_EQ(onednn_family("brg:avx512_core"), "direct");
  EXPECT_EQ(onednn_family("brgconv_1x1:avx512_core"), "direct");
  EXPECT_EQ(onednn_family("jit_wino_4x3:avx512_core"), "winograd");
  EXPECT_EQ(onednn_family("gemm:jit"), "gemm");
  EXPECT_EQ(onednn_family("x64:gemm:jit"), "gemm");
  EXPECT_EQ(onednn_family("ref:any"), "reference");
  EXPECT_EQ(onednn_family("something_new"), "unknown");
}

TEST(Vendor, MeasuredTimeOnlyForOkEntries) {
  std::vector<AlgoPerf> found(2);
  found[0].algo = "a";
  found[0].time = 2e-3;
  found[1].algo = "b";
  found[1].status = PerfStatus::inaccurate;
  found[1].time = 1e-3;
  EXPECT_DOUBLE_EQ(measured_time(found, "a"), 2e-3);
  EXPECT_TRUE(std::isnan(measured_time(found, "b")));
  EXPECT_TRUE(std::isnan(measured_time(found, "c")));
}

TEST(Vendor, TallyCountsSameAndWithinTenPercent) {
  auto report = [](const std::string& algo, double t) {
    VendorReport r;
    VendorChoice v;
    v.source = "onednn_auto";
    v.algo = algo;
    v.our_time = t;
    r.choices.push_back(v);
    return r;
  };
  std::vector<VendorTally> t;
  tally(t, report("x", 1.0), "x", 1.0);            // same
  tally(t, report("y", 1.05), "x", 1.0);           // within 10 %
  tally(t, report("y", 1.5), "x", 1.0);            // neither
  tally(t, report("y", NAN), "x", 1.0);            // not measured
  tally(t, report("y", 1.0), "", NAN);             // no find pick: not counted
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].pairs, 4);
  EXPECT_EQ(t[0].same, 1);
  EXPECT_EQ(t[0].within_10pct, 2);
  EXPECT_EQ(t[0].unmeasured, 1);
  EXPECT_EQ(tally_text(t[0]), "same pick 1/4, within 10% 2/4, 1 not measured by find");
}

// cuDNN's pick can be an algorithm id convlab has no entry for (cudnn.unknown_<id>):
// tallied as an unknown id -- not "same", not "within 10%", not "not measured" -- and
// its line says so instead of quoting a time find cannot have.
TEST(Vendor, UnknownCudnnIdsAreTalliedAsSuch) {
  VendorReport r;
  VendorChoice v;
  v.source = "cudnnFind";
  v.algo = "cudnn.unknown_4";
  v.family = "unknown";
  v.unknown_id = true;
  v.vendor_time = 1e-3;
  v.our_time = 1e-3;  // whatever find says about a name, an unknown id is never compared with it
  r.choices.push_back(v);
  std::vector<VendorTally> t;
  tally(t, r, "cudnn.unknown_4", 1e-3);
  tally(t, r, "cuda.direct", 1e-3);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].pairs, 2);
  EXPECT_EQ(t[0].same, 0);
  EXPECT_EQ(t[0].within_10pct, 0);
  EXPECT_EQ(t[0].unmeasured, 0);
  EXPECT_EQ(t[0].unknown_ids, 2);
  EXPECT_EQ(tally_text(t[0]), "same pick 0/2, within 10% 0/2, 2 unknown cuDNN ids");
  VendorTally one;
  one.pairs = one.unknown_ids = 1;
  EXPECT_EQ(tally_text(one), "same pick 0/1, within 10% 0/1, 1 unknown cuDNN id");
  const std::string s = vendor_text(v, "cuda.direct", 1e-3, "cuda.direct", 1e-3);
  EXPECT_NE(s.find("cudnnFind -> cudnn.unknown_4 (its time 1.000 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("an unknown cuDNN algorithm id"), std::string::npos) << s;
  EXPECT_EQ(s.find("our find"), std::string::npos) << s;
}

TEST(Vendor, TextNamesFindAndGetPicks) {
  VendorChoice v;
  v.source = "cudnnFind";
  v.algo = "cudnn.gemm";
  v.vendor_time = 1.0e-3;
  v.workspace = 2000000;
  v.math = "fma";
  v.our_time = 1.2e-3;
  const std::string s = vendor_text(v, "cuda.direct", 1.0e-3, "cudnn.gemm", 1.2e-3);
  EXPECT_NE(s.find("cudnnFind -> cudnn.gemm (its time 1.000 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("our find 1.200 ms = 1.20x find's pick cuda.direct (1.000 ms)"), std::string::npos) << s;
  EXPECT_NE(s.find(", get's pick"), std::string::npos) << s;  // the vendor's pick is get's
  const std::string both = vendor_text(v, "cuda.direct", 1.0e-3, "cuda.direct", 1.0e-3);
  EXPECT_NE(both.find("= 1.20x find's and get's pick cuda.direct (1.000 ms)"), std::string::npos) << both;
  v.our_time = NAN;
  EXPECT_NE(vendor_text(v, "cuda.direct", 1e-3, "", NAN).find("(not measured)"), std::string::npos);
}

#ifdef CONVLAB_HAS_ONEDNN
TEST(Vendor, CpuReportsOnednnAutoPickWithOurTime) {
  const ConvProblem p = parse_problem("mb2ic16ih12oc16kh3ph1");
  ExecContext ctx;
  FindOptions fo;
  fo.max_seconds = 0.02;
  const std::vector<const Algorithm*> cands = {&get_algorithm("onednn.auto"), &get_algorithm("cpu.im2col_gemm")};
  for (Direction dir : kAllDirections) {
    const auto found = find(p, dir, ctx, fo, cands);
    const VendorReport r = vendor_choices(p, dir, ctx, found);
    EXPECT_EQ(r.status, "ok") << to_string(dir);
    ASSERT_EQ(r.choices.size(), 1u) << r.status;
    const VendorChoice& v = r.choices[0];
    EXPECT_EQ(v.source, "onednn_auto");
    EXPECT_EQ(v.algo, "onednn.auto");
    EXPECT_FALSE(v.implementation.empty());
    EXPECT_EQ(v.family, onednn_family(v.implementation));
    EXPECT_NE(v.family, "unknown") << v.implementation;
    EXPECT_TRUE(v.our_time > 0) << to_string(dir) << ": " << v.implementation;
    EXPECT_DOUBLE_EQ(v.our_time, measured_time(found, "onednn.auto"));
    EXPECT_TRUE(std::isnan(v.vendor_time));  // oneDNN times nothing itself
  }
  // Without find's list the pick is still reported, its time honestly unknown.
  const VendorReport bare = vendor_choices(p, Direction::fwd, ctx, {});
  ASSERT_EQ(bare.choices.size(), 1u);
  EXPECT_TRUE(std::isnan(bare.choices[0].our_time));
}

TEST(Vendor, CpuRejectionIsAStatusNotAnEntry) {
  // oneDNN rejects a problem our validator rejects too: a status, no choice.
  ConvProblem p = parse_problem("mb1ic4ih8oc4kh3ph1");
  p.k = 0;
  const VendorReport r = vendor_choices(p, Direction::fwd, ExecContext{}, {});
  EXPECT_NE(r.status, "ok");
  EXPECT_TRUE(r.choices.empty());
}
#else
TEST(Vendor, CpuWithoutOnednnSaysSo) {
  const VendorReport r = vendor_choices(parse_problem("mb1ic4ih8oc4kh3ph1"), Direction::fwd, ExecContext{}, {});
  EXPECT_NE(r.status.find("oneDNN not built"), std::string::npos) << r.status;
  EXPECT_TRUE(r.choices.empty());
}
#endif

TEST(Vendor, CudaWithoutDeviceSaysNoCudaDevice) {
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is present; the no-device path cannot be exercised";
  ExecContext ctx;
  ctx.device = DeviceKind::cuda;
  const VendorReport r = vendor_choices(network_layer("alexnet.conv2", 4).problem, Direction::fwd, ctx, {});
  EXPECT_EQ(r.status.rfind("no CUDA device (", 0), 0u) << r.status;
  EXPECT_TRUE(r.choices.empty());
}

TEST(Vendor, CudaOnDeviceReportsFindAndGet) {
  if (!cuda_info().available) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const ConvProblem p = network_layer("alexnet.conv2", 4).problem;
  ExecContext ctx;
  ctx.device = DeviceKind::cuda;
  FindOptions fo;
  fo.max_seconds = 0.05;
  for (Direction dir : kAllDirections) {
    const auto found = find(p, dir, ctx, fo);
    const VendorReport r = vendor_choices(p, dir, ctx, found);
    EXPECT_EQ(r.status, "ok") << to_string(dir);
    ASSERT_EQ(r.choices.size(), 2u) << r.status;
    EXPECT_EQ(r.choices[0].source, "cudnnFind");
    EXPECT_EQ(r.choices[1].source, "cudnnGet_v7");
    for (const VendorChoice& v : r.choices) {
      // A registered entry, or cuDNN's pick is an id convlab has no entry for (reported as such).
      EXPECT_TRUE(find_algorithm(v.algo) != nullptr || v.unknown_id) << v.algo;
      EXPECT_EQ(v.vendor_status, "CUDNN_STATUS_SUCCESS");
    }
    EXPECT_GT(r.choices[0].vendor_time, 0);
    // cuDNN's Find pick is an fp32 candidate of our find: we measured it too
    // (unless our check rejected it, which the note would say).
    EXPECT_TRUE(r.choices[0].our_time > 0 || std::isnan(r.choices[0].our_time));
  }
}

TEST(Vendor, MarkdownMarksTheVendorPick) {
  Comparison c;
  for (const char* a : {"cpu.x", "onednn.auto"}) {
    ComparisonRow r;
    r.layer = "l1";
    r.dir = "fwd";
    r.algo = a;
    r.status = "ok";
    r.threads = 2;
    r.time = std::string(a) == "cpu.x" ? 1e-3 : 2e-3;
    r.find_rank = std::string(a) == "cpu.x" ? 1 : 2;
    r.find_choice = r.find_rank == 1;
    c.rows.push_back(r);
  }
  VendorRow v;
  v.layer = "l1";
  v.dir = "fwd";
  v.threads = 2;
  v.status = "ok";
  v.choice.source = "onednn_auto";
  v.choice.algo = "onednn.auto";
  c.vendor.push_back(v);
  VendorRow g = v;
  g.choice.source = "cudnnGet_v7";
  g.choice.algo = "cudnn.not_in_table";
  c.vendor.push_back(g);
  const std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("2.00 V |"), std::string::npos) << md;
  EXPECT_NE(md.find("**1.00** F |"), std::string::npos) << md;
  EXPECT_NE(md.find("cudnnGet_v7 picks cudnn.not_in_table (not measured by find)"), std::string::npos) << md;
  const std::string js = comparison_json(c);
  EXPECT_NE(js.find("\"vendor\": ["), std::string::npos);
  EXPECT_NE(js.find("\"source\":\"onednn_auto\""), std::string::npos) << js;
}

}  // namespace
}  // namespace convlab
