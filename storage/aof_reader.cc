#include "storage/aof_reader.h"

#include <fmt/format.h>

namespace feedkv::aof {

namespace {

enum class Parse { kOk, kIncomplete, kBad };

class Scanner {
 public:
  explicit Scanner(std::string_view data) : d_(data) {}

  // Reads "<digits>\r\n" at *p. On kBad, *bad is the offending offset.
  Parse Number(size_t* p, uint64_t max, uint64_t* out, size_t* bad) const {
    size_t i = *p;
    uint64_t v = 0;
    size_t digits = 0;
    while (i < d_.size() && d_[i] >= '0' && d_[i] <= '9') {
      v = v * 10 + static_cast<uint64_t>(d_[i] - '0');
      if (++digits > 19 || v > max) {
        *bad = i;
        return Parse::kBad;
      }
      i++;
    }
    if (i == d_.size()) return Parse::kIncomplete;
    if (digits == 0 || d_[i] != '\r') {
      *bad = i;
      return Parse::kBad;
    }
    if (i + 1 == d_.size()) return Parse::kIncomplete;
    if (d_[i + 1] != '\n') {
      *bad = i + 1;
      return Parse::kBad;
    }
    *out = v;
    *p = i + 2;
    return Parse::kOk;
  }

  // Reads one "*N\r\n($L\r\n<bytes>\r\n){N}" record at *p, appending its
  // arguments to *args (left as they were unless it returns kOk).
  Parse Command(size_t* p, std::vector<std::string_view>* args, size_t* bad) const {
    size_t before = args->size();
    Parse r = CommandInner(p, args, bad);
    if (r != Parse::kOk) args->resize(before);
    return r;
  }

  Parse CommandInner(size_t* p, std::vector<std::string_view>* args, size_t* bad) const {
    size_t i = *p + 1;  // past '*'
    uint64_t n;
    Parse r = Number(&i, kMaxArgs, &n, bad);
    if (r != Parse::kOk) return r;
    if (n == 0) {
      *bad = *p;
      return Parse::kBad;
    }
    for (uint64_t a = 0; a < n; a++) {
      if (i == d_.size()) return Parse::kIncomplete;
      if (d_[i] != '$') {
        *bad = i;
        return Parse::kBad;
      }
      i++;
      uint64_t len;
      r = Number(&i, kMaxBulk, &len, bad);
      if (r != Parse::kOk) return r;
      if (d_.size() - i < len + 2) {
        // Past the end: a torn record, unless bytes that cannot belong to
        // it are there (checked by the caller).
        return Parse::kIncomplete;
      }
      args->push_back(d_.substr(i, len));
      i += len;
      if (d_[i] != '\r' || d_[i + 1] != '\n') {
        *bad = d_[i] != '\r' ? i : i + 1;
        return Parse::kBad;
      }
      i += 2;
    }
    *p = i;
    return Parse::kOk;
  }

  // True if a complete, well-formed trailer line appears in d_[from..].
  bool TrailerAfter(size_t from) const {
    size_t i = from;
    while ((i = d_.find(kTrailerPrefix, i)) != std::string_view::npos) {
      if (i > 0 && d_[i - 1] == '\n' && IsTrailer(i)) return true;
      i++;
    }
    return false;
  }

  bool IsTrailer(size_t i) const {
    if (d_.size() - i < kTrailerSize || d_.compare(i, kTrailerPrefix.size(), kTrailerPrefix) != 0) {
      return false;
    }
    for (size_t k = i + kTrailerPrefix.size(); k < i + kTrailerSize - 2; k++) {
      char c = d_[k];
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return d_[i + kTrailerSize - 2] == '\r' && d_[i + kTrailerSize - 1] == '\n';
  }

 private:
  std::string_view d_;
};

Status Damage(ScanResult* r, ScanEnd kind, uint64_t at, std::string what) {
  r->end = kind;
  r->error_offset = at;
  r->error = std::move(what);
  return Status::OK();
}

}  // namespace

Status ScanSegment(std::string_view data, uint64_t from, const GroupFn& fn, ScanResult* r) {
  *r = ScanResult{};
  r->valid_end = from;
  if (from > data.size()) {
    return Damage(r, ScanEnd::kCorrupt, data.size(),
                  fmt::format("position {} is past the end of the segment ({} bytes)", from, data.size()));
  }
  Scanner sc(data);
  Group g;
  size_t p = from;
  g.begin = from;
  // (offset, first argument, argument count) of the group's records so far;
  // spans are made once the group is complete (args no longer moves).
  struct Pending {
    uint64_t offset;
    size_t first, count;
  };
  std::vector<Pending> pending;
  while (true) {
    if (p == data.size()) {
      if (pending.empty() && p == g.begin) return Status::OK();  // clean end
      return Damage(r, ScanEnd::kTorn, p, "the last group has no checksum line (torn write)");
    }
    size_t bad = p;
    if (data[p] == '*') {
      size_t start = p, first = g.args.size();
      Parse res = sc.Command(&p, &g.args, &bad);
      if (res == Parse::kOk) {
        pending.push_back({start, first, g.args.size() - first});
        continue;
      }
      if (res == Parse::kIncomplete) {
        if (sc.TrailerAfter(p)) {
          return Damage(r, ScanEnd::kCorrupt, p,
                        "a record's length runs past a later checksum line (corrupt length)");
        }
        return Damage(r, ScanEnd::kTorn, p, "the last record is incomplete (torn write)");
      }
      return Damage(r, ScanEnd::kCorrupt, bad,
                    fmt::format("malformed record starting at offset {}", p));
    }
    if (data[p] == '#') {
      size_t eol = data.find("\r\n", p);
      if (eol == std::string_view::npos) {
        if (data.find('\n', p) != std::string_view::npos) {
          return Damage(r, ScanEnd::kCorrupt, p, "malformed annotation line");
        }
        if (data.size() - p >= kTrailerSize &&
            data.compare(p, kTrailerPrefix.size(), kTrailerPrefix) == 0) {
          // A write is torn at its end, so a checksum line of full length was written
          // whole: a damaged line end is a changed byte, and cutting the group it
          // closes would silently drop acknowledged writes.
          const size_t end = p + kTrailerSize;
          return Damage(r, ScanEnd::kCorrupt, end - 2,
                        fmt::format("the checksum line at bytes [{}, {}) is complete but ends in "
                                    "0x{:02x} 0x{:02x} instead of CR LF (a damaged byte, not a torn write)",
                                    p, end, static_cast<unsigned char>(data[end - 2]),
                                    static_cast<unsigned char>(data[end - 1])));
        }
        return Damage(r, ScanEnd::kTorn, p, "the last checksum line is incomplete (torn write)");
      }
      if (data.compare(p, kTrailerPrefix.size(), kTrailerPrefix) != 0) {
        p = eol + 2;  // an annotation: part of the group, otherwise ignored
        continue;
      }
      if (!sc.IsTrailer(p)) return Damage(r, ScanEnd::kCorrupt, p, "malformed checksum line");
      uint64_t want = 0;
      for (size_t k = p + kTrailerPrefix.size(); k < p + kTrailerSize - 2; k++) {
        char c = data[k];
        want = want * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
      }
      uint64_t got = GroupHash(data.substr(g.begin, p - g.begin));
      if (got != want) {
        return Damage(r, ScanEnd::kCorrupt, g.begin,
                      fmt::format("checksum mismatch for the group at bytes [{}, {}) "
                                  "(stored {:016x}, computed {:016x})",
                                  g.begin, p + kTrailerSize, want, got));
      }
      p += kTrailerSize;
      g.end = p;
      g.records.clear();
      for (const Pending& pr : pending) {
        g.records.push_back({pr.offset, std::span<const std::string_view>(g.args.data() + pr.first, pr.count)});
      }
      Status s = fn(g);
      if (!s.ok()) return s;
      r->groups++;
      r->records += g.records.size();
      r->valid_end = p;
      g.records.clear();
      g.args.clear();
      pending.clear();
      g.begin = p;
      continue;
    }
    return Damage(r, ScanEnd::kCorrupt, p,
                  fmt::format("unexpected byte 0x{:02x} where a record should start",
                              static_cast<unsigned char>(data[p])));
  }
}

Status ReadLog(Env* env, const std::string& dir, std::string_view base_name, const Manifest& m,
               Position from, const ReadOptions& options,
               const std::function<Status(uint64_t seq, const Group&)>& fn, LogReport* report) {
  *report = LogReport{};
  const SegmentInfo* first = m.Find(from.segment);
  if (first == nullptr) {
    return Status::Corruption(fmt::format("AOF segment {} is not in the manifest", from.segment));
  }
  for (uint64_t seq = from.segment; seq <= m.last().seq; seq++) {
    const SegmentInfo* info = m.Find(seq);
    bool last = seq == m.last().seq;
    std::string name = SegmentName(base_name, seq);
    std::string path = JoinPath(dir, name);
    std::unique_ptr<MappedFile> file;
    Status s = env->MapFile(path, &file);
    if (!s.ok()) return Status::Corruption(fmt::format("cannot read AOF segment {}: {}", name, s.ToString()));
    std::string_view data = file->data();
    if (!last) {
      uint64_t expect = m.Find(seq + 1)->start - info->start;
      if (data.size() != expect) {
        return Status::Corruption(fmt::format(
            "AOF segment {} is {} bytes but the manifest says {} (a closed segment changed)", name,
            data.size(), expect));
      }
    }
    uint64_t start_at = seq == from.segment ? from.offset : 0;
    ScanResult r;
    s = ScanSegment(data, start_at, [&](const Group& g) { return fn(seq, g); }, &r);
    if (!s.ok()) return s;
    report->groups += r.groups;
    report->records += r.records;
    report->end = {seq, r.valid_end};
    report->end_offset = info->start + r.valid_end;
    report->tail_size = r.valid_end;
    if (r.end == ScanEnd::kClean) continue;
    if (r.end == ScanEnd::kCorrupt || !last || !options.truncate_torn_tail) {
      return Status::Corruption(fmt::format("{} at offset {} of {}: {}",
                                            r.end == ScanEnd::kTorn ? "Truncated AOF" : "Bad AOF format",
                                            r.error_offset, name, r.error));
    }
    report->truncated = true;
    report->truncated_file = name;
    report->truncated_at = r.valid_end;
    report->truncated_bytes = data.size() - r.valid_end;
    report->truncated_reason = r.error;
    file.reset();
    if (options.fix_file) {
      s = env->TruncateFile(path, r.valid_end);
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

}  // namespace feedkv::aof
