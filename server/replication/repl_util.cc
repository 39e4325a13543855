#include "server/replication/repl_util.h"

#include <memory>

#include "server/server.h"
#include "storage/file_io.h"
#include "storage/int_text.h"

namespace feedkv::server::repl {

std::string RandomHex40(Server& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 40; i++) id.push_back(kHex[s.Random() % 16]);
  return id;
}

bool IsHex40(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool SplitHostPort(std::string_view v, std::string* host, int* port) {
  size_t sp = v.find(' ');
  if (sp == std::string_view::npos) return false;
  int64_t p = 0;
  if (!ParseCanonicalInt64(v.substr(sp + 1), &p) || p < 0 || p > 65535) return false;
  *host = std::string(v.substr(0, sp));
  *port = static_cast<int>(p);
  return !host->empty();
}

void ForEachLine(std::string_view text, const std::function<void(std::string_view)>& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    fn(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> w;
  size_t a = 0;
  while (a < line.size()) {
    size_t b = line.find(' ', a);
    if (b == std::string_view::npos) b = line.size();
    if (b > a) w.push_back(line.substr(a, b - a));
    a = b + 1;
  }
  return w;
}


}  // namespace feedkv::server::repl
