#include "kring/result.hpp"

#include <cstring>
#include <string>

namespace kring {

error error::from_errno(int code, std::string_view what, operation op) {
    std::string msg(what);
    msg += ": ";
    msg += std::strerror(code);
    return error(code, std::move(msg), op);
}

error error::with_context(std::string_view what) const {
    std::string msg(what);
    msg += ": ";
    msg += message_;
    return error(code_, std::move(msg), op_);
}

}  // namespace kring
