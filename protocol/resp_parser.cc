#include "protocol/resp_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstring>

#include "protocol/error_text.h"

namespace feedkv::protocol {

namespace {

// Parses a RESP length ("-1", "12") as strictly as Redis's string2ll: "0", or
// an optional '-' and digits without a leading zero; no '+', no "-0", no blanks.
bool ParseLength(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t digits = s[0] == '-' ? 1 : 0;
  if (digits == s.size()) return false;
  if (s[digits] == '0' && s.size() != 1) return false;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, *out);
  return ec == std::errc() && ptr == last;
}

// The common header: up to 17 digits then "\r\n", at buf[start..]. Returns the value
// and sets *next past the "\n", or -1 for anything else (a sign, a leading zero, more
// digits, a line not yet complete), which the general path then judges.
int64_t QuickLength(std::string_view buf, size_t start, size_t* next) {
  // At most 18 digits are read (they cannot overflow); 18 is already too many.
  const size_t end = std::min(buf.size(), start + 18);
  size_t i = start;
  uint64_t v = 0;
  for (; i < end; i++) {
    const unsigned d = static_cast<unsigned char>(buf[i]) - unsigned{'0'};
    if (d > 9) break;
    v = v * 10 + d;
  }
  const size_t digits = i - start;
  if (digits == 0 || digits > 17 || (digits > 1 && buf[start] == '0')) return -1;
  if (i + 1 >= buf.size() || buf[i] != '\r' || buf[i + 1] != '\n') return -1;
  *next = i + 2;
  return static_cast<int64_t>(v);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// isspace() in the C locale: skipped between arguments and accepted after a
// closing quote.
bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'; }

// The narrower set that ends an unquoted argument ("a\vb" is one argument).
bool EndsToken(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::string QuoteRepr(std::string_view s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': r += "\\\\"; break;
      case '"': r += "\\\""; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      case '\a': r += "\\a"; break;
      case '\b': r += "\\b"; break;
      default:
        if (std::isprint(c)) {
          r.push_back(static_cast<char>(c));
        } else {
          static const char kHex[] = "0123456789abcdef";
          r += "\\x";
          r.push_back(kHex[c >> 4]);
          r.push_back(kHex[c & 15]);
        }
    }
  }
  return r + "\"";
}

bool SplitInlineArgs(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0, n = line.size();
  while (true) {
    while (i < n && IsSpace(line[i])) i++;
    if (i >= n) return true;
    std::string cur;
    bool in_dq = false, in_sq = false, done = false;
    while (!done) {
      if (in_dq) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          cur.push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 3;
        } else if (c == '\\' && i + 1 < n) {
          i++;
          switch (line[i]) {
            case 'n': cur.push_back('\n'); break;
            case 'r': cur.push_back('\r'); break;
            case 't': cur.push_back('\t'); break;
            case 'b': cur.push_back('\b'); break;
            case 'a': cur.push_back('\a'); break;
            default: cur.push_back(line[i]); break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          cur.push_back(c);
        }
      } else if (in_sq) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          i++;
          cur.push_back('\'');
        } else if (c == '\'') {
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          cur.push_back(c);
        }
      } else {
        if (i >= n) break;
        char c = line[i];
        if (EndsToken(c)) {
          done = true;
        } else if (c == '"') {
          in_dq = true;
        } else if (c == '\'') {
          in_sq = true;
        } else {
          cur.push_back(c);
        }
      }
      if (i < n) i++;
    }
    out->push_back(std::move(cur));
  }
}

void RespParser::ReleaseLargeArrays() {
  constexpr size_t kKeepArgs = 1024;  // 32 KB of arrays: reused, not given back
  if (pos_ != 0 || multibulk_left_ >= 0) return;  // a command is half read
  if (args_.capacity() > kKeepArgs) std::vector<std::string_view>().swap(args_);
  if (arg_spans_.capacity() > kKeepArgs) std::vector<std::pair<size_t, size_t>>().swap(arg_spans_);
  if (inline_storage_.capacity() > kKeepArgs * 16) std::string().swap(inline_storage_);
}

void RespParser::ResetCommandState() {
  pos_ = 0;
  scan_ = 0;
  multibulk_left_ = -1;
  bulk_len_ = -1;
  arg_spans_.clear();
}

RespParser::Result RespParser::Fail(std::string msg) {
  error_ = std::move(msg);
  ResetCommandState();
  return Result::kError;
}

RespParser::Result RespParser::Parse(std::string_view buf, size_t* consumed) {
  *consumed = 0;
  if (buf.empty()) return Result::kNeedMore;
  if (buf[0] == '*') return ParseMultibulk(buf, consumed);
  return ParseInline(buf, consumed);
}

RespParser::Result RespParser::ParseInline(std::string_view buf, size_t* consumed) {
  size_t nl = buf.find('\n', std::min(scan_, buf.size()));
  if (nl == std::string_view::npos) {
    if (buf.size() > limits_.max_inline_len) return Fail(err::kProtoTooBigInline);
    scan_ = buf.size();
    return Result::kNeedMore;
  }
  scan_ = 0;
  if (nl > limits_.max_inline_len) return Fail(err::kProtoTooBigInline);
  std::string_view line = buf.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> parts;
  if (!SplitInlineArgs(line, &parts)) return Fail(err::kProtoUnbalancedQuotes);
  // Inline arguments are unescaped copies; keep them in one string so the
  // returned views stay valid until the next call.
  inline_storage_.clear();
  size_t total = 0;
  for (auto& p : parts) total += p.size();
  inline_storage_.reserve(total);
  for (auto& p : parts) inline_storage_.append(p);
  args_.clear();
  size_t off = 0;
  for (auto& p : parts) {
    args_.emplace_back(inline_storage_.data() + off, p.size());
    off += p.size();
  }
  *consumed = nl + 1;
  return Result::kCommand;
}

RespParser::Result RespParser::ParseMultibulk(std::string_view buf, size_t* consumed) {
  if (multibulk_left_ < 0) {
    // Header "*<count>\r\n".
    size_t next;
    if (int64_t count = QuickLength(buf, 1, &next);
        count > 0 && static_cast<uint64_t>(count) <= limits_.max_multibulk_len && count <= INT_MAX &&
        (!limits_.unauthenticated || static_cast<uint64_t>(count) <= ParserLimits::kUnauthMaxMultibulk)) {
      multibulk_left_ = count;
      pos_ = next;
      scan_ = 0;
      arg_spans_.clear();
      arg_spans_.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
    }
  }
  if (multibulk_left_ < 0) {
    size_t cr = buf.find('\r', std::max<size_t>(scan_, 1));
    if (cr == std::string_view::npos || cr + 1 >= buf.size()) {
      if (buf.size() > limits_.max_inline_len) return Fail(err::kProtoTooBigMultibulk);
      scan_ = std::min(cr, buf.size());
      return Result::kNeedMore;
    }
    scan_ = 0;
    if (buf[cr + 1] != '\n') return Fail(err::kProtoInvalidMultibulk);
    int64_t count;
    if (!ParseLength(buf.substr(1, cr - 1), &count) || count > INT_MAX ||
        static_cast<uint64_t>(std::max<int64_t>(count, 0)) > limits_.max_multibulk_len) {
      return Fail(err::kProtoInvalidMultibulk);
    }
    if (limits_.unauthenticated && count > static_cast<int64_t>(ParserLimits::kUnauthMaxMultibulk)) {
      return Fail(err::kProtoUnauthMultibulk);
    }
    pos_ = cr + 2;
    if (count <= 0) {
      args_.clear();
      *consumed = pos_;
      ResetCommandState();
      return Result::kCommand;
    }
    multibulk_left_ = count;
    arg_spans_.clear();
    arg_spans_.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
  }
  while (multibulk_left_ > 0) {
    if (bulk_len_ < 0) {
      if (pos_ >= buf.size()) return Result::kNeedMore;
      if (buf[pos_] != '$') {
        // Redis's addReplyErrorFormat turns CR/LF into spaces; do the same so
        // error() is the exact text.
        char got = buf[pos_] == '\r' || buf[pos_] == '\n' ? ' ' : buf[pos_];
        return Fail(std::string("ERR Protocol error: expected '$', got '") + got + "'");
      }
      size_t next;
      if (int64_t len = QuickLength(buf, pos_ + 1, &next);
          len >= 0 && static_cast<uint64_t>(len) <= limits_.max_bulk_len &&
          (!limits_.unauthenticated || static_cast<uint64_t>(len) <= ParserLimits::kUnauthMaxBulk)) {
        bulk_len_ = len;
        pos_ = next;
        scan_ = 0;
      }
    }
    if (bulk_len_ < 0) {
      size_t cr = buf.find('\r', std::max(scan_, pos_ + 1));
      if (cr == std::string_view::npos || cr + 1 >= buf.size()) {
        if (buf.size() - pos_ > limits_.max_inline_len) return Fail(err::kProtoTooBigBulk);
        scan_ = std::min(cr, buf.size());
        return Result::kNeedMore;
      }
      scan_ = 0;
      int64_t len;
      if (buf[cr + 1] != '\n' || !ParseLength(buf.substr(pos_ + 1, cr - pos_ - 1), &len) ||
          len < 0 || static_cast<uint64_t>(len) > limits_.max_bulk_len) {
        return Fail(err::kProtoInvalidBulk);
      }
      if (limits_.unauthenticated && static_cast<uint64_t>(len) > ParserLimits::kUnauthMaxBulk) {
        return Fail(err::kProtoUnauthBulk);
      }
      bulk_len_ = len;
      pos_ = cr + 2;
    }
    // Like Redis, the two bytes after a bulk are taken as its terminator
    // without inspection; the declared length is authoritative.
    if (buf.size() - pos_ < static_cast<uint64_t>(bulk_len_) + 2) return Result::kNeedMore;
    arg_spans_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    pos_ += static_cast<size_t>(bulk_len_) + 2;
    bulk_len_ = -1;
    multibulk_left_--;
  }
  args_.clear();
  args_.reserve(arg_spans_.size());
  for (auto [off, len] : arg_spans_) args_.emplace_back(buf.data() + off, len);
  *consumed = pos_;
  ResetCommandState();
  return Result::kCommand;
}

}  // namespace feedkv::protocol
