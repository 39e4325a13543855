#include "storage/aof_manifest.h"

#include <xxhash.h>

#include <charconv>
#include <sstream>

#include <fmt/format.h>

#include "storage/aof_format.h"

namespace feedkv::aof {

namespace {

constexpr std::string_view kHeaderLine = "# feedkv AOF manifest; see docs/persistence.md. Do not edit.";

bool ParseU64(std::string_view s, uint64_t* out, int base = 10) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> w;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') i++;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') j++;
    if (j > i) w.push_back(line.substr(i, j - i));
    i = j;
  }
  return w;
}

}  // namespace

const SegmentInfo* Manifest::Find(uint64_t seq) const {
  if (segments.empty() || seq < segments.front().seq || seq > segments.back().seq) return nullptr;
  return &segments[seq - segments.front().seq];
}

std::string Manifest::Serialize(std::string_view base_name) const {
  std::string out = fmt::format("{}\nversion 1\nlineage {:016x}\n", kHeaderLine, lineage);
  if (base_pending) out += "base pending\n";
  for (const auto& s : segments) {
    out += fmt::format("segment {} start {} file {}\n", s.seq, s.start, SegmentName(base_name, s.seq));
  }
  out += fmt::format("checksum {:016x}\n", XXH64(out.data(), out.size(), 0));
  return out;
}

Status Manifest::Parse(std::string_view text, std::string_view base_name, Manifest* out) {
  *out = Manifest{};
  size_t cks = text.rfind("checksum ");
  if (cks == std::string_view::npos || (cks > 0 && text[cks - 1] != '\n')) {
    return Status::Corruption("manifest has no checksum line");
  }
  std::string_view last = text.substr(cks);
  if (!last.empty() && last.back() == '\n') last.remove_suffix(1);
  uint64_t want;
  if (!ParseU64(last.substr(9), &want, 16)) return Status::Corruption("bad manifest checksum line");
  if (XXH64(text.data(), cks, 0) != want) return Status::Corruption("manifest checksum mismatch");
  bool have_version = false, have_lineage = false;
  size_t line_no = 0;
  std::string_view body = text.substr(0, cks);
  while (!body.empty()) {
    size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
    line_no++;
    if (line.empty() || line[0] == '#') continue;
    auto w = Words(line);
    auto bad = [&](std::string_view why) {
      return Status::Corruption(fmt::format("manifest line {}: {}", line_no, why));
    };
    if (w[0] == "version") {
      uint64_t v;
      if (w.size() != 2 || !ParseU64(w[1], &v)) return bad("bad version line");
      if (v != 1) return bad(fmt::format("unsupported manifest version {}", v));
      have_version = true;
    } else if (w[0] == "lineage") {
      if (w.size() != 2 || !ParseU64(w[1], &out->lineage, 16)) return bad("bad lineage line");
      have_lineage = true;
    } else if (w[0] == "base") {
      if (w.size() != 2 || w[1] != "pending") return bad("bad base line");
      out->base_pending = true;
    } else if (w[0] == "segment") {
      SegmentInfo s;
      if (w.size() != 6 || w[2] != "start" || w[4] != "file" || !ParseU64(w[1], &s.seq) ||
          !ParseU64(w[3], &s.start)) {
        return bad("bad segment line");
      }
      if (w[5] != SegmentName(base_name, s.seq)) return bad("segment file name does not match its seq");
      if (!out->segments.empty()) {
        const SegmentInfo& prev = out->segments.back();
        if (s.seq != prev.seq + 1) return bad("segment seqs are not contiguous");
        if (s.start < prev.start) return bad("segment start offsets decrease");
      }
      if (s.seq == 0) return bad("segment seq 0");
      out->segments.push_back(s);
    } else {
      return bad(fmt::format("unknown directive '{}'", w[0]));
    }
  }
  if (!have_version || !have_lineage) return Status::Corruption("manifest lacks version or lineage");
  if (out->segments.empty()) return Status::Corruption("manifest lists no segment");
  return Status::OK();
}

Status LoadManifest(Env* env, const std::string& dir, std::string_view base_name, Manifest* out) {
  std::string path = JoinPath(dir, ManifestName(base_name));
  if (!env->FileExists(path)) return Status::NotFound(path);
  std::string text;
  Status s = env->ReadFile(path, &text);
  if (!s.ok()) return s;
  s = Manifest::Parse(text, base_name, out);
  if (!s.ok()) return Status::Corruption(path + ": " + s.message());
  return Status::OK();
}

Status StoreManifest(Env* env, const std::string& dir, std::string_view base_name,
                     const Manifest& m) {
  return WriteFileAtomic(env, JoinPath(dir, ManifestName(base_name)), m.Serialize(base_name));
}

}  // namespace feedkv::aof
