// Work items of a batch handed to the threads that hold their images.
//
// A kernel whose threads first convert the input into a blocked layout in
// static shares (thread t blocks images [N*t/T, N*(t+1)/T)) and then compute
// items of (outer, image) reads, per item, the blocked image some thread wrote.
// Handed out dynamically, about half the items read what the other thread
// wrote, and write output the other thread wrote the call before: where the
// hypervisor has put the threads in two cache domains, those lines cross
// between them. Here each thread first takes the items of its own images, one
// at a time from its share's cursor, then the items left in the other shares
// from their cursors, so a thread slowed by a shared core still does not hold
// the others at the end. Which thread runs an item never changes its result.
//
//   ImageQueue q(outer, s.n, threads);     // before the parallel region
//   #pragma omp parallel num_threads(threads)
//   q.run(omp_get_thread_num(), [&](int64_t o, int n) { ... });
//
// Every item runs exactly once whatever number of threads the region gets;
// within a share the items come in (outer, image) order, images fastest.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

namespace convlab::cpu {

class ImageQueue {
 public:
  ImageQueue(int64_t outer, int images, int threads)
      : outer_(outer), images_(images), shares_(threads < 1 ? 1 : threads), cursors_(size_t(shares_)) {}

  template <class F>
  void run(int ithr, F&& f) {
    for (int k = 0; k < shares_; ++k) {
      const int u = (ithr + k) % shares_;
      const int n0 = first_image(u), count = first_image(u + 1) - n0;
      const int64_t items = outer_ * count;
      for (int64_t j; (j = cursors_[size_t(u)].next.fetch_add(1, std::memory_order_relaxed)) < items;)
        f(j / count, n0 + int(j % count));
    }
  }

 private:
  struct alignas(128) Cursor {  // a line pair each: the adjacent-line prefetcher pairs lines
    std::atomic<int64_t> next{0};
  };
  int first_image(int share) const { return int(int64_t(images_) * share / shares_); }

  int64_t outer_;
  int images_, shares_;
  std::vector<Cursor> cursors_;
};

}  // namespace convlab::cpu
