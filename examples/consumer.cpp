// A minimal libkring consumer: one synthetic channel on CPU 0, read for a
// second with the poller, print what arrived and what was lost.
#include <cstdio>

#include <kring/kring.hpp>

int main() {
    kring::channel_options o;
    o.source = KRING_SOURCE_SYNTHETIC;
    o.cpu = 0;
    o.sample_type = KRING_SAMPLE_TIME | KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ;
    o.config[0] = 100000;  // records per second
    o.config[1] = 64;      // payload bytes
    auto ch = kring::channel::open(o);
    if (!ch) {
        std::fprintf(stderr, "%s\n", ch.error().message().c_str());
        return 1;
    }
    kring::reader rd(ch->ring());
    auto poll = kring::poller::create();
    if (!poll || !poll->add(ch->fd(), ch->ring(), 0) || !ch->enable())
        return 1;
    std::uint64_t samples = 0;
    for (int i = 0; i < 10; i++) {
        if (!poll->wait(100))
            return 1;
        auto n =
            rd.drain([&](const kring::record& r) { samples += r.type() == KRING_RECORD_SAMPLE; });
        if (!n)
            return std::fprintf(stderr, "%s\n", n.error().message().c_str()), 1;
    }
    std::printf("%llu samples, %llu lost\n", (unsigned long long)samples,
                (unsigned long long)rd.lost_seen());
    return 0;
}
