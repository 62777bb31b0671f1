// ELF and kallsyms symbols (symbols.hpp).
#include "symbols.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "input_file.hpp"

namespace kring_tool {

void symbol_table::finish() {
    std::stable_sort(syms_.begin(), syms_.end(),
                     [](const symbol& a, const symbol& b) { return a.addr < b.addr; });
    // Up to the next symbol at a higher address; the last ones, a page.
    // From the end, so that a run of symbols at one address costs its
    // length once (a crafted ELF file may hold millions at one address).
    std::size_t higher = syms_.size();
    for (std::size_t i = syms_.size(); i-- > 0;) {
        if (i + 1 < syms_.size() && syms_[i + 1].addr != syms_[i].addr)
            higher = i + 1;
        if (!syms_[i].size)
            syms_[i].size = higher < syms_.size() ? syms_[higher].addr - syms_[i].addr : 4096;
    }
}

const symbol* symbol_table::lookup(std::uint64_t addr) const noexcept {
    // The nearest symbol at or below @addr that holds it: a small one
    // (a local label) may lie inside a larger function below it.
    auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                               [](std::uint64_t a, const symbol& s) { return a < s.addr; });
    for (int n = 0; it != syms_.begin() && n < 64; n++) {
        --it;
        if (addr - it->addr < it->size)
            return &*it;
    }
    return nullptr;
}

std::optional<std::uint64_t> elf_file::vaddr_of_offset(std::uint64_t off) const noexcept {
    for (const auto& s : loads)
        if (off >= s.offset && off - s.offset < s.filesz)
            return off - s.offset + s.vaddr;
    return std::nullopt;
}

namespace {

struct elf_closer {
    void operator()(Elf* e) const noexcept { elf_end(e); }
};

kring::error elf_error(const std::string& path, const char* what) {
    return kring::error(EINVAL, path + ": " + what + ": " + elf_errmsg(-1));
}

// The function symbols of the symbol table section @scn.
void read_symbols(Elf* e, Elf_Scn* scn, const GElf_Shdr& sh, symbol_table& out) {
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d || !sh.sh_entsize)
        return;
    const std::size_t n = sh.sh_size / sh.sh_entsize;
    for (std::size_t i = 0; i < n; i++) {
        GElf_Sym s;
        if (!gelf_getsym(d, int(i), &s))
            break;
        const int type = GELF_ST_TYPE(s.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
            s.st_value == 0)
            continue;
        const char* name = elf_strptr(e, sh.sh_link, s.st_name);
        if (!name || !*name)
            continue;
        out.add({s.st_value, s.st_size, name, {}});
    }
}

// The NT_GNU_BUILD_ID note of the SHT_NOTE section @scn, if it has one.
std::vector<std::uint8_t> read_build_id(Elf_Scn* scn) {
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d)
        return {};
    GElf_Nhdr nh;
    std::size_t name_at = 0, desc_at = 0;
    for (std::size_t off = 0; (off = gelf_getnote(d, off, &nh, &name_at, &desc_at)) > 0;) {
        const char* base = static_cast<const char*>(d->d_buf);
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            std::memcmp(base + name_at, "GNU", 4) == 0) {
            const auto* p = reinterpret_cast<const std::uint8_t*>(base + desc_at);
            return {p, p + nh.n_descsz};
        }
    }
    return {};
}

}  // namespace

kring::result<elf_file> elf_file::open(const std::string& path) {
    if (elf_version(EV_CURRENT) == EV_NONE)
        return elf_error(path, "libelf");
    auto in = open_input(path, max_elf_bytes);
    if (!in)
        return in.error();
    std::unique_ptr<Elf, elf_closer> e(elf_begin(in->fd.get(), ELF_C_READ_MMAP, nullptr));
    if (!e || elf_kind(e.get()) != ELF_K_ELF)
        return elf_error(path, "not an ELF file");
    elf_file f;
    f.path = path;
    std::size_t nph = 0;
    if (elf_getphdrnum(e.get(), &nph) != 0)
        return elf_error(path, "program headers");
    for (std::size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e.get(), int(i), &ph) && ph.p_type == PT_LOAD)
            f.loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
    }
    // .symtab when the file has one (it holds .dynsym's functions and the
    // local ones), else .dynsym.
    Elf_Scn* symtab = nullptr;
    Elf_Scn* dynsym = nullptr;
    GElf_Shdr symtab_sh{}, dynsym_sh{};
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(e.get(), scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB) {
            symtab = scn;
            symtab_sh = sh;
        } else if (sh.sh_type == SHT_DYNSYM) {
            dynsym = scn;
            dynsym_sh = sh;
        } else if (sh.sh_type == SHT_NOTE && f.build_id.empty()) {
            f.build_id = read_build_id(scn);
        }
    }
    if (symtab)
        read_symbols(e.get(), symtab, symtab_sh, f.symbols);
    else if (dynsym)
        read_symbols(e.get(), dynsym, dynsym_sh, f.symbols);
    f.symbols.finish();
    return f;
}

kring::result<kallsyms> kallsyms::load(const std::string& path) {
    // /proc/kallsyms itself says size 0.
    auto text = read_input(path, max_kallsyms_bytes, true);
    if (!text)
        return text.error();
    std::istringstream in(*text);
    kallsyms k;
    std::uint64_t stext = 0;
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        std::string addr, type, name, module;
        if (!(ls >> addr >> type >> name))
            continue;
        ls >> module;
        char* end = nullptr;
        const std::uint64_t a = std::strtoull(addr.c_str(), &end, 16);
        if (!end || *end || type.size() != 1)
            continue;
        if (name == "_text")
            k.text = a;
        else if (name == "_stext")
            stext = a;
        const char t = type[0];
        if (a == 0 || (t != 't' && t != 'T' && t != 'w' && t != 'W'))
            continue;
        if (module.size() > 2 && module.front() == '[' && module.back() == ']')
            module = module.substr(1, module.size() - 2);
        else
            module.clear();
        k.symbols.add({a, 0, std::move(name), std::move(module)});
    }
    if (!k.symbols.size())
        return kring::error(EINVAL, path +
                                        ": no kernel text symbol with an address (kallsyms read "
                                        "with kptr_restrict shows every address as 0)");
    if (!k.text)
        k.text = stext;
    k.symbols.finish();
    return k;
}

std::string demangle(const std::string& mangled) {
    if (mangled.rfind("_Z", 0) != 0)
        return mangled;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && d ? std::string(d.get()) : mangled;
}

}  // namespace kring_tool
