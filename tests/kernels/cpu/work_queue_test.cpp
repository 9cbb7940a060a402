// Items handed to the threads that hold their images (kernels/cpu/work_queue.hpp): each once, own images first.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/work_queue.hpp"

namespace convlab::cpu {
namespace {

// Every (outer, image) item exactly once, for shares more, fewer and as many as the region's threads
// (a region may get fewer threads than asked for), with images fewer than threads too.
TEST(ImageQueue, EveryItemOnceWhateverTheThreads) {
  for (int images : {1, 2, 3, 7, 16})
    for (int outer : {1, 3})
      for (int shares : {1, 2, 3, 5})
        for (int threads : {1, 2, 3}) {
          ImageQueue q(outer, images, shares);
          std::vector<int> runs(size_t(outer) * images, 0);
#pragma omp parallel num_threads(threads)
          q.run(omp_get_thread_num(), [&](int64_t o, int n) {
            ASSERT_GE(o, 0);
            ASSERT_LT(o, outer);
            ASSERT_GE(n, 0);
            ASSERT_LT(n, images);
#pragma omp atomic
            ++runs[size_t(o) * images + n];
          });
          for (size_t i = 0; i < runs.size(); ++i)
            ASSERT_EQ(runs[i], 1) << "item " << i << ", images " << images << ", outer " << outer << ", shares "
                                  << shares << ", threads " << threads;
        }
}

// One thread alone takes its own share first, in (outer, image) order with images fastest, then the
// next shares' in turn: thread 1 of 2 over 4 images starts at image 2.
TEST(ImageQueue, OwnImagesFirstInOrder) {
  ImageQueue q(2, 4, 2);
  std::vector<std::pair<int64_t, int>> order;
  q.run(1, [&](int64_t o, int n) { order.emplace_back(o, n); });
  const std::vector<std::pair<int64_t, int>> want = {{0, 2}, {0, 3}, {1, 2}, {1, 3},
                                                     {0, 0}, {0, 1}, {1, 0}, {1, 1}};
  EXPECT_EQ(order, want);
}

}  // namespace
}  // namespace convlab::cpu
