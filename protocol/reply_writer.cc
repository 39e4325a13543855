#include "protocol/reply_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

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

void ReplyWriter::Double(double d) {
  std::string s = FormatDouble(d);
  if (resp_ >= 3) {
    out_->push_back(',');
    out_->append(s);
    out_->append("\r\n");
  } else {
    Bulk(s);
  }
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
  // Integral values inside the exactly representable range print without
  // a fraction, as Redis's %.17Lg does for INCRBYFLOAT.
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  if (ec != std::errc()) {
    int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
    return std::string(buf, n);
  }
  std::string s(buf, ptr);
  // to_chars may use exponent form for large/small magnitudes; Redis prints
  // plain digits for |d| < 1e17 or so. Normalise with %.17g in that case.
  if (s.find('e') != std::string::npos) {
    int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
    s.assign(buf, n);
  }
  return s;
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
