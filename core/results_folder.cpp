#include "core/results_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>

#include "core/error.hpp"
#include "core/paths.hpp"

namespace convlab {

std::string make_run_id() {
  char when[32] = "unknown-time";
  const std::time_t now = std::time(nullptr);
  struct tm utc {};
  if (::gmtime_r(&now, &utc)) std::strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &utc);
  std::random_device rd;
  char id[64];
  std::snprintf(id, sizeof id, "%s-%08x", when, unsigned(rd()));
  return id;
}

namespace {

constexpr const char* kStagePrefix = ".convlab-staging.";
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// What the signal handler removes: paths built before the handler is installed and never changed
// while it is, so the handler only reads them and calls unlink()/rmdir() (async-signal-safe).
struct Cleanup {
  std::vector<std::string> files;  // every family name inside the staging folder
  std::string stage, created_dir;  // created_dir: "" unless this run made DIR
  struct sigaction old[3];
};
std::atomic<Cleanup*> g_cleanup{nullptr};

void remove_staged(const Cleanup& c) {
  for (const std::string& f : c.files) ::unlink(f.c_str());
  ::rmdir(c.stage.c_str());
  if (!c.created_dir.empty()) ::rmdir(c.created_dir.c_str());  // only when still empty
}

void on_signal(int sig) {
  if (Cleanup* c = g_cleanup.exchange(nullptr)) {
    remove_staged(*c);
    for (size_t i = 0; i < 3; ++i)
      if (kSignals[i] == sig) ::sigaction(sig, &c->old[i], nullptr);  // c is leaked: the process is ending
  } else {
    ::signal(sig, SIG_DFL);
  }
  ::raise(sig);  // as the signal would have: the process ends (status 128 + sig in a shell)
}

void block_signals(bool block) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals) sigaddset(&set, s);
  ::pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}

// Removes staging folders of processes that no longer exist (killed before they could clean up).
void remove_dead_stages(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> dead;
  const std::string prefix = kStagePrefix;
  while (const dirent* de = ::readdir(d)) {
    const std::string name = de->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const char* digits = name.c_str() + prefix.size();
    char* end = nullptr;
    errno = 0;
    const long pid = std::strtol(digits, &end, 10);
    if (end == digits || *end != '\0' || errno != 0 || pid <= 0 || pid > (long(1) << 30)) continue;
    if (pid != long(::getpid()) && ::kill(pid_t(pid), 0) == 0) continue;  // a live run's
    if (pid != long(::getpid()) && errno != ESRCH) continue;               // not ours to judge
    dead.push_back(dir + "/" + name);
  }
  ::closedir(d);
  for (const std::string& p : dead) {
    std::error_code ec;
    std::filesystem::remove_all(p, ec);
  }
}

std::string in_quotes(const std::string& p) { return "'" + printable(p) + "'"; }

}  // namespace

ResultsFolder::ResultsFolder(std::string dir, std::vector<std::string> family, std::string what)
    : dir_(std::move(dir)), what_(std::move(what)), family_(std::move(family)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (g_cleanup.load()) fail(what_ + ": another results folder is being written by this process");
  struct stat st {};
  if (::stat(dir_.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) fail(what_ + " " + in_quotes(dir_) + " is not a folder");
    for (const std::string& f : family_) require_output_path(dir_ + "/" + f, what_);
  } else {
    // Not there: the folder itself is checked as an output path (its parent must exist and be writable).
    if (std::string why = check_output_path(dir_); !why.empty()) fail(what_ + ": " + why);
    if (::mkdir(dir_.c_str(), 0777) != 0) fail(what_ + ": cannot create " + in_quotes(dir_) + ": " + std::strerror(errno));
    created_ = true;
  }
  remove_dead_stages(dir_);
  stage_ = dir_ + "/" + kStagePrefix + std::to_string(::getpid());
  if (::mkdir(stage_.c_str(), 0700) != 0) {
    const std::string err = std::strerror(errno);
    if (created_) ::rmdir(dir_.c_str());
    fail(what_ + ": cannot create the staging folder " + in_quotes(stage_) + ": " + err);
  }
  auto* c = new Cleanup;
  for (const std::string& f : family_) c->files.push_back(stage_ + "/" + f);
  c->stage = stage_;
  if (created_) c->created_dir = dir_;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < 3; ++i) {
    ::sigaction(kSignals[i], nullptr, &c->old[i]);
    // A signal the process ignores (started with nohup, or in the background of a script) stays ignored.
    if (c->old[i].sa_handler != SIG_IGN) ::sigaction(kSignals[i], &sa, nullptr);
  }
  g_cleanup.store(c);
}

ResultsFolder::~ResultsFolder() { discard(); }

void ResultsFolder::discard() noexcept {
  block_signals(true);
  release();
  block_signals(false);
}

void ResultsFolder::release() noexcept {
  if (Cleanup* c = g_cleanup.exchange(nullptr)) {
    if (!committed_) remove_staged(*c);
    for (size_t i = 0; i < 3; ++i) ::sigaction(kSignals[i], &c->old[i], nullptr);
    delete c;
  }
}

void ResultsFolder::write(const std::string& name, const std::string& contents) {
  if (std::find(family_.begin(), family_.end(), name) == family_.end())
    fail(what_ + ": '" + printable(name) + "' is not a file of this results folder");
  const auto failed = [&](const std::string& why) {
    throw WriteError("cannot write " + in_quotes(dir_ + "/" + name) + ": " + why);
  };
  const std::string path = stage_ + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) failed(std::strerror(errno));
  if (const int err = write_sync_close(fd, contents)) {
    ::unlink(path.c_str());
    failed(std::strerror(err));
  }
  if (std::find(written_.begin(), written_.end(), name) == written_.end()) written_.push_back(name);
}

std::vector<std::string> ResultsFolder::commit() {
  std::vector<std::string> removed;
  block_signals(true);  // held until the folder is whole; a pending SIGINT ends the process after that
  std::string error;
  for (const std::string& f : written_)
    if (std::rename((stage_ + "/" + f).c_str(), (dir_ + "/" + f).c_str()) != 0) {
      error = "cannot write " + in_quotes(dir_ + "/" + f) + ": " + std::strerror(errno);
      break;
    }
  if (error.empty())
    for (const std::string& f : family_) {
      if (std::find(written_.begin(), written_.end(), f) != written_.end()) continue;
      const std::string old = dir_ + "/" + f;
      if (::unlink(old.c_str()) == 0) removed.push_back(f);
      else if (errno != ENOENT) error = "cannot remove " + in_quotes(old) + " (of an earlier run): " + std::strerror(errno);
    }
  if (error.empty()) {
    committed_ = true;
    ::rmdir(stage_.c_str());
    if (const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
      ::fsync(fd);  // the renames themselves on disk
      ::close(fd);
    }
  }
  release();
  block_signals(false);
  if (!error.empty()) throw WriteError(error);
  return removed;
}

}  // namespace convlab
