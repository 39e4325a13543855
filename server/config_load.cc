// Reading the configuration at start-up, as Redis 7.0's loadServerConfig and
// main(): the config file and the command line's arguments (turned into
// config lines) are read as one text; errors name the line.
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "protocol/resp_parser.h"
#include "server/command_context.h"
#include "server/config.h"
#include "server/startup.h"

namespace feedkv::server {

namespace {

// Redis's MULTI_ARG_CONFIGs: their values may span several arguments.
bool TakesSeveralArgs(std::string_view name) {
  static const std::set<std::string_view> kNames = {
      "save", "client-output-buffer-limit", "oom-score-adj-values", "bind", "replicaof", "slaveof",
      "latency-tracking-info-percentiles", "shutdown-on-sigint", "shutdown-on-sigterm"};
  return kNames.count(name) != 0;
}


std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

std::string Config::ArgsToConfigText(const std::vector<std::string>& args) {
  // As Redis's main(): "--name" starts a line, the arguments after it are its
  // values (quoted); "--name value" in one argument is a whole line, so the
  // next argument starting with "--" is a value only after a bare "--name".
  std::string options;
  bool handled_last = true;
  for (size_t j = 0; j < args.size(); ++j) {
    const std::string& a = args[j];
    if (handled_last && a.size() >= 2 && a[0] == '-' && a[1] == '-') {
      if (!options.empty()) options += "\n";
      options += a.substr(2) + " ";
      std::vector<std::string> split;
      const bool one_word = !protocol::SplitInlineArgs(a, &split) || split.size() <= 1;
      if (one_word) {
        handled_last = false;
        const bool is_save = LowerAscii(a) == "--save";
        const bool next_is_option = j + 1 < args.size() && args[j + 1].starts_with("--");
        // `--save` followed by another option, or last, is `save ""` (Redis 7.0.1+).
        if (is_save && (next_is_option || j + 1 == args.size())) {
          options += "\"\"";
          handled_last = next_is_option;
        }
      } else {
        handled_last = true;
      }
    } else {
      options += protocol::QuoteRepr(a) + " ";
      handled_last = true;
    }
  }
  return options;
}

Status Config::LoadText(std::string_view text) {
  size_t pos = 0;
  int linenum = 0;
  auto fatal = [&linenum](std::string_view line, std::string_view err) {
    return Status::InvalidArgument(fmt::format(
        "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\nReading the configuration file, at line {}\n>>> '{}'\n{}",
        kRedisCompatVersion, linenum, line, err));
  };
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = Trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    linenum++;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> argv;
    if (!protocol::SplitInlineArgs(line, &argv)) return fatal(line, "Unbalanced quotes in configuration line");
    if (argv.empty()) continue;
    const std::string name = LowerAscii(argv[0]);
    if (name == "user" && argv.size() >= 2) {
      argv[0] = "user";
      values_.acl_user_lines.push_back(std::move(argv));
      continue;
    }
    if (name == "include" && argv.size() == 2) {
      std::ifstream in(argv[1]);
      if (!in) return fatal(line, fmt::format("Fatal error, can't open config file '{}'", argv[1]));
      std::stringstream body;
      body << in.rdbuf();
      Status s = LoadText(body.str());
      if (!s.ok()) return s;
      continue;
    }
    const std::string* canonical = Resolve(name);
    if (canonical == nullptr) return fatal(line, "Bad directive or wrong number of arguments");
    const bool multi = TakesSeveralArgs(*canonical) || TakesSeveralArgs(name);
    if (!multi && argv.size() != 2) return fatal(line, "wrong number of arguments");
    std::string value;
    for (size_t i = 1; i < argv.size(); i++) value += (i > 1 ? " " : "") + argv[i];
    Status s = SetAtStartup(name, value);
    if (!s.ok()) {
      // The reason alone, as Redis's loader prints it.
      std::string why(s.message());
      const std::string prefix = ConfigSetFailed(name, "");
      if (why.starts_with(prefix)) why = why.substr(prefix.size());
      return fatal(line, why);
    }
  }
  return Status::OK();
}

Status Config::Load(const std::string& path, const std::vector<std::string>& args) {
  std::string text;
  if (!path.empty()) {
    std::ifstream in(path);
    if (!in) {
      return Status::IOError(fmt::format("Fatal error, can't open config file '{}': {}", path, std::strerror(errno)));
    }
    std::stringstream body;
    body << in.rdbuf();
    text = body.str();
    // Absolute, as Redis: the server changes directory to `dir` before a
    // CONFIG REWRITE can write the file back.
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(path, ec);
    file_ = ec ? path : abs.lexically_normal().string();
  }
  if (!args.empty()) text += "\n" + ArgsToConfigText(args);
  return LoadText(text);
}

Status Config::LoadFile(const std::string& path) { return Load(path, {}); }

Status Config::ApplyArgs(const std::vector<std::string>& args) { return LoadText(ArgsToConfigText(args)); }

}  // namespace feedkv::server
