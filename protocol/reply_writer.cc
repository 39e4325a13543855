#include "protocol/reply_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace feedkv::protocol {

namespace {
void AppendInt(std::string* out, int64_t v) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  out->append(buf, ptr);
}
}  // namespace

void ReplyWriter::Header(char type, int64_t n) {
  out_->push_back(type);
  AppendInt(out_, n);
  out_->append("\r\n");
}

void ReplyWriter::Simple(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::Error(std::string_view msg) {
  out_->push_back('-');
  // Redis's convention: an error without an upper-case code word gets "ERR".
  size_t sp = msg.find(' ');
  std::string_view word = msg.substr(0, sp);
  bool has_code = !word.empty();
  for (char c : word) {
    if (!(c >= 'A' && c <= 'Z')) has_code = false;
  }
  if (!has_code) out_->append("ERR ");
  for (char c : msg) out_->push_back(c == '\r' || c == '\n' ? ' ' : c);
  out_->append("\r\n");
}

void ReplyWriter::ErrorVerbatim(std::string_view msg) {
  out_->push_back('-');
  for (char c : msg) out_->push_back(c == '\r' || c == '\n' ? ' ' : c);
  out_->append("\r\n");
}

void ReplyWriter::Integer(int64_t v) { Header(':', v); }

void ReplyWriter::Bulk(std::string_view s) {
  Header('$', static_cast<int64_t>(s.size()));
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::Null() { out_->append(resp_ >= 3 ? "_\r\n" : "$-1\r\n"); }
void ReplyWriter::NullArray() { out_->append(resp_ >= 3 ? "_\r\n" : "*-1\r\n"); }
void ReplyWriter::ArrayHeader(size_t n) { Header('*', static_cast<int64_t>(n)); }

void ReplyWriter::MapHeader(size_t pairs) {
  if (resp_ >= 3) {
    Header('%', static_cast<int64_t>(pairs));
  } else {
    Header('*', static_cast<int64_t>(pairs * 2));
  }
}

void ReplyWriter::SetHeader(size_t n) { Header(resp_ >= 3 ? '~' : '*', static_cast<int64_t>(n)); }
void ReplyWriter::PushHeader(size_t n) { Header(resp_ >= 3 ? '>' : '*', static_cast<int64_t>(n)); }

void ReplyWriter::Double(double d) { FormattedDouble(FormatDouble(d)); }

void ReplyWriter::Score(double d) {
  char buf[32];
  FormattedDouble(FormatScore(d, buf));
}

void ReplyWriter::FormattedDouble(std::string_view text) {
  if (resp_ >= 3) {
    out_->push_back(',');
    out_->append(text);
    out_->append("\r\n");
  } else {
    Bulk(text);
  }
}

std::string_view FormatScore(double d, char (&buf)[32]) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (std::isnan(d)) return "nan";
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  return std::string_view(buf, static_cast<size_t>(n));
}

void ReplyWriter::Bool(bool b) {
  if (resp_ >= 3) {
    out_->append(b ? "#t\r\n" : "#f\r\n");
  } else {
    out_->append(b ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyWriter::Verbatim(std::string_view s, std::string_view fmt) {
  if (resp_ < 3) {
    Bulk(s);
    return;
  }
  // The format is exactly three bytes; the declared length counts on it.
  if (fmt.size() < 3) fmt = "txt";
  Header('=', static_cast<int64_t>(s.size() + 4));
  out_->append(fmt.substr(0, 3));
  out_->push_back(':');
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::BulkArray(const std::string_view* items, size_t n) {
  ArrayHeader(n);
  for (size_t i = 0; i < n; i++) Bulk(items[i]);
}

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // The shortest digits that round-trip, in plain notation when the decimal
  // exponent is in [-5, 16] or the value is an integer below 2^62 (as Redis
  // prints integral doubles), else in scientific notation ("1.5e-07").
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(sci.ptr - buf));
  int exp10 = 0;
  size_t e = s.find('e');
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), exp10);
  constexpr double kIntegralLimit = 4611686018427387904.0;  // 2^62
  bool integral = std::fabs(d) < kIntegralLimit && std::trunc(d) == d;
  if ((exp10 >= -5 && exp10 <= 16) || integral) {
    char fixed[64];
    auto r = std::to_chars(fixed, fixed + sizeof(fixed), d, std::chars_format::fixed);
    return std::string(fixed, r.ptr);
  }
  return std::string(s);
}

void AppendCommand(std::string* out, const std::string_view* args, size_t n) {
  out->push_back('*');
  AppendInt(out, static_cast<int64_t>(n));
  out->append("\r\n");
  for (size_t i = 0; i < n; i++) {
    out->push_back('$');
    AppendInt(out, static_cast<int64_t>(args[i].size()));
    out->append("\r\n");
    out->append(args[i]);
    out->append("\r\n");
  }
}

}  // namespace feedkv::protocol
