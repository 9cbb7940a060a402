// A results folder written as a whole: `convlab report --out DIR` puts every
// file of one run there at once, so that DIR never holds one run's layers.json
// beside another run's train.json, and an interrupted run leaves the previous
// complete folder as it was.
//
// Every file is written into a staging folder inside DIR
// (DIR/.convlab-staging.<pid>, hidden, on DIR's file system); commit() renames
// each into DIR (each rename atomic: a reader sees the old file or the new one)
// and removes the files of the folder's family that this run did not write
// (an older layers.json when this run compared nothing). Until commit(), DIR is
// untouched. SIGINT, SIGTERM and SIGHUP before it remove the staging folder
// (and DIR itself when this run created it and it is still empty) and end the
// process as the signal would; a staging folder left by a process that died
// harder (SIGKILL, power) is removed by the next run on DIR. Signals are held
// during commit(), so it completes.
//
// Every JSON results file also carries the run's id (make_run_id()), which
// `convlab html` compares: files of different runs are never drawn together
// unless asked.
#pragma once
#include <string>
#include <vector>

namespace convlab {

// A fresh id for the results files of one command run, "20250101T120000Z-1a2b3c4d" (UTC time and
// 32 random bits).
std::string make_run_id();

class ResultsFolder {
 public:
  // `dir`: an existing folder, or a new one whose parent exists (created here, one level only).
  // `family`: every file name a run may write there; each that exists must be replaceable (checked
  // now, with check_output_path: a read-only one is refused). `what` starts every message
  // ("convlab report: --out"). Throws Error, one line, before anything is written.
  ResultsFolder(std::string dir, std::vector<std::string> family, std::string what);
  // Without commit(): the staging folder is removed, DIR is as it was.
  ~ResultsFolder();
  ResultsFolder(const ResultsFolder&) = delete;
  ResultsFolder& operator=(const ResultsFolder&) = delete;

  const std::string& dir() const { return dir_; }
  // Writes `name` (one of the family) into the staging folder; a failure is a WriteError naming
  // DIR/name and the system's reason.
  void write(const std::string& name, const std::string& contents);
  // Moves every written file into DIR, removes the family's files this run did not write, and
  // removes the staging folder. Returns the names removed.
  std::vector<std::string> commit();

 private:
  void discard() noexcept;
  void release() noexcept;  // signals held: the handlers restored, the staging folder removed unless committed

  std::string dir_, what_, stage_;
  std::vector<std::string> family_, written_;
  bool created_ = false, committed_ = false;
};

}  // namespace convlab
