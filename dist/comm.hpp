// The transports of data-parallel training: MPI between processes
// (one or many nodes, host memory) and NCCL between GPUs (one rank per GPU,
// bootstrapped over MPI). convlab never ships a transport of its own: what is
// not built in says why (mpi_unavailable_reason, nccl_unavailable_reason).
//
//   mpirun -np 2 convlab train alexnet --batch 32 --ranks 1,2
//
//   Comm& world = mpi_world();              // MPI_Init_thread once, finalised at exit
//   std::unique_ptr<Comm> two = world.first(2);  // ranks 0 and 1; null on the others
//   two->allreduce_sum(grad, n);            // in place, every rank gets the sum
//
// Ranks outside a sub-communicator wait in barrier(), which sleeps between
// polls: on a shared machine an idle rank must not spin on a core the measured
// ranks need (MPI's own barrier busy-polls).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace convlab::train {

// Whether a launcher (mpirun, srun, ...) started this process: its environment
// names a world (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, MPI_LOCALNRANKS).
bool launched_by_mpi();
// The world size and rank the launcher's environment gives (1 and 0 without one),
// read before MPI is initialised (bad input is refused before any MPI call).
int launcher_world_size();
int launcher_world_rank();

// "" when this build has the MPI transport, else why not.
std::string mpi_unavailable_reason();
// "" when the NCCL transport can be used here (built with CUDA + nccl.h, MPI to
// bootstrap it, and libnccl opened: on this first call), else why not.
std::string nccl_unavailable_reason();

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Ranks of this communicator on this rank's node, and this rank's place among them.
  virtual int local_size() const = 0;
  virtual int local_rank() const = 0;
  // Whether a second thread may run a collective while this one runs others
  // (MPI_THREAD_MULTIPLE); false: every collective from one thread at a time.
  virtual bool thread_multiple() const = 0;

  // Blocking collectives on host memory, in place: every rank ends with the sum / max.
  virtual void allreduce_sum(float* data, size_t count) = 0;
  virtual void allreduce_sum(double* data, size_t count) = 0;
  virtual void allreduce_max(double* data, size_t count) = 0;
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // Every rank's `count` doubles, rank-major, into `out` on every rank (size() * count).
  virtual void allgather(const double* send, size_t count, double* out) = 0;
  // Waits for every rank, sleeping between polls (see above).
  virtual void barrier() = 0;
  // The communicator of ranks [0, k) (1 <= k <= size()): non-null on those ranks, null on the others.
  // Collective: every rank calls it.
  virtual std::unique_ptr<Comm> first(int k) = 0;

  // One direction's bandwidth (bytes / second) while ranks 0 and 1 exchange
  // `bytes` both ways at once (MPI_Sendrecv, one step of a ring all-reduce): the
  // best of `reps` timed exchanges in each of three fresh buffer pairs, the
  // median of the three; 0 when size() < 2. Collective.
  virtual double exchange_bandwidth(size_t bytes, int reps) = 0;
  // "MPI (Open MPI 4.1.4), 2 ranks on 1 node, thread level MULTIPLE"
  virtual std::string describe() const = 0;
};

// The group of this process alone (no transport, no MPI): size 1, every
// collective the identity. What a single GPU's NCCL communicator is bootstrapped
// over when there is no MPI world (scripts/gpu-check.sh on a one-GPU machine).
std::unique_ptr<Comm> solo_comm();

// The MPI world: initialised on the first call (MPI_THREAD_MULTIPLE asked;
// what was granted is thread_multiple()), finalised at exit. Error when this
// build has no MPI (mpi_unavailable_reason()).
Comm& mpi_world();
// Whether mpi_world() has initialised MPI in this process.
bool mpi_initialised();
// Ends every rank of the world with `code` (MPI_Abort) when MPI is initialised
// (one rank's error must not leave the others waiting in a collective); else returns.
void abort_world(int code);

// A GPU all-reduce communicator (NCCL), one rank per GPU: rank r uses GPU
// local_rank % device count. Created collectively over `host` (which
// broadcasts NCCL's unique id). Error naming why when nccl_unavailable_reason()
// is not empty or no CUDA device exists.
class DeviceComm {
 public:
  virtual ~DeviceComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place on device memory, the sum over ranks (ncclSum), enqueued on `stream`.
  virtual void allreduce_sum_async(float* device_data, size_t count, void* stream) = 0;
  // The all-reduces between begin_group() and end_group() go out as one fused
  // operation (ncclGroupStart / ncclGroupEnd).
  virtual void begin_group() = 0;
  virtual void end_group() = 0;
  virtual std::string describe() const = 0;
};
std::unique_ptr<DeviceComm> make_nccl_comm(Comm& host);
// Makes GPU (host.local_rank() % GPUs) this process's current device, before any
// device memory of the rank is allocated (the nets, then NCCL, all on that GPU).
// Error without a CUDA device, or with more ranks on the node than GPUs.
void select_rank_gpu(const Comm& host);

}  // namespace convlab::train
