// The MPI transport of dist/comm.hpp (the C API of Debian's Open MPI; any MPI-3 works).
#include "dist/comm.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/timing.hpp"

#if CONVLAB_HAS_MPI
// The C API only (Open MPI's and MPICH's deprecated C++ bindings need their own library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace convlab::train {

namespace {
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return (end && *end == 0 && x >= 0 && x < (1 << 24)) ? int(x) : fallback;
}
}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

int launcher_world_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (int n = env_int(v, 0); n > 0) return n;
  return 1;
}

int launcher_world_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (int r = env_int(v, -1); r >= 0) return r;
  return 0;
}

namespace {
class SoloComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_size() const override { return 1; }
  int local_rank() const override { return 0; }
  bool thread_multiple() const override { return true; }
  void allreduce_sum(float*, size_t) override {}
  void allreduce_sum(double*, size_t) override {}
  void allreduce_max(double*, size_t) override {}
  void broadcast(void*, size_t, int root) override {
    if (root != 0) fail("broadcast from rank " + std::to_string(root) + " in a group of one");
  }
  void allgather(const double* send, size_t count, double* out) override { std::copy(send, send + count, out); }
  void barrier() override {}
  std::unique_ptr<Comm> first(int k) override {
    if (k != 1) fail("a communicator of " + std::to_string(k) + " ranks out of 1");
    return std::make_unique<SoloComm>();
  }
  double exchange_bandwidth(size_t, int) override { return 0; }
  std::string describe() const override { return "one process (no transport)"; }
};
}  // namespace

std::unique_ptr<Comm> solo_comm() { return std::make_unique<SoloComm>(); }

std::string mpi_unavailable_reason() {
#if CONVLAB_HAS_MPI
  return {};
#else
  return "this convlab was built without MPI (configure with -DCONVLAB_MPI=ON and an MPI installed: "
         "Debian's libopenmpi-dev, which scripts/install-deps.sh installs)";
#endif
}

#if CONVLAB_HAS_MPI

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fail(std::string("MPI ") + what + ": " + std::string(msg, size_t(len)));
}

// MPI counts are int: large buffers go in chunks.
constexpr size_t kChunk = size_t(1) << 30;
// All-reduces go in pieces of 1 MiB: each piece's transfer and sum stay in
// cache (Open MPI 4.1, 2 ranks, 244 MB of AlexNet gradients over shared memory:
// 89 ms in one call, 46 ms in 1 MiB pieces; the exchange bandwidth alone predicts
// 39-44 ms). MPI_Iallreduce (libnbc) took 230 ms: the blocking calls are used, on
// GradSync's communication thread when overlapping.
constexpr size_t kReduceChunk = size_t(1) << 20;

class MpiComm final : public Comm {
 public:
  MpiComm(MPI_Comm c, bool owned, bool multiple) : comm_(c), owned_(owned), multiple_(multiple) {
    MPI_Comm_rank(c, &rank_);
    MPI_Comm_size(c, &size_);
    MPI_Comm node;
    check(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "Comm_split_type");
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    int nodes_leader = local_rank_ == 0 ? 1 : 0;
    check(MPI_Allreduce(&nodes_leader, &nodes_, 1, MPI_INT, MPI_SUM, c), "Allreduce");
    MPI_Comm_free(&node);
  }
  ~MpiComm() override {
    if (owned_ && comm_ != MPI_COMM_NULL) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Comm_free(&comm_);
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }
  int local_rank() const override { return local_rank_; }
  bool thread_multiple() const override { return multiple_; }

  void allreduce_sum(float* data, size_t count) override { reduce(data, count, MPI_FLOAT, MPI_SUM); }
  void allreduce_sum(double* data, size_t count) override { reduce(data, count, MPI_DOUBLE, MPI_SUM); }
  void allreduce_max(double* data, size_t count) override { reduce(data, count, MPI_DOUBLE, MPI_MAX); }
  void broadcast(void* data, size_t bytes, int root) override {
    for (size_t off = 0; off < bytes; off += kChunk)
      check(MPI_Bcast(static_cast<char*>(data) + off, int(std::min(kChunk, bytes - off)), MPI_BYTE, root, comm_),
            "Bcast");
  }
  void allgather(const double* send, size_t count, double* out) override {
    check(MPI_Allgather(send, int(count), MPI_DOUBLE, out, int(count), MPI_DOUBLE, comm_), "Allgather");
  }
  void barrier() override {
    MPI_Request req;
    check(MPI_Ibarrier(comm_, &req), "Ibarrier");
    for (int done = 0;;) {
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "Test");
      if (done) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::unique_ptr<Comm> first(int k) override {
    if (k < 1 || k > size_) fail("a communicator of " + std::to_string(k) + " ranks out of " + std::to_string(size_));
    MPI_Comm sub = MPI_COMM_NULL;
    check(MPI_Comm_split(comm_, rank_ < k ? 0 : MPI_UNDEFINED, rank_, &sub), "Comm_split");
    if (sub == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiComm>(sub, true, multiple_);
  }
  double exchange_bandwidth(size_t bytes, int reps) override {
    if (size_ < 2) return 0;
    const int count = int(std::min(bytes, kChunk));
    // Three fresh pairs of buffers (allocated like the gradients: plain pages), each
    // exchanged twice untimed (first touch, the peer's mapping) then `reps` times;
    // the best of each pair, the median of the three: one unlucky allocation or one
    // descheduled exchange does not set the model (seen here: 2.7 vs 5.2 GB/s).
    std::vector<double> best;
    for (int a = 0; a < 3; ++a) {
      std::vector<char> send(size_t(count), 1), recv(size_t(count), 0);
      double b = 0;
      for (int r = -2; r < reps; ++r) {
        check(MPI_Barrier(comm_), "Barrier");
        const double t0 = now_seconds();
        if (rank_ < 2)
          check(MPI_Sendrecv(send.data(), count, MPI_BYTE, 1 - rank_, 7, recv.data(), count, MPI_BYTE, 1 - rank_, 7,
                             comm_, MPI_STATUS_IGNORE),
                "Sendrecv");
        double dt = now_seconds() - t0;
        check(MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, comm_), "Bcast");
        if (r >= 0) b = std::max(b, double(count) / dt);
      }
      best.push_back(b);
    }
    std::sort(best.begin(), best.end());
    return best[1];
  }
  std::string describe() const override {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string v(lib, size_t(len));
    if (auto nl = v.find_first_of(",\n"); nl != std::string::npos) v.resize(nl);
    return "MPI (" + v + "), " + std::to_string(size_) + " rank" + (size_ == 1 ? "" : "s") + " on " +
           std::to_string(nodes_) + " node" + (nodes_ == 1 ? "" : "s") + ", thread level " +
           (multiple_ ? "MULTIPLE" : "SERIALIZED");
  }

 private:
  MPI_Comm comm_;
  bool owned_, multiple_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, nodes_ = 1;

  void reduce(void* data, size_t count, MPI_Datatype type, MPI_Op op) {
    int elem = 0;
    MPI_Type_size(type, &elem);
    const size_t step = kReduceChunk / size_t(elem);
    for (size_t off = 0; off < count; off += step)
      check(MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(data) + off * size_t(elem), int(std::min(step, count - off)),
                          type, op, comm_),
            "Allreduce");
  }
};

bool g_initialised = false;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

Comm& mpi_world() {
  static std::unique_ptr<MpiComm> world = [] {
    int provided = 0;
    int argc = 0;
    char** argv = nullptr;
    check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "Init_thread");
    g_initialised = true;
    std::atexit(finalize_at_exit);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_SERIALIZED)
      fail("MPI granted thread level " + std::to_string(provided) +
           " below MPI_THREAD_SERIALIZED: the gradient all-reduce runs on its own thread");
    return std::make_unique<MpiComm>(MPI_COMM_WORLD, false, provided >= MPI_THREAD_MULTIPLE);
  }();
  return *world;
}

bool mpi_initialised() { return g_initialised; }

void abort_world(int code) {
  if (g_initialised) MPI_Abort(MPI_COMM_WORLD, code);
}

#else  // !CONVLAB_HAS_MPI

Comm& mpi_world() { fail("MPI: " + mpi_unavailable_reason()); }
bool mpi_initialised() { return false; }
void abort_world(int) {}

#endif

}  // namespace convlab::train
