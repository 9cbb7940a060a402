// Running a helper program of convlab's own and capturing what it prints.
#pragma once
#include <string>
#include <vector>

namespace convlab {

struct ProcessResult {
  int exit_code = -1;      // the program's exit status; -1 when it was killed by a signal
  bool timed_out = false;  // killed after timeout_s
  std::string out, err;    // everything it wrote to stdout and stderr
};

// Runs argv (argv[0] a path, not searched in PATH) with stdin closed, waits
// for it at most timeout_s seconds (then kills it: timed_out) and returns its
// output. Throws Error with one line when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s);

// The folder holding this process's executable ("" when it cannot be read).
std::string executable_dir();

}  // namespace convlab
