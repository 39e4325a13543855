// Status: the result of an operation that can fail, in leveldb's shape.
// An OK status holds no allocation, so success costs a null pointer. Errors
// carry a code and a message. Copyable; not thread-safe to mutate concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace feedkv {

class [[nodiscard]] Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,
    kCorruption,
    kInvalidArgument,
    kIOError,
    kNoSpace,
    kBusy,
    kFull,
    kOutOfRange,  // a value would leave its range (an increment overflowing)
    kWrongType,   // the key holds a value of another type (Redis's WRONGTYPE)
    kInvalidObject,  // a stored value is damaged (Redis's INVALIDOBJ: a corrupt HLL)
  };

  Status() = default;
  Status(const Status& o) : rep_(o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr) {}
  Status& operator=(const Status& o) {
    rep_ = o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view m) { return Status(Code::kNotFound, m); }
  static Status Corruption(std::string_view m) { return Status(Code::kCorruption, m); }
  static Status InvalidArgument(std::string_view m) { return Status(Code::kInvalidArgument, m); }
  static Status IOError(std::string_view m) { return Status(Code::kIOError, m); }
  static Status NoSpace(std::string_view m) { return Status(Code::kNoSpace, m); }
  static Status Busy(std::string_view m) { return Status(Code::kBusy, m); }
  static Status Full(std::string_view m) { return Status(Code::kFull, m); }
  static Status OutOfRange(std::string_view m) { return Status(Code::kOutOfRange, m); }
  // The message, when given, replaces Redis's generic WRONGTYPE text (an HLL's).
  static Status WrongType(std::string_view m = {}) { return Status(Code::kWrongType, m); }
  static Status InvalidObject(std::string_view m) { return Status(Code::kInvalidObject, m); }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  bool IsNotFound() const { return code() == Code::kNotFound; }
  bool IsCorruption() const { return code() == Code::kCorruption; }
  bool IsInvalidArgument() const { return code() == Code::kInvalidArgument; }
  bool IsIOError() const { return code() == Code::kIOError; }
  bool IsNoSpace() const { return code() == Code::kNoSpace; }
  bool IsFull() const { return code() == Code::kFull; }
  bool IsOutOfRange() const { return code() == Code::kOutOfRange; }
  bool IsWrongType() const { return code() == Code::kWrongType; }
  bool IsInvalidObject() const { return code() == Code::kInvalidObject; }

  // The message alone, without a code prefix ("" when OK).
  const std::string& message() const {
    static const std::string kEmpty;
    return rep_ ? rep_->msg : kEmpty;
  }
  std::string ToString() const;

  // Explicitly discards an error the caller has decided not to act on.
  void PermitUnchecked() const {}

 private:
  struct Rep {
    Code code;
    std::string msg;
  };
  Status(Code c, std::string_view m) : rep_(std::make_unique<Rep>(Rep{c, std::string(m)})) {}
  std::unique_ptr<Rep> rep_;
};

inline std::string Status::ToString() const {
  switch (code()) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "NotFound: " + message();
    case Code::kCorruption: return "Corruption: " + message();
    case Code::kInvalidArgument: return "Invalid argument: " + message();
    case Code::kIOError: return "IO error: " + message();
    case Code::kNoSpace: return "No space: " + message();
    case Code::kBusy: return "Busy: " + message();
    case Code::kFull: return "Full: " + message();
    case Code::kOutOfRange: return "Out of range: " + message();
    case Code::kWrongType: return message().empty() ? "Wrong type" : "Wrong type: " + message();
    case Code::kInvalidObject: return "Invalid object: " + message();
  }
  return message();
}

// A value or the Status of its failure, in absl's shape: the result type of the
// operation layer (server/ops/), whose callers reply with one or the other.
template <class T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as absl's
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT; REQUIRES: !status.ok()

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return value_; }  // REQUIRES: ok()
  const T& value() const { return value_; }
  T& operator*() { return value_; }
  const T& operator*() const { return value_; }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }

 private:
  Status status_;
  T value_{};
};

}  // namespace feedkv
