// What a kernel thread calls inside the SIMT emulator: its lane, shared
// memory, __syncthreads, warp barriers and exchanges, and the checks that
// turn a misaligned access into a device fault (emulator.cpp has the model).
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/cuda/simt/emulator_state.hpp"

namespace convlab::simt::emu {

using namespace detail;

int lane_id() { return t_tid % 32; }

void* dynamic_shared() { return current("dynamic_shared").smem.p; }

void* static_shared(SharedDecl& decl, size_t bytes, size_t align) {
  Slot& S = current("CONVLAB_SHARED");
  Launch& L = *S.L;
  uint64_t tag = decl.tag.load(std::memory_order_relaxed);
  if ((tag >> 32) != (L.id & 0xffffffffu)) {
    std::lock_guard<std::mutex> lk(L.static_m);
    tag = decl.tag.load(std::memory_order_relaxed);
    if ((tag >> 32) != (L.id & 0xffffffffu)) {
      const size_t offset = (L.static_bytes + align - 1) / align * align;
      const size_t end = offset + bytes;
      std::string err;
      if (end > kMaxStaticSmem)
        err = "static shared memory (CONVLAB_SHARED) " + std::to_string(end) + " B > 48 KiB (49152 B)";
      else if (end + L.shmem > L.smem_total_limit)
        err = "static + dynamic shared memory " + std::to_string(end) + " + " + std::to_string(L.shmem) +
              " B > " + std::to_string(L.smem_total_limit) + " B per block" +
              (L.smem_total_limit == kDefaultMaxDynamicSmem ? " (without simt::set_max_dynamic_smem)" : "");
      if (!err.empty()) {
        S.report(err);
        throw Abort{};
      }
      L.static_bytes = end;
      tag = (uint64_t(L.id & 0xffffffffu) << 32) | offset;
      decl.tag.store(tag, std::memory_order_relaxed);
    }
  }
  return S.static_smem.p + (tag & 0xffffffffu);
}

void syncthreads(const Site& site) {
  Slot& S = current("__syncthreads");
  wait_at(S, kAtSync, "__syncthreads", site);
  S.sync->arrive_and_wait();
  S.recs[t_tid].state.store(kRunning);
}

namespace {
// x with its low 13 mantissa bits cleared: the value a tensor core reads as TF32.
float tf32_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u &= 0xffffe000u;
  std::memcpy(&x, &u, 4);
  return x;
}

Warp& enter_warp(Slot& S, unsigned mask, const char* op, const Site& site) {
  Warp& w = *S.warps[t_tid / 32];
  if (mask != w.full_mask)
    S.report(S.L->thread_name(t_tid) + ": " + op + " with mask 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", mask);
      return std::string(b);
    }() + " at " + site.file_name() + ":" + std::to_string(site.line()) +
             ": partial-mask warp operations are not supported (the mask must name every lane of the warp)");
  wait_at(S, kAtWarp, op, site);
  return w;
}
unsigned full(Slot& S, unsigned mask) { return mask == 0xffffffffu ? S.warps[t_tid / 32]->full_mask : mask; }
}  // namespace

void syncwarp(unsigned mask, const Site& site) {
  Slot& S = current("__syncwarp");
  Warp& w = enter_warp(S, full(S, mask), "__syncwarp", site);
  w.bar->arrive_and_wait();
  S.recs[t_tid].state.store(kRunning);
}

uint64_t exchange(unsigned mask, uint64_t value, int src, const Site& site) {
  Slot& S = current("__shfl_sync");
  Warp& w = enter_warp(S, full(S, mask), "__shfl*_sync", site);
  const int lane = t_tid - w.base;
  w.slot[lane] = value;
  w.bar->arrive_and_wait();
  const uint64_t out = (src >= 0 && src < w.size) ? w.slot[src] : value;
  w.bar->arrive_and_wait();  // nobody overwrites a slot before every lane read
  S.recs[t_tid].state.store(kRunning);
  return out;
}

void mma_m16n8k8_tf32(float (&d)[4], const float (&a)[4], const float (&b)[2], const Site& site) {
  Slot& S = current("mma.sync");
  Warp& w = enter_warp(S, S.warps[t_tid / 32]->full_mask, "mma.sync", site);
  if (w.size != 32)
    S.report(S.L->thread_name(t_tid) + ": mma.sync in a warp of " + std::to_string(w.size) + " threads at " +
             site.file_name() + ":" + std::to_string(site.line()) + ": a warp-level MMA needs all 32 lanes");
  const int lane = t_tid - w.base;
  for (int i = 0; i < 4; ++i) w.frag[lane][i] = a[i];
  for (int i = 0; i < 2; ++i) w.frag[lane][4 + i] = b[i];
  w.bar->arrive_and_wait();
  // PTX's m16n8k8 .tf32 fragments (g = lane / 4, t = lane % 4):
  //   A (16 x 8, row):  a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
  //   B (8 x 8, col):   b0 (t, g), b1 (t+4, g)
  //   C, D (16 x 8):    c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1)
  // A(r, k) is lane (r % 8)*4 + k % 4's register (r >= 8) + 2*(k >= 4); B(k, n)
  // is lane n*4 + k % 4's register k >= 4. Inputs read as TF32 (the low 13
  // mantissa bits ignored, as the tensor cores do); a TF32 product is exact in
  // fp32, summed into D in k order (no fmaf call: the counting build counts
  // those as the kernel's own FMAs).
  const int g = lane / 4, t = lane % 4;
  for (int e = 0; e < 4; ++e) {
    const int r = g + 8 * (e >> 1), n = 2 * t + (e & 1);
    float acc = d[e];
    for (int k = 0; k < 8; ++k) {
      const float av = tf32_bits(w.frag[(r % 8) * 4 + k % 4][(r >= 8) + 2 * (k >= 4)]);
      const float bv = tf32_bits(w.frag[n * 4 + k % 4][4 + (k >= 4)]);
      acc += av * bv;  // the product of two TF32 values is exact in fp32: one rounding, as an FMA
    }
    d[e] = acc;
  }
  if (count_hooks) count_hooks->mma();
  w.bar->arrive_and_wait();  // nobody overwrites a fragment before every lane read
  S.recs[t_tid].state.store(kRunning);
}

unsigned ballot(unsigned mask, bool pred, const Site& site) {
  Slot& S = current("__ballot_sync");
  Warp& w = enter_warp(S, full(S, mask), "__ballot_sync", site);
  w.slot[t_tid - w.base] = pred ? 1 : 0;
  w.bar->arrive_and_wait();
  unsigned bits = 0;
  for (int l = 0; l < w.size; ++l)
    if (w.slot[l]) bits |= 1u << l;
  w.bar->arrive_and_wait();
  S.recs[t_tid].state.store(kRunning);
  return bits;
}

void note_allocation(const void* p, size_t bytes) {
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  d.allocations[reinterpret_cast<uintptr_t>(p)] = bytes;
}

void note_free(const void* p) {
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  d.allocations.erase(reinterpret_cast<uintptr_t>(p));
}

__attribute__((noinline)) void note_atomic(const void* p, size_t bytes) {
  if (count_hooks) count_hooks->atomic(p, bytes, __builtin_return_address(0));
}

void check_device(const char* what) {
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  if (!d.fault.empty())
    throw DeviceFault(std::string("simt emulator: ") + what + " after a device fault: " + d.fault +
                      " (the emulated device, like a CUDA context, is unusable for the rest of this process)");
}

void misaligned(const void* p, size_t bytes, size_t align, const char* what) {
  throw Fault("misaligned address (cudaErrorMisalignedAddress): " + std::to_string(bytes) + "-byte " + what +
              " at " + hex(p) + ", which is not " + std::to_string(align) + "-byte aligned");
}

void misaligned_argument(const char* name, int index, const void* p, size_t align) {
  const std::string msg = std::string("simt emulator: kernel ") + name +
                          ": misaligned address (cudaErrorMisalignedAddress): pointer argument " +
                          std::to_string(index) + " = " + hex(p) + " is not " + std::to_string(align) +
                          "-byte aligned, as its pointee type requires";
  record_fault(msg);
  throw DeviceFault(msg);
}

}  // namespace convlab::simt::emu
