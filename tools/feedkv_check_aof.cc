// feedkv-check-aof: verifies an AOF (a directory with a manifest, or one
// segment file) and reports the first damage with its file and offset.
// With --fix it cuts the log at the end of the last valid group (a damaged
// segment that is not the last also drops the segments after it from the
// manifest; their files are kept, renamed *.dropped).
//
//   feedkv-check-aof [--fix] <appendonlydir | segment file>
//
// Exit status: 0 the log is valid (or was fixed), 1 damage found, 2 usage or
// I/O error.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "storage/aof_manifest.h"
#include "storage/aof_reader.h"
#include "storage/file_io.h"

using namespace feedkv;

namespace {

int CheckSegmentFile(Env* env, const std::string& path, bool fix) {
  std::unique_ptr<MappedFile> f;
  Status s = env->MapFile(path, &f);
  if (!s.ok()) {
    fmt::print(stderr, "{}\n", s.ToString());
    return 2;
  }
  aof::ScanResult r;
  s = aof::ScanSegment(f->data(), 0, [](const aof::Group&) { return Status::OK(); }, &r);
  uint64_t size = f->data().size();
  f.reset();
  fmt::print("{}: {} bytes, {} groups, {} commands valid up to offset {}\n", path, size, r.groups,
             r.records, r.valid_end);
  if (r.end == aof::ScanEnd::kClean) {
    fmt::print("AOF segment is valid\n");
    return 0;
  }
  fmt::print("{} at offset {}: {}\n", r.end == aof::ScanEnd::kTorn ? "Truncated" : "Corrupt",
             r.error_offset, r.error);
  if (!fix) {
    fmt::print("Run with --fix to truncate it to offset {} ({} bytes would be lost)\n", r.valid_end,
               size - r.valid_end);
    return 1;
  }
  s = env->TruncateFile(path, r.valid_end);
  if (!s.ok()) {
    fmt::print(stderr, "{}\n", s.ToString());
    return 2;
  }
  fmt::print("Successfully truncated {} to offset {}\n", path, r.valid_end);
  return 0;
}

int CheckDir(Env* env, const std::string& dir, bool fix) {
  std::vector<std::string> names;
  Status s = env->ListDir(dir, &names);
  if (!s.ok()) {
    fmt::print(stderr, "{}\n", s.ToString());
    return 2;
  }
  std::string base;
  for (const auto& n : names) {
    const std::string suffix = ".manifest";
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      base = n.substr(0, n.size() - suffix.size());
    }
  }
  if (base.empty()) {
    fmt::print(stderr, "no *.manifest in {}\n", dir);
    return 2;
  }
  aof::Manifest m;
  s = aof::LoadManifest(env, dir, base, &m);
  if (!s.ok()) {
    fmt::print("Bad manifest: {}\n", s.ToString());
    return 1;
  }
  fmt::print("manifest: lineage {:016x}, segments {}..{} (first starts at offset {})\n", m.lineage,
             m.segments.front().seq, m.last().seq, m.segments.front().start);
  aof::ReadOptions opts;
  opts.truncate_torn_tail = false;  // report a torn tail as damage
  opts.fix_file = false;
  aof::LogReport report;
  s = aof::ReadLog(env, dir, base, m, {m.segments.front().seq, 0}, opts,
                   [](uint64_t, const aof::Group&) { return Status::OK(); }, &report);
  fmt::print("{} groups, {} commands; valid up to segment {} offset {} (global offset {})\n",
             report.groups, report.records, report.end.segment, report.end.offset,
             report.end_offset);
  if (s.ok()) {
    fmt::print("AOF is valid\n");
    return 0;
  }
  fmt::print("{}\n", s.message());
  if (!fix) {
    fmt::print("Run with --fix to truncate {} at offset {}{}\n",
               aof::SegmentName(base, report.end.segment), report.end.offset,
               report.end.segment < m.last().seq ? " and drop the segments after it" : "");
    return 1;
  }
  uint64_t seq = report.end.segment == 0 ? m.segments.front().seq : report.end.segment;
  std::string path = JoinPath(dir, aof::SegmentName(base, seq));
  s = env->TruncateFile(path, report.end.offset);
  const aof::Manifest before = m;
  std::vector<std::string> dropped;
  if (s.ok() && seq < m.last().seq) {
    for (uint64_t later = seq + 1; later <= m.last().seq; later++) {
      std::string p = JoinPath(dir, aof::SegmentName(base, later));
      if (env->RenameFile(p, p + ".dropped").ok()) dropped.push_back(aof::SegmentName(base, later));
    }
    m.segments.resize(seq - m.segments.front().seq + 1);
    s = aof::StoreManifest(env, dir, base, m);
  }
  if (!s.ok()) {
    fmt::print(stderr, "fix failed: {}\n", s.ToString());
    return 2;
  }
  fmt::print("Successfully truncated AOF at {} offset {}\n", aof::SegmentName(base, seq),
             report.end.offset);
  if (!dropped.empty()) {
    // The later segments hold writes that came after the damage: they were not
    // deleted, only taken out of the log, so an operator can still get them back.
    fmt::print("{} later segment(s) were taken out of the log and kept, renamed *.dropped:\n",
               dropped.size());
    for (const std::string& n : dropped) fmt::print("  {} -> {}.dropped\n", n, n);
    fmt::print(
        "Their writes are no longer loaded at start-up. To recover them, either\n"
        "  - repair the damaged bytes of the original {} (the offset is named above; keep a\n"
        "    copy before --fix), rename the .dropped files back and restore these manifest\n"
        "    lines, then run feedkv-check-aof on the directory again:\n",
        aof::SegmentName(base, seq));
    for (const auto& info : before.segments) {
      if (info.seq > seq) fmt::print("      segment {} start {} file {}\n", info.seq, info.start,
                                     aof::SegmentName(base, info.seq));
    }
    fmt::print(
        "  - or read their commands (plain RESP between checksum lines) and re-apply the ones\n"
        "    you need through a client, e.g. redis-cli --pipe.\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool fix = false;
  std::string target;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--fix") {
      fix = true;
    } else if (target.empty() && a.rfind("--", 0) != 0) {
      target = a;
    } else {
      target.clear();
      break;
    }
  }
  if (target.empty()) {
    fmt::print(stderr, "Usage: {} [--fix] <appendonlydir | segment file>\n", argv[0]);
    return 2;
  }
  Env* env = Env::Default();
  std::vector<std::string> probe;
  if (env->ListDir(target, &probe).ok()) return CheckDir(env, target, fix);
  return CheckSegmentFile(env, target, fix);
}
