// A program that links the installed convlab (examples/consumer/CMakeLists.txt)
// and uses each part of the public API once:
//   consumer CACHE_FILE [ALGORITHM]
// 1. parses a problem, 2. looks an algorithm up by its dotted name, 3. runs it
// forward on host tensors and checks it against the fp64 reference within its
// declared tolerance, 4. asks get for a prediction and 5. the tuner for the
// fastest algorithm through CACHE_FILE (find on a miss; a second run of this
// program reads it back: "cache hit"). Exit 0 when all of it worked, 1 when a
// result is wrong, 2 for bad arguments, 3 for any convlab error.
#include <convlab/convlab.hpp>

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: consumer CACHE_FILE [ALGORITHM]\n");
    return 2;
  }
  const std::string cache_path = argv[1];
  const std::string name = argc > 2 ? argv[2] : "cpu.im2col_gemm";
  try {
    using namespace convlab;
    const ConvProblem p = parse_problem("mb2ic8ih10oc8oh10kh3ph1n\"consumer\"");
    const Algorithm* algo = find_algorithm(name);
    if (!algo) {
      std::fprintf(stderr, "consumer: no algorithm named '%s'\n", name.c_str());
      return 2;
    }
    ConvData data = ConvData::random(p, 7);
    run_on_host(*algo, p, Direction::fwd, data);
    const Reference ref = compute_reference(p, Direction::fwd, data);
    const ErrorStats err = compare(data.output(Direction::fwd).data(), ref, algo->tolerance(p, Direction::fwd));
    std::printf("run: %s fwd on %s: max |err| %.3g, %.3g of its bound: %s\n", algo->name().data(),
                p.canonical().c_str(), err.max_abs, err.worst_ratio, err.passed() ? "ok" : "WRONG");
    if (!err.passed()) return 1;

    const auto predicted = get(p, Direction::fwd, ExecContext{});
    if (predicted.empty() || predicted.front().status != PerfStatus::ok) {
      std::fprintf(stderr, "consumer: get ranked nothing runnable\n");
      return 1;
    }
    std::printf("get: %s predicted %.3g ms\n", predicted.front().algo.c_str(), predicted.front().time * 1e3);

    const Choice c = tuned_algorithm(p, Direction::fwd, cache_path);
    std::printf("tuned: %s (%s)\n", c.algo->name().data(), c.why.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 3;
  }
}
