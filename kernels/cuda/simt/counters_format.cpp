// counters.hpp's text forms: one line per launch, and CSV (scaled counts).
#include <cstdio>
#include <string>

#include "kernels/cuda/simt/counters.hpp"

namespace convlab::simt::counters {

namespace {

std::string dims(const unsigned (&d)[3]) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// a / b with two decimals ("-" when b is 0).
std::string ratio(uint64_t a, uint64_t b) {
  if (b == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", double(a) / double(b));
  return buf;
}

// A CSV field: in double quotes (template arguments hold commas), any quote doubled.
std::string quoted(const std::string& text) {
  std::string q = "\"";
  for (char ch : text) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace

std::string format_line(const LaunchCounts& r) {
  const Counts c = r.scaled();
  std::string s = (r.function.empty() ? r.kernel : r.function) + " grid " + dims(r.grid) + " block " + dims(r.block) +
                  " blocks " + std::to_string(r.sampled_blocks) + "/" + std::to_string(r.blocks);
  s += " | global ld " + std::to_string(c.global_ld_requests) + " req " + std::to_string(c.global_ld_sectors) +
       " sectors (" + ratio(c.global_ld_sectors, c.global_ld_requests) + "/req)";
  s += " st " + std::to_string(c.global_st_requests) + " req " + std::to_string(c.global_st_sectors) + " sectors (" +
       ratio(c.global_st_sectors, c.global_st_requests) + "/req)";
  if (c.global_atom_requests)
    s += " atom " + std::to_string(c.global_atom_requests) + " req " + std::to_string(c.global_atom_sectors) +
         " sectors";
  s += " | shared ld " + std::to_string(c.shared_ld_requests) + " req " + std::to_string(c.shared_ld_wavefronts) +
       " wavefronts " + std::to_string(c.shared_ld_conflicts) + " conflicts";
  s += " st " + std::to_string(c.shared_st_requests) + " req " + std::to_string(c.shared_st_wavefronts) +
       " wavefronts " + std::to_string(c.shared_st_conflicts) + " conflicts";
  s += " | warp inst " + std::to_string(c.warp_instructions) + " lanes/inst " +
       ratio(c.active_lanes, c.warp_instructions);
  s += " | fma " + std::to_string(c.fma_instructions) + " inst lanes/inst " + ratio(c.fma_lanes, c.fma_instructions) +
       " useful/inst " + ratio(c.fma_useful_lanes, c.fma_instructions) + " | mma " + std::to_string(c.mma_instructions) + " | barriers " + std::to_string(c.barriers);
  return s;
}

std::string csv_header() {
  return "kernel,function,grid,block,blocks,sampled_blocks,global_ld_requests,global_ld_sectors,global_st_requests,"
         "global_st_sectors,global_atom_requests,global_atom_sectors,shared_ld_requests,shared_ld_wavefronts,"
         "shared_ld_conflicts,shared_st_requests,shared_st_wavefronts,shared_st_conflicts,warp_instructions,"
         "active_lanes,fma_instructions,fma_lanes,fma_useful_lanes,barriers,mma_instructions";
}

std::string csv_row(const LaunchCounts& r) {
  const Counts c = r.scaled();
  std::string s = quoted(r.kernel) + "," + quoted(r.function) + "," + dims(r.grid) + "," + dims(r.block) + "," +
                  std::to_string(r.blocks) + "," + std::to_string(r.sampled_blocks);
  for (uint64_t v :
       {c.global_ld_requests, c.global_ld_sectors, c.global_st_requests, c.global_st_sectors, c.global_atom_requests,
        c.global_atom_sectors, c.shared_ld_requests, c.shared_ld_wavefronts, c.shared_ld_conflicts,
        c.shared_st_requests, c.shared_st_wavefronts, c.shared_st_conflicts, c.warp_instructions, c.active_lanes,
        c.fma_instructions, c.fma_lanes, c.fma_useful_lanes, c.barriers, c.mma_instructions})
    s += "," + std::to_string(v);
  return s;
}

}  // namespace convlab::simt::counters
