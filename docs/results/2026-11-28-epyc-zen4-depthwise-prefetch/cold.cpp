// experiment: warm vs flushed vs interleaved timing of two algorithms
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/problem_list.hpp"
#include "core/timing.hpp"
#include "core/stats.hpp"
using namespace convlab;
int main(int argc, char** argv) {
  ConvProblem p = problem_from_text(argv[1], 16);
  Direction dir = parse_direction(argv[2]);
  std::vector<std::string> algos;
  for (int i = 3; i < argc; ++i) algos.push_back(argv[i]);
  ExecContext ctx; ctx.threads = 2;
  ConvData data = ConvData::random(p, 1);
  for (auto& name : algos) {
    const Algorithm& a = get_algorithm(name);
    ConvRunner r(a, p, dir, ctx);
    r.upload(data);
    TimingOptions w; w.warmup = 3; w.warmup_seconds = 0.05; w.min_reps = 30; w.max_reps = 30; w.max_seconds = 10;
    TimingStats sw = r.time(w);
    TimingOptions f = w; f.flush_caches = true;
    TimingStats sf = r.time(f);
    TimingStats sw2 = r.time(w);
    std::printf("%-24s warm %.3f  flushed %.3f  warm %.3f ms\n", name.c_str(), sw.median * 1e3, sf.median * 1e3, sw2.median*1e3);
  }
}
