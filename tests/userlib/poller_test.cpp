// The poller's need-wakeup handshake, on the host with eventfds standing in
// for channel fds and host-core rings for their rings.
#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include "ring_views.hpp"
#include "kring/poller.hpp"
#include "errno_assert.hpp"

using kt::host_ring;

namespace {

struct efd {
    int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ~efd() { ::close(fd); }
};

TEST(Poller, RecheckAfterArmingAvoidsSleeping) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    efd ea, eb;
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->add(ea.fd, kt::view_of(a), 10));
    ASSERT_TRUE(p->add(eb.fd, kt::view_of(b), 20));
    a.ctl->need_wakeup = 0;
    // Nothing anywhere: times out, both rings armed.
    auto r = p->wait(0);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->empty());
    EXPECT_EQ(a.ctl->need_wakeup, 1u);
    EXPECT_EQ(b.ctl->need_wakeup, 1u);
    // Data published without any wake-up (the fd stays silent): the
    // re-check after F reports it although the fd is not readable, and the
    // poller does not sleep (a long timeout would hang the test).
    ASSERT_EQ(kt::write_record(&b.rb, 32), 0);
    r = p->wait(60000);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0], 20u);
    EXPECT_EQ(p->rechecks_hit(), 1u);
    // While the caller drains b, b asks for no wake-ups; a stays armed.
    EXPECT_EQ(b.ctl->need_wakeup, 0u);
    EXPECT_EQ(a.ctl->need_wakeup, 1u);
}

TEST(Poller, ReportsReadableFds) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    efd ea, eb;
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->add(ea.fd, kt::view_of(a), 1));
    ASSERT_TRUE(p->add(eb.fd, kt::view_of(b), 2));
    std::uint64_t one = 1;
    ASSERT_EQ(::write(eb.fd, &one, 8), 8);
    auto r = p->wait(60000);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0], 2u);
    EXPECT_EQ(p->rechecks_hit(), 0u);
}

TEST(Poller, BadFdIsAnError) {
    host_ring a(1, kt::mapping::plain);
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    auto r = p->add(-1, kt::view_of(a), 1);
    ASSERT_FALSE(r);
    EXPECT_ERRNO(r.error().code(), EBADF);
}

}  // namespace
