// Renders docs/commands.md from the command table, so the document cannot
// drift from what the server declares (a ctest compares the two).
#pragma once

#include <string>

namespace feedkv::server {

class CommandTable;

std::string CommandsMarkdown(const CommandTable& table);

}  // namespace feedkv::server
