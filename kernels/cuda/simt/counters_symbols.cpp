// The instantiated name of a kernel (convlab::cuda::implicit_gemm_kernel<16,
// 128, 4, true>, where CONVLAB_LAUNCH only knows the spelling at the call
// site): the function symbol at the kernel's address in this executable's
// ELF symbol table (kernels are mostly internal-linkage templates, absent
// from the dynamic symbol table dladdr reads), demangled, without its
// parameter list. Read once, on first use.
#include <cxxabi.h>
#include <elf.h>
#include <link.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cuda/simt/counters_runtime.hpp"

namespace convlab::simt::counters {

namespace {

int main_program_base(dl_phdr_info* info, size_t, void* out) {
  *static_cast<uintptr_t*>(out) = info->dlpi_addr;  // the first object is the executable
  return 1;
}

// Function symbols of /proc/self/exe by run-time address (empty when unreadable).
std::map<uintptr_t, std::string> read_functions() {
  std::map<uintptr_t, std::string> out;
  std::ifstream f("/proc/self/exe", std::ios::binary);
  const std::vector<char> elf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (elf.size() < sizeof(Elf64_Ehdr)) return out;
  const auto& eh = *reinterpret_cast<const Elf64_Ehdr*>(elf.data());
  if (std::string_view(reinterpret_cast<const char*>(eh.e_ident), 4) !=
          "\x7f"
          "ELF" ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > elf.size())
    return out;
  uintptr_t base = 0;
  dl_iterate_phdr(main_program_base, &base);
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(elf.data() + eh.e_shoff);
  for (int i = 0; i < eh.e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum) continue;
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > elf.size() || strtab.sh_offset + strtab.sh_size > elf.size()) continue;
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(elf.data() + sh[i].sh_offset);
    for (size_t j = 0; j < sh[i].sh_size / sizeof(Elf64_Sym); ++j)
      if (ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC && sym[j].st_value && sym[j].st_name < strtab.sh_size)
        out.emplace(base + sym[j].st_value, std::string(elf.data() + strtab.sh_offset + sym[j].st_name));
  }
  return out;
}

// "void ns::kernel<1, 2>(int, float*)" -> "ns::kernel<1, 2>".
std::string without_signature(const std::string& d) {
  int depth = 0;
  size_t name_begin = 0;
  static constexpr std::string_view kAnon = "(anonymous namespace)";
  for (size_t i = 0; i < d.size(); ++i) {
    if (d.compare(i, kAnon.size(), kAnon) == 0) {
      i += kAnon.size() - 1;
      continue;
    }
    const char c = d[i];
    if (c == '<' || c == '(') {
      if (c == '(' && depth == 0) return d.substr(name_begin, i - name_begin);
      ++depth;
    } else if (c == '>' || c == ')') {
      --depth;
    } else if (c == ' ' && depth == 0) {
      name_begin = i + 1;  // a return type before the name
    }
  }
  return d.substr(name_begin);
}

}  // namespace

std::string function_name(const void* fn) {
  static std::mutex m;
  static std::map<uintptr_t, std::string>* functions = nullptr;
  std::lock_guard<std::mutex> lk(m);
  if (!functions) functions = new std::map<uintptr_t, std::string>(read_functions());
  const auto it = functions->find(reinterpret_cast<uintptr_t>(fn));
  if (it == functions->end()) return "";
  int status = 0;
  char* d = abi::__cxa_demangle(it->second.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return it->second;
  const std::string name = without_signature(d);
  std::free(d);
  return name;
}

}  // namespace convlab::simt::counters
