// User-facing errors (Error and subclasses) versus internal invariant checks (TESSEL_ICHECK).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessel {

// Something the user can fix: a bad model, schedule, flag or argument.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// An invalid schedule primitive. `brief()` is a short reason for tuners; what() is the full
// message.
class ScheduleError : public Error {
 public:
  ScheduleError(std::string brief, const std::string& detail)
      : Error(detail), brief_(std::move(brief)) {}
  const std::string& brief() const { return brief_; }

 private:
  std::string brief_;
};

// A bug in Tessel itself.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg) : std::logic_error(msg) {}
};

namespace detail {
// Collects a message with operator<< and throws on destruction of the full expression.
class ICheckFailure {
 public:
  ICheckFailure(const char* file, int line, const char* cond) {
    os_ << "Internal error at " << file << ":" << line << ": check failed: " << cond << ": ";
  }
  template <class T>
  ICheckFailure& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] ~ICheckFailure() noexcept(false) { throw InternalError(os_.str()); }

 private:
  std::ostringstream os_;
};
}  // namespace detail

}  // namespace tessel

#define TESSEL_ICHECK(cond) \
  if (cond) {               \
  } else                    \
    ::tessel::detail::ICheckFailure(__FILE__, __LINE__, #cond)

// Marks a path that only a Tessel bug can reach.
#define TESSEL_UNREACHABLE(msg)                                                      \
  throw ::tessel::InternalError(std::string("Internal error at ") + __FILE__ + ":" + \
                                std::to_string(__LINE__) + ": unreachable: " + (msg))
