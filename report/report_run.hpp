// The report run behind `convlab report`: on the CPU, then on the CUDA device
// when there is one, (1) the per-layer comparison of every available algorithm
// on every convolution layer of the network (autotune/compare.hpp) and (2) the
// training under each policy (run_training), written to a results folder as a
// whole (core/results_folder.hpp): report.md, report.html, train*.json/csv and
// layers*.json/csv, every JSON file carrying the run's id. Everything that can
// be refused is refused before the long work. A GPU half that fails does not
// lose the CPU half: its files are written and the result says so.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "train/trainer.hpp"

namespace convlab::train {

enum class GpuHalf { automatic, on, off };

struct ReportRunOptions {
  TrainConfig cfg;  // the CPU half's; its expectations checked (check_expectations)
  GpuHalf gpu = GpuHalf::automatic;  // automatic: run the GPU half when a CUDA device exists
  std::string out_dir = "results";   // created when missing (one level: its parent must exist)
  bool compare = true;               // false: no per-layer comparison
  std::string command;               // the command line, shown on the page
  // The trainer's progress lines and each measured comparison case.
  std::function<void(const std::string&)> progress;
  // The run's own lines ("convlab report: training tiny on cpu, ...", a GPU half skipped or failed).
  std::function<void(const std::string&)> log;
};

struct ReportRun {
  std::string dir, run_id;
  std::string markdown;               // report.md's text
  std::vector<std::string> written;   // the files written besides report.md and report.html
  std::vector<std::string> removed;   // an earlier run's files of the folder that this run did not write
  std::string stopped;                // a policy whose loss went non-finite (the first half's; "" = none)
  bool all_ran = true;                // every half had a policy that could run, and no half failed
  bool expectations_met = true;
};

// Throws Error (one line) before any work for policies or nets that cannot run, --gpu on without a
// usable GPU half, and an output folder that cannot be written.
ReportRun run_report(const ReportRunOptions& opt);

}  // namespace convlab::train
