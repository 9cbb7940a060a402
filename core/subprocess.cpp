// run_process: posix_spawn with both output streams on pipes, drained with
// poll() so that neither can fill and block the child.
#include "core/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "core/timing.hpp"

extern char** environ;

namespace convlab {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) fail(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

pid_t spawn(const std::vector<std::string>& argv, Pipe& out, Pipe& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) fail("cannot run '" + printable(argv[0]) + "': " + std::strerror(rc));
  return pid;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) fail("run_process: no program given");
  Pipe out, err;
  const pid_t pid = spawn(argv, out, err);
  out.close_end(1);
  err.close_end(1);
  ProcessResult r;
  const double t0 = now_seconds();
  std::string* sink[2] = {&r.out, &r.err};
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    const double left = timeout_s - (now_seconds() - t0);
    if (left <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
    const int n = ::poll(fds, 2, int(std::min(left, 1.0) * 1000) + 1);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0)
        sink[i]->append(buf, size_t(got));
      else if (got == 0 || errno != EINTR)
        (i == 0 ? out : err).close_end(0);
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string executable_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace convlab
