// libkring: errors as values.
//
// Nothing in libkring throws across its API. A call that can fail returns
// kring::result<T>: either a T or a kring::error carrying a positive errno
// value and a human-readable message that says what was attempted.
#pragma once

#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace kring {

class error {
public:
    error() = default;
    error(int code, std::string message) : code_(code), message_(std::move(message)) {}

    // "what: strerror(code)", for failures of a system call.
    static error from_errno(int code, std::string_view what);

    int code() const noexcept { return code_; }
    const std::string& message() const noexcept { return message_; }
    std::error_code error_code() const noexcept { return {code_, std::generic_category()}; }

private:
    int code_ = 0;
    std::string message_;
};

namespace detail {
// Reading the value of a result that holds an error is a programming error:
// it prints the error and aborts (there are no exceptions to throw).
[[noreturn]] void bad_result_access(const error& e) noexcept;
}  // namespace detail

template <class T>
class [[nodiscard]] result {
    static_assert(!std::is_reference_v<T>, "result<T&> is not supported");

public:
    result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    result(kring::error e) : v_(std::in_place_index<1>, std::move(e)) {}

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() & { check(); return std::get<0>(v_); }
    const T& value() const& { check(); return std::get<0>(v_); }
    T&& value() && { check(); return std::get<0>(std::move(v_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    // The error; only meaningful when !has_value().
    const kring::error& error() const& noexcept {
        static const kring::error none;
        return has_value() ? none : std::get<1>(v_);
    }

private:
    void check() const {
        if (!has_value())
            detail::bad_result_access(std::get<1>(v_));
    }
    std::variant<T, kring::error> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(kring::error e) : err_(std::move(e)), ok_(false) {}

    bool has_value() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    void value() const {
        if (!ok_)
            detail::bad_result_access(err_);
    }
    const kring::error& error() const& noexcept { return err_; }

private:
    kring::error err_;
    bool ok_ = true;
};

}  // namespace kring
