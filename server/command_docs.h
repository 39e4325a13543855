// Command documentation from the command table: docs/commands.md (rendered by
// CommandsMarkdown; a ctest compares the file with the table) and the facts
// COMMAND DOCS gives beyond a row's summary and group (FindCommandDoc).
//
// A command's arguments are written in a compact notation (the data lives in
// server/command_docs/): a space-separated list, each argument being
//   name:type     its name and Redis type: key, string, integer, double,
//                 pattern, unix-time, pure-token, oneof or block
//   =TOKEN        the token before it ("=NX" alone is the pure-token "nx")
//   #N            key_spec_index      @V  since      !V  deprecated_since
//   ?  optional   *  multiple         +  multiple_token
//   (...)         the arguments of a oneof or block
// Names and tokens outside [A-Za-z0-9_-] are double-quoted: "ip:port":string.
// SET key value [NX | XX] is "key:key#0 value:string condition:oneof?(=NX =XX)".
//
// Thread-safety: the parsed docs are built once, on first use, and never change.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/command_docs/doc_entries.h"
#include "storage/status.h"

namespace feedkv::server {

class CommandTable;

std::string CommandsMarkdown(const CommandTable& table);

// One argument of a command, as COMMAND DOCS describes it.
struct ArgumentDoc {
  std::string name;
  std::string type;
  std::string token;             // "" with has_token false: none
  bool has_token = false;        // a token may be "" (MIGRATE's empty_string)
  int key_spec_index = -1;       // -1: not a key
  std::string since;
  std::string deprecated_since;
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;
  std::vector<ArgumentDoc> arguments;  // a oneof's or block's
};

// Parses the notation above into `out`; on a malformed text returns
// InvalidArgument naming the position.
Status ParseArgumentNotation(std::string_view text, std::vector<ArgumentDoc>* out);

// One command's docs: its entry and the entry's arguments parsed.
struct CommandDoc {
  const command_docs::CommandDocEntry* entry;
  std::vector<ArgumentDoc> arguments;
};

// The docs of the row named `fullname` ("set", "client|kill"); nullptr when
// none are written.
const CommandDoc* FindCommandDoc(std::string_view fullname);

// Every entry written, in file order (for the consistency test).
std::vector<const command_docs::CommandDocEntry*> AllCommandDocEntries();

}  // namespace feedkv::server
