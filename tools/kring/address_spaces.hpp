// The mappings of each process of a recording at a point of it, as export
// --pprof replays the MMAP, COMM (exec) and FORK records in time order.
//
// The cost is bounded by the records, whatever they say: map() is
// O(log N + k) for a process of N mappings of which the new one replaces
// k (each mapping is erased at most once, so a run of MMAPs is
// O(M log M)); find() is O(log N); fork() shares the parent's mappings
// and a child copies them at its first MMAP, and those copies are bounded
// in total by a budget set from the recording's size: past it, a child's
// first MMAP starts from no mappings rather than a copy (budget_spent()
// says so). steps() counts the mappings each call touched, so that a test
// can hold the bound.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kring_tool {

// A mapping of a process (or the kernel's) as its MMAP record says.
struct region {
    std::uint64_t start = 0, end = 0, pgoff = 0;
    std::string file;
    std::vector<std::uint8_t> build_id;
};

class address_spaces {
public:
    // At most @copy_budget mappings copied from parents in all.
    explicit address_spaces(std::uint64_t copy_budget = ~std::uint64_t(0))
        : copy_budget_(copy_budget) {}

    // @r into @pid's mappings: it replaces every mapping it overlaps. A
    // mapping of no bytes (start == end: no mmap() makes one) maps nothing
    // and changes nothing.
    void map(std::uint32_t pid, region r) {
        if (r.end <= r.start)
            return;
        auto& m = own(pid);
        // The mappings are disjoint and sorted by start: the one before
        // the first that starts above r.start is the only one that may
        // hold r.start, and the rest it overlaps follow it.
        auto it = m.upper_bound(r.start);
        if (it != m.begin()) {
            steps_++;
            if (std::prev(it)->second.end > r.start)
                --it;
        }
        while (it != m.end() && it->second.start < r.end) {
            steps_++;
            it = m.erase(it);
        }
        steps_++;
        m.emplace_hint(it, r.start, std::move(r));
    }
    void exec(std::uint32_t pid) { procs_.erase(pid); }
    // @child starts with @parent's mappings (when it has none of its own).
    void fork(std::uint32_t parent, std::uint32_t child) {
        if (auto it = procs_.find(parent); it != procs_.end() && !procs_.count(child))
            procs_.emplace(child, it->second);
        steps_++;
    }
    const region* find(std::uint32_t pid, std::uint64_t addr) const {
        auto p = procs_.find(pid);
        if (p == procs_.end())
            return nullptr;
        const auto& m = *p->second;
        auto it = m.upper_bound(addr);
        if (it == m.begin())
            return nullptr;
        --it;
        return addr < it->second.end ? &it->second : nullptr;
    }

    std::uint64_t steps() const noexcept { return steps_; }
    bool budget_spent() const noexcept { return budget_spent_; }

private:
    using space = std::map<std::uint64_t, region>;

    // @pid's mappings, its own: a forked child's shared ones copied first
    // (within the budget, else dropped).
    space& own(std::uint32_t pid) {
        auto& p = procs_[pid];
        if (!p) {
            p = std::make_shared<space>();
        } else if (p.use_count() > 1) {
            if (p->size() <= copy_budget_ - copies_) {
                copies_ += p->size();
                steps_ += p->size();
                p = std::make_shared<space>(*p);
            } else {
                budget_spent_ = true;
                p = std::make_shared<space>();
            }
        }
        return *p;
    }

    std::map<std::uint32_t, std::shared_ptr<space>> procs_;
    std::uint64_t copy_budget_, copies_ = 0, steps_ = 0;
    bool budget_spent_ = false;
};

}  // namespace kring_tool
