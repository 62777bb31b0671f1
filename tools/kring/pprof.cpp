// kring export --pprof (pprof.hpp): the profile built with the message
// classes protoc made of google/pprof's profile.proto, gzipped with zlib.
#include "pprof.hpp"

#include <linux/perf_event.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>

#include "address_spaces.hpp"
#include "command.hpp"
#include "kring/callchain.hpp"
#include "profile.pb.h"
#include "symbols.hpp"

namespace kring_tool {

bool have_pprof() noexcept { return true; }

namespace {
namespace pp = perftools::profiles;

std::string hex(const std::vector<std::uint8_t>& bytes) {
    std::string s;
    for (auto b : bytes)
        s += fmt::format("{:02x}", b);
    return s;
}

// One frame of a stack: its address, whether it is the kernel's, whether
// it is a return address (resolved at address - 1).
struct frame {
    std::uint64_t addr = 0;
    bool kernel = false, ret = false;
};

class builder {
public:
    // The mappings forked children copy from their parents: 4 for each
    // record of the recording and 65536 more. A real recording copies
    // few (a child execs before it maps: the exec clears what it had);
    // this bounds a crafted one's time and memory.
    builder(const trace_model& m, const kallsyms* ks)
        : m_(m), ks_(ks), spaces_(4 * std::uint64_t(m.events.size()) + (1u << 16)) {
        str("");
        for (std::size_t i = 0; i < m.attrs.size(); i++) {
            for (std::uint64_t id : m.attrs[i].ids)
                attr_by_id_[id] = i;
            attr_by_name_.emplace(m.attrs[i].name, i);
        }
    }

    void run() {
        auto* st = p_.add_sample_type();
        st->set_type(str("samples"));
        st->set_unit(str("count"));
        st = p_.add_sample_type();
        st->set_type(str("cpu"));
        st->set_unit(str("nanoseconds"));
        p_.set_default_sample_type(str("cpu"));
        p_.mutable_period_type()->set_type(str("cpu"));
        p_.mutable_period_type()->set_unit(str("nanoseconds"));
        for (const auto& a : m_.attrs)
            if (is_cpu_time(a) && !a.attr.freq) {
                p_.set_period(std::int64_t(a.attr.sample_period));
                break;
            }
        if (m_.has_times) {
            p_.set_time_nanos(std::int64_t(m_.first_time));
            p_.set_duration_nanos(std::int64_t(m_.last_time - m_.first_time));
        }
        p_.add_comment(str(fmt::format("kring export --pprof {}", m_.path)));

        for (const auto& e : m_.events) {
            switch (e.kind) {
                case event_kind::mmap:
                    take_mmap(e);
                    break;
                case event_kind::comm:
                    if (e.exec)
                        spaces_.exec(e.task.pid);
                    break;
                case event_kind::fork:
                    if (e.task.pid != e.other.pid)
                        spaces_.fork(e.other.pid, e.task.pid);
                    break;
                case event_kind::sample:
                    take_sample(e);
                    break;
                default:
                    break;
            }
        }
        if (spaces_.budget_spent())
            fmt::print(stderr,
                       "kring: warning: {}: so many forks and mappings that some children's "
                       "inherited mappings were dropped (their frames are addresses only)\n",
                       m_.path);
        if (unreadable_ > max_unreadable_warnings)
            fmt::print(stderr, "kring: warning: no symbols of {} more mapped files\n",
                       unreadable_ - max_unreadable_warnings);
    }

    pp::Profile& profile() { return p_; }
    std::uint64_t perf_samples = 0, skipped = 0, unresolved = 0;

private:
    static bool is_cpu_time(const kring::perf_data::event_attr& a) {
        return a.attr.type == PERF_TYPE_SOFTWARE && (a.attr.config == PERF_COUNT_SW_CPU_CLOCK ||
                                                     a.attr.config == PERF_COUNT_SW_TASK_CLOCK);
    }

    const kring::perf_data::event_attr* attr_of(const trace_event& e) const {
        if (e.has_id)
            if (auto it = attr_by_id_.find(e.id); it != attr_by_id_.end())
                return &m_.attrs[it->second];
        if (auto it = attr_by_name_.find(e.event_name); it != attr_by_name_.end())
            return &m_.attrs[it->second];
        return m_.attrs.size() == 1 ? &m_.attrs[0] : nullptr;
    }

    std::int64_t str(const std::string& s) {
        auto [it, added] = strings_.try_emplace(s, std::int64_t(strings_.size()));
        if (added)
            p_.add_string_table(s);
        return it->second;
    }

    void take_mmap(const trace_event& e) {
        region r{e.a, e.a + e.b, e.c, e.text, e.build_id};
        if (r.end < r.start)
            r.end = ~0ull;
        if (e.text.rfind("[kernel.kallsyms]", 0) == 0 || e.task.pid == std::uint32_t(-1)) {
            // The kernel's: its pgoff is _text's address when recorded.
            r.file = "[kernel.kallsyms]";
            kernel_text_ = e.c;
            r.pgoff = 0;
            kernel_ = std::move(r);
            kernel_mapping_ = 0;
        } else {
            spaces_.map(e.task.pid, std::move(r));
        }
    }

    void take_sample(const trace_event& e) {
        const auto* a = attr_of(e);
        if (!a || !is_cpu_time(*a)) {
            skipped++;
            return;
        }
        perf_samples++;
        std::uint64_t period = e.b;
        if (!period && !a->attr.freq)
            period = a->attr.sample_period;

        // The stack, leaf first.
        const std::uint16_t mode = e.misc & PERF_RECORD_MISC_CPUMODE_MASK;
        std::vector<frame> frames;
        if (!e.callchain.empty()) {
            // Before any marker: the sample's own mode.
            int ctx = mode == PERF_RECORD_MISC_KERNEL ? 1 : mode == PERF_RECORD_MISC_USER ? 0 : -1;
            bool first = true;
            for (std::uint64_t v : e.callchain) {
                if (kring::callchain_view::is_marker(v)) {
                    ctx = v == std::uint64_t(PERF_CONTEXT_KERNEL) ? 1
                          : v == std::uint64_t(PERF_CONTEXT_USER) ? 0
                                                                  : -1;
                    first = true;
                    continue;
                }
                frames.push_back({v, is_kernel(ctx, v), !first});
                first = false;
            }
        }
        if (frames.empty()) {
            const int ctx = mode == PERF_RECORD_MISC_KERNEL ? 1
                            : mode == PERF_RECORD_MISC_USER ? 0
                                                            : -1;
            frames.push_back({e.a, is_kernel(ctx, e.a), false});
        }

        std::vector<std::uint64_t> ids;
        ids.reserve(frames.size());
        for (const auto& f : frames)
            ids.push_back(location(f, e.task.pid));
        const std::string comm = e.comm.empty() ? m_.comm_of(e.task) : e.comm;
        auto key = std::make_tuple(std::move(ids), e.task.pid, e.task.tid, comm);
        auto it = samples_.find(key);
        pp::Sample* s;
        if (it == samples_.end()) {
            samples_.emplace(key, p_.sample_size());
            s = p_.add_sample();
            for (std::uint64_t id : std::get<0>(key))
                s->add_location_id(id);
            s->add_value(0);
            s->add_value(0);
            auto* l = s->add_label();
            l->set_key(str("pid"));
            l->set_num(e.task.pid);
            l = s->add_label();
            l->set_key(str("tid"));
            l->set_num(e.task.tid);
            l = s->add_label();
            l->set_key(str("comm"));
            l->set_str(str(comm));
        } else {
            s = p_.mutable_sample(it->second);
        }
        s->set_value(0, s->value(0) + 1);
        s->set_value(1, s->value(1) + std::int64_t(period));
    }

    // @ctx: 1 kernel, 0 user, -1 not said (the kernel's mapping decides).
    bool is_kernel(int ctx, std::uint64_t addr) const {
        if (ctx >= 0)
            return ctx == 1;
        return kernel_ && addr >= kernel_->start && addr < kernel_->end;
    }

    std::uint64_t mapping(const region& r, bool kernel) {
        if (kernel && kernel_mapping_)
            return kernel_mapping_;
        auto key = std::make_tuple(r.start, r.end, r.pgoff, r.file);
        if (auto it = mappings_.find(key); it != mappings_.end())
            return it->second;
        auto* mp = p_.add_mapping();
        const std::uint64_t id = std::uint64_t(p_.mapping_size());
        mp->set_id(id);
        mp->set_memory_start(r.start);
        mp->set_memory_limit(r.end);
        mp->set_file_offset(r.pgoff);
        mp->set_filename(str(r.file));
        std::vector<std::uint8_t> build_id = r.build_id;
        if (build_id.empty() && !kernel)
            if (const elf_file* f = elf(r.file))
                build_id = f->build_id;
        if (!build_id.empty())
            mp->set_build_id(str(hex(build_id)));
        mappings_.emplace(key, id);
        if (kernel)
            kernel_mapping_ = id;
        return id;
    }

    // The symbols of @file, opened once; nullptr when there are none.
    const elf_file* elf(const std::string& file) {
        auto [it, added] = elves_.try_emplace(file);
        if (!added || file.empty() || file[0] != '/')
            return it->second.get();
        // One file under many names (a crafted recording may spell one
        // large library a thousand ways, "/lib//x", "/lib/./x"): read once,
        // by its inode, whether it reads or not.
        struct stat st;
        std::optional<std::pair<dev_t, ino_t>> id;
        if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            id = {st.st_dev, st.st_ino};
            if (auto known = by_inode_.find(*id); known != by_inode_.end())
                return (it->second = known->second).get();
        }
        if (auto f = elf_file::open(file))
            it->second = std::make_shared<const elf_file>(std::move(*f));
        else if (++unreadable_ <= max_unreadable_warnings)
            fmt::print(stderr, "kring: warning: no symbols of {}: {}\n", file, f.error().message());
        if (id)
            by_inode_.emplace(*id, it->second);
        return it->second.get();
    }

    std::uint64_t location(const frame& f, std::uint32_t pid) {
        const region* r = f.kernel ? (kernel_ ? &*kernel_ : nullptr) : spaces_.find(pid, f.addr);
        const std::uint64_t mapping_id = r ? mapping(*r, f.kernel) : 0;
        auto key = std::make_tuple(mapping_id, f.addr, f.ret);
        if (auto it = locations_.find(key); it != locations_.end())
            return it->second;
        auto* loc = p_.add_location();
        const std::uint64_t id = std::uint64_t(p_.location_size());
        loc->set_id(id);
        loc->set_mapping_id(mapping_id);
        loc->set_address(f.addr);
        locations_.emplace(key, id);

        const std::uint64_t at = f.ret ? f.addr - 1 : f.addr;
        std::uint64_t fn = 0;
        if (f.kernel && ks_) {
            // kallsyms of another boot: relocated by the difference of _text.
            const std::uint64_t reloc = kernel_text_ && ks_->text ? kernel_text_ - ks_->text : 0;
            if (const symbol* s = ks_->symbols.lookup(at - reloc))
                fn = function(s->name, s->name,
                              s->module.empty() ? "[kernel.kallsyms]" : "[" + s->module + "]");
        } else if (!f.kernel && r) {
            if (const elf_file* e = elf(r->file))
                if (auto v = e->vaddr_of_offset(at - r->start + r->pgoff))
                    if (const symbol* s = e->symbols.lookup(*v))
                        fn = function(demangle(s->name), s->name, r->file);
        }
        if (fn) {
            loc->add_line()->set_function_id(fn);
            if (mapping_id)
                p_.mutable_mapping(int(mapping_id - 1))->set_has_functions(true);
        } else {
            unresolved++;
        }
        return id;
    }

    std::uint64_t function(const std::string& name, const std::string& system_name,
                           const std::string& file) {
        auto key = std::make_tuple(name, system_name, file);
        if (auto it = functions_.find(key); it != functions_.end())
            return it->second;
        auto* fn = p_.add_function();
        const std::uint64_t id = std::uint64_t(p_.function_size());
        fn->set_id(id);
        fn->set_name(str(name));
        fn->set_system_name(str(system_name));
        fn->set_filename(str(file));
        functions_.emplace(key, id);
        return id;
    }

    const trace_model& m_;
    const kallsyms* ks_;
    pp::Profile p_;
    std::unordered_map<std::string, std::int64_t> strings_;
    std::map<std::uint64_t, std::size_t> attr_by_id_;
    std::map<std::string, std::size_t> attr_by_name_;
    address_spaces spaces_;
    std::optional<region> kernel_;
    std::uint64_t kernel_text_ = 0, kernel_mapping_ = 0;
    // The ELF files by the name a mapping gives and by inode (null: not
    // read).
    std::map<std::string, std::shared_ptr<const elf_file>> elves_;
    std::map<std::pair<dev_t, ino_t>, std::shared_ptr<const elf_file>> by_inode_;
    // The mapped files that could not be read (a warning line each for the
    // first few, then one line for the rest).
    static constexpr std::uint64_t max_unreadable_warnings = 8;
    std::uint64_t unreadable_ = 0;
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::string>, std::uint64_t>
        mappings_;
    std::map<std::tuple<std::uint64_t, std::uint64_t, bool>, std::uint64_t> locations_;
    std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t> functions_;
    std::map<std::tuple<std::vector<std::uint64_t>, std::uint32_t, std::uint32_t, std::string>, int>
        samples_;
};

kring::result<std::string> gzip(const std::string& in) {
    z_stream z{};
    // windowBits 15 + 16: a gzip header and trailer.
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return kring::error(ENOMEM, "gzip: deflateInit2 failed");
    std::string out(deflateBound(&z, uLong(in.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END)
        return kring::error(EIO, "gzip: deflate failed");
    return out;
}

// @bytes into @path through @path.tmp, renamed when written whole; "-":
// standard output.
kring::result<void> write_whole(const std::string& path, const std::string& bytes) {
    if (path == "-") {
        if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
            std::fflush(stdout) != 0)
            return kring::error::from_errno(errno, "cannot write the profile to standard output");
        return {};
    }
    const std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f)
        return kring::error::from_errno(errno, "cannot create " + tmp);
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const int write_errno = errno;
    const bool closed = std::fclose(f) == 0;
    const int close_errno = errno;
    if (!ok || !closed) {
        std::remove(tmp.c_str());
        return kring::error::from_errno(!ok ? write_errno : close_errno, "cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        std::remove(tmp.c_str());
        return kring::error::from_errno(e, "cannot rename " + tmp + " to " + path);
    }
    return {};
}

}  // namespace

int write_pprof(const pprof_options& o, const trace_model& m) {
    std::optional<kallsyms> ks;
    if (!o.kallsyms.empty()) {
        auto k = kallsyms::load(o.kallsyms);
        if (!k)
            return report(k.error());
        ks = std::move(*k);
    }
    builder b(m, ks ? &*ks : nullptr);
    b.run();
    std::string bytes;
    if (!b.profile().SerializeToString(&bytes))
        return report("export --pprof: the profile cannot be serialized");
    auto z = gzip(bytes);
    if (!z)
        return report(z.error());
    if (auto w = write_whole(o.output, *z); !w)
        return report(w.error());
    const auto& p = b.profile();
    if (o.output != "-")
        print_summary("export", {{"samples", b.perf_samples},
                                 {"stacks", std::uint64_t(p.sample_size())},
                                 {"locations", std::uint64_t(p.location_size())},
                                 {"functions", std::uint64_t(p.function_size())},
                                 {"mappings", std::uint64_t(p.mapping_size())},
                                 {"unresolved", b.unresolved},
                                 {"skipped", b.skipped}});
    return exit_ok;
}

}  // namespace kring_tool
