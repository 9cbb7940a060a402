// Shared-memory bank conflicts of one warp-wide access, counted on the host from
// a kernel's index arithmetic: sm_90 has 32 banks of 4-byte words, word w in
// bank w mod 32; lanes reading one word share it (a broadcast), lanes reading
// distinct words of one bank are serialised. ways() is the number of wavefronts
// the access takes: 1 is conflict-free, n an n-way conflict.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace convlab::cuda::test {

inline constexpr int kBanks = 32;

// The 32-bit words the 32 lanes of a warp touch (one per lane; a float4 access
// is four words per lane: pass them all, it is split per quarter-warp by
// float4_ways below).
inline int ways(const std::vector<int64_t>& words) {
  std::set<int64_t> distinct[kBanks];
  for (int64_t w : words) distinct[((w % kBanks) + kBanks) % kBanks].insert(w);
  size_t most = 0;
  for (const auto& d : distinct) most = std::max(most, d.size());
  return int(most);
}

// A 16-byte access (float4) by the 32 lanes: the hardware serves it per
// quarter-warp (8 lanes x 16 bytes = one 128-byte wavefront); the access is
// conflict-free when each quarter's 32 words are. `first_word[l]` = lane l's
// first word (16-byte aligned). Returns the wavefronts over the whole warp
// divided by the 4 a conflict-free access takes (1 = conflict-free).
inline int float4_ways(const std::vector<int64_t>& first_word) {
  int worst = 1;
  for (size_t q = 0; q < first_word.size(); q += 8) {
    std::vector<int64_t> words;
    for (size_t l = q; l < std::min(first_word.size(), q + 8); ++l)
      for (int e = 0; e < 4; ++e) words.push_back(first_word[l] + e);
    worst = std::max(worst, ways(words));
  }
  return worst;
}

}  // namespace convlab::cuda::test
