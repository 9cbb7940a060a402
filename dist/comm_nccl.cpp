// The NCCL transport of dist/comm.hpp: one rank per GPU, the unique id
// broadcast over the MPI communicator, all-reduce (ncclAvg) enqueued on the
// caller's stream (dist/grad_sync.cpp gives it a communication stream that
// waits on each layer's backward by an event). libnccl is opened when the
// transport is first asked for (core/cuda_libraries.hpp), so a machine without
// it runs everything else.
#include <cstdlib>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "dist/comm.hpp"

#if CONVLAB_HAS_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include "core/cuda_libraries.hpp"
#endif

namespace convlab::train {

#if CONVLAB_HAS_NCCL
namespace {

#define CONVLAB_NCCL_FUNCTIONS(X)                                                                        \
  X(ncclGetErrorString) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclGetVersion) X(ncclCommDestroy)    \
  X(ncclAllReduce) X(ncclGroupStart) X(ncclGroupEnd)
struct NcclApi {
  CONVLAB_NCCL_FUNCTIONS(CONVLAB_LAZY_FUNCTION)
};
// Throws Error "NCCL not loaded: <why>" where libnccl cannot be opened.
const NcclApi& nccl() {
  return lazy_table<NcclApi>(cuda_library(CudaLibrary::nccl), [](const LazyLibrary& lib, NcclApi& table) {
    CONVLAB_NCCL_FUNCTIONS(CONVLAB_LAZY_BIND)
  });
}

}  // namespace
#endif

std::string nccl_unavailable_reason() {
#if CONVLAB_HAS_NCCL
  if (!mpi_unavailable_reason().empty()) return "NCCL is bootstrapped over MPI: " + mpi_unavailable_reason();
  return lazy_reason(nccl);
#elif CONVLAB_HAS_CUDA
  return "this convlab was built without NCCL (nccl.h or libnccl was not found beside the CUDA toolkit)";
#else
  return "this convlab was built without CUDA, so without NCCL";
#endif
}

#if CONVLAB_HAS_NCCL

namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) fail(std::string("NCCL ") + what + ": " + nccl().ncclGetErrorString(r));
}

class NcclComm final : public DeviceComm {
 public:
  NcclComm(Comm& host) : rank_(host.rank()), size_(host.size()) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1)
      fail("NCCL: no CUDA device (" + cuda_info().reason + ")");
    device_ = host.local_rank() % devices;
    if (host.local_size() > devices)
      fail("NCCL: " + std::to_string(host.local_size()) + " ranks on this node but " + std::to_string(devices) +
           " GPUs: one rank per GPU (mpirun -np <GPUs per node x nodes>)");
    if (cudaSetDevice(device_) != cudaSuccess) fail("NCCL: cudaSetDevice(" + std::to_string(device_) + ") failed");
    ncclUniqueId id{};
    if (rank_ == 0) check_nccl(nccl().ncclGetUniqueId(&id), "GetUniqueId");
    host.broadcast(&id, sizeof id, 0);
    check_nccl(nccl().ncclCommInitRank(&comm_, size_, id, rank_), "CommInitRank");
    int v = 0;
    nccl().ncclGetVersion(&v);
    version_ = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  }
  ~NcclComm() override {
    if (comm_) nccl().ncclCommDestroy(comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum_async(float* data, size_t count, void* stream) override {
    check_nccl(nccl().ncclAllReduce(data, data, count, ncclFloat32, ncclSum, comm_, static_cast<cudaStream_t>(stream)),
               "AllReduce");
  }
  void begin_group() override { check_nccl(nccl().ncclGroupStart(), "GroupStart"); }
  void end_group() override { check_nccl(nccl().ncclGroupEnd(), "GroupEnd"); }
  std::string describe() const override {
    return "NCCL " + version_ + ", " + std::to_string(size_) + " GPU rank" + (size_ == 1 ? "" : "s") +
           " (this rank on GPU " + std::to_string(device_) + ")";
  }

 private:
  int rank_, size_, device_ = 0;
  ncclComm_t comm_ = nullptr;
  std::string version_;
};

}  // namespace

std::unique_ptr<DeviceComm> make_nccl_comm(Comm& host) {
  if (!cuda_info().available) fail("NCCL: no CUDA device (" + cuda_info().reason + ")");
  (void)nccl();  // "NCCL not loaded: ..." before anything else
  return std::make_unique<NcclComm>(host);
}

void select_rank_gpu(const Comm& host) {
  int devices = 0;
  if (!cuda_info().available || cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1)
    fail("no CUDA device (" + cuda_info().reason + ")");
  if (host.local_size() > devices)
    fail(std::to_string(host.local_size()) + " ranks on this node but " + std::to_string(devices) +
         " GPUs: one rank per GPU (mpirun -np <GPUs per node x nodes>)");
  if (cudaSetDevice(host.local_rank() % devices) != cudaSuccess)
    fail("cudaSetDevice(" + std::to_string(host.local_rank() % devices) + ") failed");
}

#else

std::unique_ptr<DeviceComm> make_nccl_comm(Comm&) { fail("NCCL: " + nccl_unavailable_reason()); }
void select_rank_gpu(const Comm&) { fail("NCCL: " + nccl_unavailable_reason()); }

#endif

}  // namespace convlab::train
