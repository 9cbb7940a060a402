// Each algorithm's code version: the build-time generation rule
// (cmake/code_versions.cmake run on a small tree of its own) and the table this
// build generated (autotune/code_version.hpp, autotune/build_identity.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "algorithms/registry.hpp"
#include "autotune/build_identity.hpp"
#include "autotune/code_version.hpp"

namespace convlab {
namespace {

namespace fs = std::filesystem;

struct Row {
  std::string hash, libs;
};

class CodeVersions : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("convlab_code_versions_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    // Two algorithm units and what they compile from:
    //   cpu/a: a.hpp, a.cpp -> kernels/cpu/fa/ (fa.hpp, and fa_avx2.cpp, which nobody includes)
    //   cpu/b: b.hpp, b.cpp -> kernels/cpu/gemm/ (the SGEMM); b_blas.cpp calls OpenBLAS
    //   helper.hpp declares no algorithm: not a unit
    put("algorithms/algorithm.hpp", "#pragma once\n");
    put("algorithms/cpu/a.hpp", "#pragma once\n#include \"algorithms/algorithm.hpp\"\n");
    put("algorithms/cpu/a.cpp", "#include \"algorithms/cpu/a.hpp\"\n#include \"kernels/cpu/fa/fa.hpp\"\n");
    put("kernels/cpu/fa/fa.hpp", "void fa();\n");
    put("kernels/cpu/fa/fa_avx2.cpp", "void fa() {}\n");
    put("algorithms/cpu/b.hpp", "#pragma once\n#include \"algorithms/algorithm.hpp\"\n");
    put("algorithms/cpu/b.cpp", "#include \"algorithms/cpu/b.hpp\"\n#include \"kernels/cpu/gemm/sgemm.hpp\"\n");
    put("algorithms/cpu/b_blas.cpp", "#include <cblas.h>\n\n#include \"algorithms/cpu/b.hpp\"\n");
    put("kernels/cpu/gemm/sgemm.hpp", "void sgemm();\n");
    put("kernels/cpu/gemm/sgemm.cpp", "void sgemm() {}\n");
    put("algorithms/cpu/helper.hpp", "#pragma once\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  // Runs the generator on the tree; the units it wrote, by name.
  std::map<std::string, Row> generate() {
    const fs::path out = root_ / "out.cpp";
    const std::string cmd = "cmake -DSRC=" + root_.string() + " -DOUT=" + out.string() + " -P " +
                            std::string(CONVLAB_SOURCE_DIR) + "/cmake/code_versions.cmake";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    static const std::regex row("\\{\"([^\"]+)\", \"([0-9a-f]{12})\", \"([^\"]*)\",");
    std::map<std::string, Row> units;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it)
      units[(*it)[1]] = {(*it)[2], (*it)[3]};
    return units;
  }
  fs::path root_;
};

TEST_F(CodeVersions, AHashChangesWithItsOwnSourcesOnly) {
  const auto v0 = generate();
  ASSERT_TRUE(v0.count("cpu/a") && v0.count("cpu/b")) << v0.size();
  EXPECT_FALSE(v0.count("cpu/helper"));  // declares no algorithm
  EXPECT_EQ(v0.at("cpu/a").libs, "");
  EXPECT_EQ(v0.at("cpu/b").libs, "openblas");
  EXPECT_NE(v0.at("cpu/a").hash, v0.at("cpu/b").hash);
  EXPECT_EQ(generate().at("cpu/a").hash, v0.at("cpu/a").hash);  // deterministic

  // An ISA variant of a's kernel family (compiled, never included): a changes, b does not.
  put("kernels/cpu/fa/fa_avx2.cpp", "void fa() { /* faster */ }\n");
  const auto v1 = generate();
  EXPECT_NE(v1.at("cpu/a").hash, v0.at("cpu/a").hash);
  EXPECT_EQ(v1.at("cpu/b").hash, v0.at("cpu/b").hash);

  // The SGEMM that b calls: b changes, a does not.
  put("kernels/cpu/gemm/sgemm.cpp", "void sgemm() { /* retuned */ }\n");
  const auto v2 = generate();
  EXPECT_EQ(v2.at("cpu/a").hash, v1.at("cpu/a").hash);
  EXPECT_NE(v2.at("cpu/b").hash, v1.at("cpu/b").hash);

  // b's vendor-library part is a member too.
  put("algorithms/cpu/b_blas.cpp", "#include <cblas.h>\n\n#include \"algorithms/cpu/b.hpp\"\n// changed\n");
  const auto v3 = generate();
  EXPECT_EQ(v3.at("cpu/a").hash, v2.at("cpu/a").hash);
  EXPECT_NE(v3.at("cpu/b").hash, v2.at("cpu/b").hash);

  // a starts calling the SGEMM: from then on a SGEMM change is a's too.
  put("algorithms/cpu/a.cpp",
      "#include \"algorithms/cpu/a.hpp\"\n#include \"kernels/cpu/fa/fa.hpp\"\n#include \"kernels/cpu/gemm/sgemm.hpp\"\n");
  const auto v4 = generate();
  put("kernels/cpu/gemm/sgemm.hpp", "void sgemm(int);\n");
  const auto v5 = generate();
  EXPECT_NE(v5.at("cpu/a").hash, v4.at("cpu/a").hash);
  EXPECT_NE(v5.at("cpu/b").hash, v4.at("cpu/b").hash);

  // The interface every algorithm includes: everyone.
  put("algorithms/algorithm.hpp", "#pragma once\nstruct Algorithm;\n");
  const auto v6 = generate();
  EXPECT_NE(v6.at("cpu/a").hash, v5.at("cpu/a").hash);
  EXPECT_NE(v6.at("cpu/b").hash, v5.at("cpu/b").hash);

  // An unchanged tree leaves the generated file alone (nothing recompiles).
  const auto before = fs::last_write_time(root_ / "out.cpp");
  generate();
  EXPECT_EQ(fs::last_write_time(root_ / "out.cpp"), before);
}

// This build's table: every registered algorithm has its unit, shares it with its family's
// siblings only, and names the libraries it calls.
TEST(CodeVersion, EveryRegisteredAlgorithmHasItsUnit) {
  for (const Algorithm* a : registry()) {
    const CodeUnit* u = code_unit_of(a->source_file());
    ASSERT_NE(u, nullptr) << a->name() << " from '" << a->source_file() << "'";
    EXPECT_EQ(algorithm_version(*a).code, std::string(u->name) + " " + u->hash) << a->name();
  }
  auto version = [](const char* name) { return algorithm_version(get_algorithm(name)); };
  EXPECT_EQ(version("cpu.direct").code.rfind("cpu/direct ", 0), 0u);
  EXPECT_EQ(version("cpu.direct").libs, "");
  EXPECT_EQ(version("cpu.fft").code, version("cpu.fft_fftw").code);  // one unit: algorithms/cpu/fft.*
  EXPECT_NE(version("cpu.fft").code, version("cpu.direct").code);
  EXPECT_EQ(version("cpu.fft_fftw").libs.rfind("FFTW ", 0), 0u) << version("cpu.fft_fftw").libs;
  EXPECT_NE(version("cpu.im2col_openblas").libs.find("OpenBLAS"), std::string::npos) << version("cpu.im2col_openblas").libs;
#ifdef CONVLAB_HAS_ONEDNN
  EXPECT_EQ(version("onednn.auto").libs.rfind("oneDNN ", 0), 0u) << version("onednn.auto").libs;
#endif
  // The probe's key: its own code and every CPU algorithm's.
  EXPECT_EQ(probe_identity().rfind("probe ", 0), 0u) << probe_identity();
  EXPECT_NE(probe_identity().find(" algorithms "), std::string::npos) << probe_identity();
}

TEST(CodeVersion, UnitOfAFileWithAnyPrefix) {
  const CodeUnit* fft = find_code_unit("cpu/fft");
  ASSERT_NE(fft, nullptr);
  EXPECT_EQ(code_unit_of("algorithms/cpu/fft.hpp"), fft);
  EXPECT_EQ(code_unit_of("/home/me/convlab/algorithms/cpu/fft_fftw.cpp"), fft);
  EXPECT_EQ(code_unit_of("../../algorithms/cpu/fft.cpp"), fft);
  EXPECT_EQ(code_unit_of("/x/myalgorithms/cpu/fft.hpp"), nullptr);  // not the same path
  EXPECT_EQ(code_unit_of(""), nullptr);
  EXPECT_EQ(code_unit_of("kernels/cpu/fft/fft.cpp"), nullptr);  // a file of the unit, not a member
}

}  // namespace
}  // namespace convlab
