#include "kring/result.hpp"

#include <cstring>
#include <string>

namespace kring {

error error::from_errno(int code, std::string_view what) {
    std::string msg(what);
    msg += ": ";
    msg += std::strerror(code);
    return error(code, std::move(msg));
}

}  // namespace kring
