// Function names of the addresses in a recording: the ELF symbol tables of
// the files a process mapped (read with libelf) and the kernel's symbols
// from a kallsyms file (the recording machine's /proc/kallsyms).
//
//	auto f = elf_file::open("/usr/bin/busy");
//	if (auto v = f->vaddr_of_offset(addr - map_start + map_pgoff))
//		if (const symbol* s = f->symbols.lookup(*v)) ... s->name
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kring/result.hpp"

namespace kring_tool {

struct symbol {
    std::uint64_t addr = 0, size = 0;
    std::string name;    // as the table has it (C++ names mangled)
    std::string module;  // kallsyms: the module ("kring"), "" for the kernel
};

// Symbols sorted by address. A symbol of size 0 (kallsyms has no sizes)
// reaches up to the next symbol's address.
class symbol_table {
public:
    void add(symbol s) { syms_.push_back(std::move(s)); }
    // Sorts; sizes the symbols of size 0. Call once, after the last add().
    void finish();
    // The symbol that holds @addr; nullptr when none does.
    const symbol* lookup(std::uint64_t addr) const noexcept;
    std::size_t size() const noexcept { return syms_.size(); }

private:
    std::vector<symbol> syms_;
};

// An ELF file's function symbols (.symtab, else .dynsym), its loadable
// segments and its GNU build id.
struct elf_file {
    struct segment {
        std::uint64_t offset = 0, vaddr = 0, filesz = 0;
    };
    std::string path;
    symbol_table symbols;  // by ELF virtual address
    std::vector<segment> loads;
    std::vector<std::uint8_t> build_id;  // NT_GNU_BUILD_ID, empty when none

    // The ELF virtual address of file offset @off; nullopt when no
    // loadable segment holds it.
    std::optional<std::uint64_t> vaddr_of_offset(std::uint64_t off) const noexcept;

    // Errors: the file cannot be opened or is not ELF.
    static kring::result<elf_file> open(const std::string& path);
};

// The kernel's text symbols of a kallsyms file ("ADDR TYPE NAME [MODULE]"
// a line; the types t, T, w, W).
struct kallsyms {
    symbol_table symbols;
    std::uint64_t text = 0;  // _text's address (_stext where there is none)

    // Errors: the file cannot be read, or it has no text symbol with an
    // address (kptr_restrict hides them: every address 0).
    static kring::result<kallsyms> load(const std::string& path);
};

// @mangled demangled when it is a C++ name, else itself.
std::string demangle(const std::string& mangled);

}  // namespace kring_tool
