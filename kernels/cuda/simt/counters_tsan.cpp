// The entry points ThreadSanitizer's compile-time instrumentation calls
// (-fsanitize=thread on the kernel translation units of the counting build,
// linked without libtsan): plain loads and stores are recorded by
// counters.cpp with the instruction's address (the return address); atomics
// are performed as asked and not recorded here (simt.hpp's atomicAdd & co.
// record themselves once per call, through emu::note_atomic); function
// entry / exit and initialisation do nothing. fmaf, the kernels' arithmetic,
// is libm's, interposed: each call is recorded (counters.cpp), then computed by
// libm. Not instrumented itself.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/simt/counters_runtime.hpp"

using convlab::simt::counters::kLoad;
using convlab::simt::counters::kStore;
using convlab::simt::counters::record;
using convlab::simt::counters::record_fma;

#define CONVLAB_RA __builtin_return_address(0)

extern "C" {

void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}

#define CONVLAB_TSAN_ACCESS(N)                                                                 \
  void __tsan_read##N(void* p) { record(p, N, kLoad, CONVLAB_RA); }                            \
  void __tsan_write##N(void* p) { record(p, N, kStore, CONVLAB_RA); }                          \
  void __tsan_unaligned_read##N(void* p) { record(p, N, kLoad, CONVLAB_RA); }                  \
  void __tsan_unaligned_write##N(void* p) { record(p, N, kStore, CONVLAB_RA); }                \
  void __tsan_volatile_read##N(void* p) { record(p, N, kLoad, CONVLAB_RA); }                   \
  void __tsan_volatile_write##N(void* p) { record(p, N, kStore, CONVLAB_RA); }
CONVLAB_TSAN_ACCESS(1)
CONVLAB_TSAN_ACCESS(2)
CONVLAB_TSAN_ACCESS(4)
CONVLAB_TSAN_ACCESS(8)
CONVLAB_TSAN_ACCESS(16)
#undef CONVLAB_TSAN_ACCESS

void __tsan_read_range(void* p, unsigned long n) { record(p, n, kLoad, CONVLAB_RA); }
void __tsan_write_range(void* p, unsigned long n) { record(p, n, kStore, CONVLAB_RA); }

void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// Every memory order is performed as sequentially consistent (stronger than asked).
#define CONVLAB_TSAN_ATOMIC(N, T)                                                                          \
  T __tsan_atomic##N##_load(const volatile T* a, int) { return __atomic_load_n(a, __ATOMIC_SEQ_CST); }   \
  void __tsan_atomic##N##_store(volatile T* a, T v, int) { __atomic_store_n(a, v, __ATOMIC_SEQ_CST); }   \
  T __tsan_atomic##N##_exchange(volatile T* a, T v, int) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##N##_fetch_add(volatile T* a, T v, int) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##N##_fetch_sub(volatile T* a, T v, int) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##N##_fetch_and(volatile T* a, T v, int) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##N##_fetch_or(volatile T* a, T v, int) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }   \
  T __tsan_atomic##N##_fetch_xor(volatile T* a, T v, int) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##N##_fetch_nand(volatile T* a, T v, int) {                                             \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                  \
  }                                                                                                      \
  int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {                   \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
  }                                                                                                      \
  int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {                     \
    return __atomic_compare_exchange_n(a, c, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);               \
  }                                                                                                      \
  T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T c, T v, int, int) {                         \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                    \
    return c;                                                                                            \
  }
CONVLAB_TSAN_ATOMIC(8, uint8_t)
CONVLAB_TSAN_ATOMIC(16, uint16_t)
CONVLAB_TSAN_ATOMIC(32, uint32_t)
CONVLAB_TSAN_ATOMIC(64, uint64_t)
#undef CONVLAB_TSAN_ATOMIC

float fmaf(float a, float b, float c) {
  using Fmaf = float (*)(float, float, float);
  static const Fmaf libm = reinterpret_cast<Fmaf>(dlsym(RTLD_NEXT, "fmaf"));
  record_fma(a, b, CONVLAB_RA);
  return libm(a, b, c);
}

}  // extern "C"
