// libkring: errors as values.
//
// Nothing in libkring throws across its API. A call that can fail returns
// kring::result<T>: either a T or a kring::error carrying a positive errno
// value, the operation that failed where a caller may want to act on it
// (kring::operation), and a human-readable message that says what was
// attempted. A caller decides on code() and op(), never on the message.
//
// kring::result<T> follows the contract of C++23 std::expected<T, error>,
// so that moving to it is a matter of names:
//
//	has_value(), explicit operator bool    which of the two it holds
//	operator*, operator->                  precondition: has_value()
//	error()                                precondition: !has_value()
//	value()                                throws kring::bad_result_access
//	                                       (std::bad_expected_access) when
//	                                       it holds an error
//	value_or(v)                            the value, else v
//	and_then(f), transform(f), or_else(f)  monadic chaining, as expected's
//
// A violated precondition is a programming error: assert() catches it in
// debug builds. libkring itself never calls value() on a failed result.
#pragma once

#include <cassert>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace kring {

// What failed, for the errors a caller tells apart by more than their
// errno: opening the device node (ENOENT: the module is not loaded;
// EACCES: its mode) is not opening an output file.
enum class operation : std::uint8_t {
    other,        // any other: the message says what
    open_device,  // open(2) of the device node (device::open())
    query_abi,    // KRING_IOC_QUERY_ABI on it (ENOTTY: not a kring device)
    check_abi,    // its ABI does not suit this libkring (check_compatible())
};

class error {
public:
    error() = default;
    error(int code, std::string message, operation op = operation::other)
        : code_(code), op_(op), message_(std::move(message)) {}

    // "what: strerror(code)", for failures of a system call.
    static error from_errno(int code, std::string_view what, operation op = operation::other);

    int code() const noexcept { return code_; }
    operation op() const noexcept { return op_; }
    const std::string& message() const noexcept { return message_; }
    std::error_code error_code() const noexcept { return {code_, std::generic_category()}; }

    // The same error, its message behind "@what: ": the context a caller
    // adds when it passes an error on (code() and op() stay).
    error with_context(std::string_view what) const;

private:
    int code_ = 0;
    operation op_ = operation::other;
    std::string message_;
};

// What result<T>::value() throws when it holds an error (as
// std::bad_expected_access<kring::error>).
class bad_result_access : public std::exception {
public:
    explicit bad_result_access(kring::error e) : e_(std::move(e)) {}
    const char* what() const noexcept override { return e_.message().c_str(); }
    const kring::error& error() const noexcept { return e_; }

private:
    kring::error e_;
};

template <class T>
class result;

namespace detail {
template <class R>
struct is_result : std::false_type {};
template <class U>
struct is_result<result<U>> : std::true_type {};
}  // namespace detail

template <class T>
class [[nodiscard]] result {
    static_assert(!std::is_reference_v<T>, "result<T&> is not supported");
    static_assert(!std::is_same_v<std::remove_cv_t<T>, kring::error>,
                  "result<error> is not supported");

public:
    using value_type = T;
    using error_type = kring::error;

    result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    result(kring::error e) : v_(std::in_place_index<1>, std::move(e)) {}

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() & {
        check();
        return *std::get_if<0>(&v_);
    }
    const T& value() const& {
        check();
        return *std::get_if<0>(&v_);
    }
    T&& value() && {
        check();
        return std::move(*std::get_if<0>(&v_));
    }

    // Precondition: has_value().
    T& operator*() & noexcept {
        assert(has_value());
        return *std::get_if<0>(&v_);
    }
    const T& operator*() const& noexcept {
        assert(has_value());
        return *std::get_if<0>(&v_);
    }
    T&& operator*() && noexcept {
        assert(has_value());
        return std::move(*std::get_if<0>(&v_));
    }
    T* operator->() noexcept {
        assert(has_value());
        return std::get_if<0>(&v_);
    }
    const T* operator->() const noexcept {
        assert(has_value());
        return std::get_if<0>(&v_);
    }

    // Precondition: !has_value().
    const kring::error& error() const& noexcept {
        assert(!has_value());
        return *std::get_if<1>(&v_);
    }
    kring::error&& error() && noexcept {
        assert(!has_value());
        return std::move(*std::get_if<1>(&v_));
    }

    template <class U>
    T value_or(U&& other) const& {
        return has_value() ? **this : static_cast<T>(std::forward<U>(other));
    }
    template <class U>
    T value_or(U&& other) && {
        return has_value() ? std::move(**this) : static_cast<T>(std::forward<U>(other));
    }

    // f(value) -> result<U>; an error is passed on.
    template <class F>
    auto and_then(F&& f) const& {
        using R = std::remove_cvref_t<std::invoke_result_t<F, const T&>>;
        static_assert(detail::is_result<R>::value, "and_then: f must return a kring::result");
        return has_value() ? R(std::forward<F>(f)(**this)) : R(error());
    }
    template <class F>
    auto and_then(F&& f) && {
        using R = std::remove_cvref_t<std::invoke_result_t<F, T&&>>;
        static_assert(detail::is_result<R>::value, "and_then: f must return a kring::result");
        return has_value() ? R(std::forward<F>(f)(std::move(**this))) : R(std::move(*this).error());
    }
    // f(value) -> U, wrapped into result<U>; an error is passed on.
    template <class F>
    auto transform(F&& f) const& {
        using U = std::remove_cv_t<std::invoke_result_t<F, const T&>>;
        if (!has_value())
            return result<U>(error());
        if constexpr (std::is_void_v<U>) {
            std::forward<F>(f)(**this);
            return result<U>();
        } else {
            return result<U>(std::forward<F>(f)(**this));
        }
    }
    // f(error) -> result<T>; a value is passed on.
    template <class F>
    result or_else(F&& f) const& {
        return has_value() ? *this : result(std::forward<F>(f)(error()));
    }
    template <class F>
    result or_else(F&& f) && {
        return has_value() ? std::move(*this)
                           : result(std::forward<F>(f)(std::move(*this).error()));
    }

private:
    void check() const {
        if (!has_value())
            throw bad_result_access(*std::get_if<1>(&v_));
    }
    std::variant<T, kring::error> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
    using value_type = void;
    using error_type = kring::error;

    result() = default;
    result(kring::error e) : err_(std::move(e)), ok_(false) {}

    bool has_value() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    void operator*() const noexcept { assert(ok_); }
    void value() const {
        if (!ok_)
            throw bad_result_access(err_);
    }

    // Precondition: !has_value().
    const kring::error& error() const& noexcept {
        assert(!ok_);
        return err_;
    }
    kring::error&& error() && noexcept {
        assert(!ok_);
        return std::move(err_);
    }

    template <class F>
    auto and_then(F&& f) const {
        using R = std::remove_cvref_t<std::invoke_result_t<F>>;
        static_assert(detail::is_result<R>::value, "and_then: f must return a kring::result");
        return ok_ ? R(std::forward<F>(f)()) : R(err_);
    }
    template <class F>
    auto transform(F&& f) const {
        using U = std::remove_cv_t<std::invoke_result_t<F>>;
        if (!ok_)
            return result<U>(err_);
        if constexpr (std::is_void_v<U>) {
            std::forward<F>(f)();
            return result<U>();
        } else {
            return result<U>(std::forward<F>(f)());
        }
    }
    template <class F>
    result or_else(F&& f) const {
        return ok_ ? *this : result(std::forward<F>(f)(err_));
    }

private:
    kring::error err_;
    bool ok_ = true;
};

}  // namespace kring
