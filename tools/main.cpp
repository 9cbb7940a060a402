// convlab: the command-line front end. One line per subcommand in commands().
//
// Exit codes (docs/cli.md's CLI block says the same; tests/tools/readme_test.cpp keeps them together):
//   0  the command did what was asked (also --help)
//   1  the work ran and a check it reports failed:
//        conv     --check found an error over the algorithm's bound, or a guard zone was overwritten
//        demo     an algorithm exceeded its declared error bound
//        tune     some (layer, direction) has no algorithm within the constraints
//        cache    check found warnings
//        train    no policy could run (each was skipped, with its reason, while choosing), a policy's loss
//                 went non-finite (it stopped there; the report never counts it as agreeing), or an
//                 --expect not met
//        report   no policy could run in a half, a policy's loss went non-finite, the GPU half failed
//                 (the CPU half is still written), or an --expect not met
//      and every command whose results could not be written after the work (a full disk, a file-size
//      limit, standard output closed or full): one line naming the file and the system's reason.
//   2  bad input, refused before any long work: arguments, problem strings, .npy files, cache files,
//      output paths, a policy or algorithm that cannot run here, no CUDA device for --device cuda,
//      memory the run cannot have (every command that allocates tensors or workspace counts them
//      first against the available memory: core/device.hpp require_memory; an allocation that fails
//      anyway is also 2, its line naming the buffer and its size);
//      one line on stderr ("error: ...") with every user-supplied text escaped (printable()).
//   3  the CUDA device faulted (a sticky error: illegal address, launch failure, ...); find, tune, layers,
//      train and conv stop at the first fault with one line on stderr instead of failing every later candidate.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "algorithms/plugin.hpp"
#include "autotune/build_identity.hpp"
#include "core/build_id.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "dist/comm.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"algos", "list every registered algorithm and whether it can run here", cmd_algos},
      {"problem", "parse benchdnn problem strings / layer ids, print canonical form and sizes", cmd_problem},
      {"conv", "run one algorithm on one problem and direction (.npy in/out, --check)", cmd_conv},
      {"peak", "measure the CPU's fp32 FMA peak (GFLOP/s) per thread count", cmd_peak},
      {"demo", "built-in example: every CPU algorithm on AlexNet's layers, checked and timed", cmd_demo},
      {"tune", "autotune layers / networks: find (measured) vs get (cost model), with a cache", cmd_tune},
      {"cache", "show, check or merge autotune cache files", cmd_cache},
      {"layers", "per-layer comparison of every algorithm (time, GFLOP/s, %peak, error, get/find picks)", cmd_layers},
      {"train", "train AlexNet under each algorithm policy: iteration time, speedups, per-layer attribution, losses", cmd_train},
      {"report", "the main job: per-layer algorithm comparison + training under each policy, written to results/", cmd_report},
      {"html", "redraw a results folder's report.html (charts and tables) from its JSON files", cmd_html},
  };
  return list;
}

}  // namespace convlab::cli

namespace {
// One error line and the exit code. Under mpirun every rank runs the same checks
// before MPI starts: rank 0 alone prints them (one line, not one per rank). Once
// MPI runs, a rank's error ends the whole world (MPI_Abort): the other ranks would
// otherwise wait in a collective forever.
int error_exit(int code, const std::string& msg) {
  namespace t = convlab::train;
  const int rank = t::launcher_world_rank();
  if (t::mpi_initialised())
    std::fprintf(stderr, "error: rank %d: %s\n", rank, convlab::printable(msg).c_str());
  else if (rank == 0)
    std::fprintf(stderr, "error: %s\n", convlab::printable(msg).c_str());
  std::fflush(stderr);
  t::abort_world(code);
  return code;
}

void usage(FILE* f) {
  std::fprintf(f, "usage: convlab <command> [options]   (convlab <command> --help for details)\n\ncommands:\n");
  for (const auto& c : convlab::cli::commands()) std::fprintf(f, "  %-10s %s\n", c.name, c.summary);
}
}  // namespace

int main(int argc, char** argv) {
  // Plugins (--plugin PATH anywhere on the line, CONVLAB_PLUGINS) register their algorithms before any
  // argument is read (algorithms/plugin.hpp).
  try {
    convlab::load_plugins(argc, argv);
  } catch (const std::exception& e) {
    return error_exit(2, e.what());
  }
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    // Line 2: this build and the versions of the libraries it calls (autotune/build_identity.hpp).
    std::printf("convlab %s (build %s)\n%s\n", CONVLAB_VERSION, std::string(convlab::build_id()).c_str(),
                convlab::build_identity(convlab::DeviceKind::cpu).c_str());
    return 0;
  }
  // Over a file-size limit (ulimit -f) a write must fail with EFBIG and be reported, not kill the process.
  std::signal(SIGXFSZ, SIG_IGN);
  for (const auto& c : convlab::cli::commands()) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      (void)convlab::cpu_info();  // a bad CONVLAB_ISA is one line and exit 2 before any work
      const int rc = c.run(argc - 1, argv + 1);
      // What was printed must have arrived: a full disk under `> out.txt` is a lost result, not success.
      errno = 0;
      if (std::fflush(stdout) != 0)
        return error_exit(1, std::string("cannot write the standard output: ") + std::strerror(errno));
      if (std::ferror(stdout)) return error_exit(1, "cannot write the standard output: a write to it failed");
      return rc;
    } catch (const convlab::DeviceFault& e) {
      return error_exit(3, e.what());
    } catch (const convlab::WriteError& e) {
      return error_exit(1, e.what());
    } catch (const convlab::Error& e) {
      // printable() again (in error_exit): whatever text a message carries, it stays one line on a terminal.
      return error_exit(2, e.what());
    } catch (const std::bad_alloc&) {
      // convlab's own buffers throw OutOfMemory naming what and how much; this is a container's.
      return error_exit(2, "out of memory: an allocation of unknown size failed (std::bad_alloc)");
    } catch (const std::exception& e) {
      return error_exit(2, e.what());
    }
  }
  std::fprintf(stderr, "error: unknown command '%s' (run 'convlab --help')\n", convlab::printable(argv[1]).c_str());
  return 2;
}
