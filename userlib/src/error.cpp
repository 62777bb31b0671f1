#include "kring/result.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kring {

error error::from_errno(int code, std::string_view what) {
    std::string msg(what);
    msg += ": ";
    msg += std::strerror(code);
    return error(code, std::move(msg));
}

namespace detail {
void bad_result_access(const error& e) noexcept {
    std::fprintf(stderr, "libkring: value() of a failed result: %s (errno %d)\n",
                 e.message().c_str(), e.code());
    std::abort();
}
}  // namespace detail

}  // namespace kring
