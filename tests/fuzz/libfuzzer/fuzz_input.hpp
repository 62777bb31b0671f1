// libFuzzer harnesses: reading the fuzzer's bytes as a stream of choices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <span>

namespace kf {

// Takes values from the front of the input; zeros once it runs out.
class input {
public:
    input(const std::uint8_t* data, std::size_t size) : p_(data), left_(size) {}

    template <class T>
    T take() {
        T v{};
        std::size_t n = sizeof(T) < left_ ? sizeof(T) : left_;
        std::memcpy(&v, p_, n);
        p_ += n;
        left_ -= n;
        return v;
    }
    // A value in [0, n).
    unsigned below(unsigned n) { return n ? take<std::uint16_t>() % n : 0; }
    bool chance(unsigned percent) { return below(100) < percent; }
    // Up to @max bytes of what is left.
    std::span<const std::uint8_t> bytes(std::size_t max) {
        std::size_t n = max < left_ ? max : left_;
        std::span<const std::uint8_t> s(p_, n);
        p_ += n;
        left_ -= n;
        return s;
    }
    std::size_t left() const { return left_; }

private:
    const std::uint8_t* p_;
    std::size_t left_;
};

// A harness's own invariant broken: report it as a crash libFuzzer keeps.
[[noreturn]] inline void broken(const char* what) {
    std::fprintf(stderr, "kring fuzz: invariant broken: %s\n", what);
    std::abort();
}

}  // namespace kf

#define KF_CHECK(cond)           \
    do {                         \
        if (!(cond))             \
            ::kf::broken(#cond); \
    } while (0)
