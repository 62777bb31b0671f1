// libkring: a kring channel - one /dev/kring file descriptor, configured,
// with its data ring (and optionally its AUX area) mapped.
//
//	kring::channel_options o;
//	o.source = KRING_SOURCE_SYNTHETIC;
//	o.cpu = 0;
//	o.sample_type = KRING_SAMPLE_TIME | KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ;
//	auto ch = kring::channel::open(o);     // open, query ABI, configure, mmap
//	if (!ch) { puts(ch.error().message().c_str()); return 1; }
//	ch->enable();
//	kring::reader rd(ch->ring());
//
// A channel is a move-only owner of the fd (O_CLOEXEC) and the mappings;
// destroying it unmaps and closes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include <linux/kring.h>

#include "kring/device.hpp"
#include "kring/fd.hpp"
#include "kring/result.hpp"
#include "kring/ring.hpp"

namespace kring {

// The AUX area's feature bit.
inline constexpr std::uint64_t feat_aux = KRING_FEAT_AUX;

// What a channel is configured with (struct kring_attr, typed). A field
// left unset (std::nullopt) keeps the module's default.
struct channel_options {
    std::uint32_t source = KRING_SOURCE_NONE;       // enum kring_source
    std::uint64_t sample_type = 0;                  // KRING_SAMPLE_*
    std::optional<int> cpu;                         // bound to this CPU (unset: none)
    std::optional<pid_t> pid;                       // follow this task (unset: none)
    unsigned data_pages_order = 3;                  // 2^n data pages
    bool mirror = false;                            // map the data pages twice
    bool overwrite = false;                         // backward, overwritable ring
    bool read_only = false;                         // map read-only (perf's overwrite mode)
    std::optional<std::uint32_t> wakeup_events;     // wake every n records
    std::optional<std::uint32_t> wakeup_watermark;  // wake every n bytes (default: half)
    std::uint64_t config[4] = {0, 0, 0, 0};         // source parameters
    std::uint64_t extra_attr_flags = 0;             // further KRING_ATTR_F_* bits
    std::uint32_t clockid = KRING_CLOCK_DEFAULT;    // clock of record times (KRING_CLOCK_*)
    std::optional<std::uint32_t> aux_watermark;     // AUX wake-up watermark (default: half)
    // AUX area of 2^n pages, mapped by open(); snapshot mode maps it
    // read-only (the producer overwrites), normal mode read-write.
    std::optional<unsigned> aux_pages_order;
    bool aux_snapshot = false;
    std::string device = default_device_path;
};

// The KRING_FEAT_* bits a channel configured with @o needs: its source,
// its modes (pid, inherit, clock), its mapping (mirror, overwrite) and its
// AUX area. channel::open() refuses (EOPNOTSUPP, naming the first missing
// feature and what asked for it) when the module lacks one.
std::uint64_t needed_features(const channel_options& o);

class channel {
public:
    // Open the device, check its ABI and the features @o needs, configure
    // and map. Errors: the errno of the failing step, with a message.
    // The device is opened with device::open(o.device).
    static result<channel> open(const channel_options& o);
    // One channel per online CPU (o.cpu set to each in turn), in CPU order.
    static result<std::vector<channel>> open_per_cpu(channel_options o);

    channel(channel&&) noexcept = default;
    channel& operator=(channel&&) noexcept = default;

    int fd() const noexcept { return dev_.fd(); }
    const abi_info& abi() const noexcept { return dev_.abi(); }
    const ring_view& ring() const noexcept { return view_; }
    const aux_view& aux() const noexcept { return aux_; }
    const channel_options& options() const noexcept { return opts_; }
    // The layout of this channel's SAMPLE records, as the module reports it
    // (kring_stats.sample_type): the bits asked for plus KRING_SAMPLE_SEQ
    // and what the source always writes. Parse with this, not with the
    // options. A module that predates the report: the bits asked for.
    std::uint64_t sample_type() const noexcept { return sample_type_; }
    kring_ctl_page* ctl() const noexcept { return view_.ctl; }

    result<void> enable();
    result<void> disable();
    // Stop/restart output; every record written meanwhile is counted
    // lost_paused. The pause returns once the writers past it are done (the
    // module waits a grace period): on an overwrite ring the window stays
    // put until resume_output().
    result<void> pause_output();
    result<void> resume_output();
    // Zero the counters (the channel must be disabled).
    result<void> reset();
    result<void> set_wakeup(std::uint32_t watermark, std::uint32_t events);
    result<std::uint64_t> id() const;
    result<kring_stats> stats() const;
    // The layouts of the records the channel carries (KRING_IOC_GET_FORMATS):
    // one ftrace event format text per described record type (its source's
    // RAW data, a producer module's types). ENOTSUP without
    // KRING_FEAT_FORMATS.
    result<std::vector<std::string>> formats() const;

    // Snapshot of an overwrite ring: pause, f(), resume, as perf's tool
    // reads a backward ring. f's result is returned.
    template <class F>
    auto with_output_paused(F&& f) -> decltype(f()) {
        if (auto p = pause_output(); !p)
            return p.error();
        auto r = f();
        if (auto q = resume_output(); !q)
            return q.error();
        return r;
    }

    // The consistent snapshot of an overwrite ring: @rd.read(@f) with
    // output paused (newest record first). The records written meanwhile
    // are counted lost_paused.
    template <class Reader, class F>
    auto snapshot(Reader& rd, F&& f) {
        return with_output_paused([&] { return rd.read(f); });
    }

    // Map the AUX area after the data ring (perf's protocol: write
    // aux_offset and aux_size into the control page, then mmap there).
    result<void> map_aux(unsigned pages_order, bool snapshot);

    // AUX producer control (the channel's own source, e.g. the emulated
    // tracer; EOPNOTSUPP for producers another module drives).
    // aux_pause(): stop it, ending its extent (in snapshot mode this
    // publishes aux_head, as a snapshot does). aux_resume(): restart it.
    // aux_snapshot(): snapshot mode only (EINVAL otherwise): stop it and
    // publish the newest window; it stays stopped until aux_resume().
    result<void> aux_pause();
    result<void> aux_resume();
    result<void> aux_snapshot();

    // Snapshot mode: aux_snapshot(), f(), aux_resume(); f reads the window
    // (aux_reader::snapshot()) while nothing overwrites it. f's result is
    // returned; the tracer is resumed even when f fails.
    template <class F>
    auto with_aux_snapshot(F&& f) -> decltype(f()) {
        if (auto p = aux_snapshot(); !p)
            return p.error();
        auto r = f();
        if (auto q = aux_resume(); !q)
            return q.error();
        return r;
    }

private:
    explicit channel(device dev) : dev_(std::move(dev)) {}
    result<void> ioctl_void(unsigned long req, const char* what) const;

    device dev_;
    channel_options opts_;
    std::uint64_t sample_type_ = 0;
    unique_mapping map_, aux_map_;
    ring_view view_;
    aux_view aux_;
};

}  // namespace kring
