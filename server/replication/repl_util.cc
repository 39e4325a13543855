#include "server/replication/repl_util.h"

#include <sys/statvfs.h>

#include <charconv>
#include <memory>

#include "server/server.h"
#include "storage/file_io.h"

namespace feedkv::server::repl {


std::string RandomHex40(Server& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 40; i++) id.push_back(kHex[s.Random() % 16]);
  return id;
}

bool ParseI64(std::string_view s, int64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
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
  if (!ParseI64(v.substr(sp + 1), &p) || p < 0 || p > 65535) return false;
  *host = std::string(v.substr(0, sp));
  *port = static_cast<int>(p);
  return !host->empty();
}

int64_t FreeDiskPercent(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0 || v.f_blocks == 0) return -1;
  return static_cast<int64_t>(100.0 * static_cast<double>(v.f_bavail) / static_cast<double>(v.f_blocks));
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  Env* env = Env::Default();
  const std::string tmp = path + ".tmp";
  std::unique_ptr<WritableFile> f;
  Status s = env->NewWritableFile(tmp, true, &f);
  if (s.ok()) s = f->Append(text);
  if (s.ok()) s = f->Sync();
  if (s.ok()) s = f->Close();
  if (s.ok()) s = env->RenameFile(tmp, path);
  return s;
}


}  // namespace feedkv::server::repl
