// The COMMAND DOCS facts of each command beyond its table row (the row gives
// the summary and the group): since-version, complexity, history, doc flags
// and the argument tree in the compact notation server/command_docs.h
// describes. One file per Redis group (redis_<group>.cc, generated from Redis
// 7's own COMMAND DOCS by tools/command-docs-from-redis.py) and feedkv.cc for
// the commands only feedkv has. Constant data; safe from any thread.
#pragma once

#include <span>
#include <string_view>

namespace feedkv::server::command_docs {

struct CommandDocEntry {
  std::string_view name;        // the row's fullname: "set", "client|kill"
  std::string_view since;
  std::string_view complexity;  // "": not given
  std::string_view arguments;   // the notation; "": no arguments
  std::string_view history = {};           // "version text" lines
  std::string_view doc_flags = {};         // "deprecated", "syscmd", space separated
  std::string_view deprecated_since = {};
  std::string_view replaced_by = {};
};

#define FEEDKV_DOCS_FILE(func) std::span<const CommandDocEntry> func();
#include "server/command_docs/redis_files.inc"
#undef FEEDKV_DOCS_FILE
std::span<const CommandDocEntry> FeedkvDocs();

}  // namespace feedkv::server::command_docs
