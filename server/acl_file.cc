// ACL users: the ACL file, the config file's "user" lines and the ACL log
// (see acl.h). Texts and rules as Redis 7.0's ACLLoadFromFile,
// ACLLoadConfiguredUsers and addACLLogEntry.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "server/acl.h"
#include "server/command_table.h"

namespace feedkv::server {

namespace {

constexpr int64_t kLogGroupingMs = 60000;

std::string Trim(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(chars);
  return std::string(s.substr(b, e - b + 1));
}


}  // namespace

Status AclUsers::LoadFile(const std::string& path, std::vector<std::unique_ptr<AclUser>>* removed) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IOError(fmt::format("Error loading ACLs, opening file '{}': {}", path,
                                       std::strerror(errno)));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  std::map<std::string, std::unique_ptr<AclUser>, std::less<>> fresh;
  std::string errors;
  size_t start = 0;
  int linenum = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = Trim(std::string_view(text).substr(start, end - start), " \t\r\n");
    start = end + 1;
    linenum++;
    if (line.empty()) continue;
    // Words split on single spaces, as Redis's sdssplitlen(" ").
    std::vector<std::string> argv;
    size_t i = 0;
    while (true) {
      size_t sp = line.find(' ', i);
      std::string word = line.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
      if (!word.empty()) argv.push_back(word);
      if (sp == std::string::npos) break;
      i = sp + 1;
    }
    if (argv.empty()) continue;
    if (argv[0] != "user" || argv.size() < 2) {
      errors += fmt::format("{}:{} should start with user keyword followed by the username. ", path, linenum);
      continue;
    }
    if (HasSpaces(argv[1])) {
      errors += fmt::format("'{}:{}: username '{}' contains invalid characters. ", path, linenum, argv[1]);
      continue;
    }
    if (fresh.count(argv[1])) {
      errors += fmt::format("WARNING: Duplicate user '{}' found on line {}. ", argv[1], linenum);
      continue;
    }
    auto u = std::make_unique<AclUser>(NewUser(argv[1]));
    std::vector<std::string> rules;
    size_t bad = 0;
    if (!MergeSelectorArgs(std::span<const std::string>(argv).subspan(2), &rules, &bad)) {
      errors += fmt::format("{}:{}: Unmatched parenthesis in selector definition.", path, linenum);
    }
    for (std::string& r : rules) {
      r = Trim(r, "\t\r\n");
      RuleError e = ApplyUserRule(*u, r);
      if (e != RuleError::kNone) errors += fmt::format("{}:{}: {}. ", path, linenum, RuleErrorText(e));
    }
    Refresh(*u);
    fresh.emplace(argv[1], std::move(u));
  }
  if (!errors.empty()) {
    errors += "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";
    return Status::InvalidArgument(errors);
  }
  // The default user keeps its address (clients point at it): copy into it.
  auto def = fresh.find("default");
  if (def != fresh.end()) {
    *default_ = std::move(*def->second);
    fresh.erase(def);
  } else {
    AclUser fresh_default = NewUser("default");
    for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) ApplyUserRule(fresh_default, op);
    Refresh(fresh_default);
    *default_ = std::move(fresh_default);
  }
  std::unique_ptr<AclUser> kept = std::move(users_.find("default")->second);
  for (auto& [name, user] : users_) {
    if (user != nullptr) removed->push_back(std::move(user));
  }
  users_.clear();
  users_.emplace("default", std::move(kept));
  for (auto& [name, user] : fresh) users_.emplace(name, std::move(user));
  return Status::OK();
}

std::string AclUsers::FileText() const {
  std::string out;
  for (const auto& [name, user] : users_) out += DescribeUser(*user) + "\n";
  return out;
}

Status AclUsers::LoadConfigLines(const std::vector<std::vector<std::string>>& lines) {
  std::set<std::string, std::less<>> seen;
  for (const auto& line : lines) {
    if (line.size() < 2) return Status::InvalidArgument("'user' directive needs a username");
    const std::string& name = line[1];
    if (HasSpaces(name)) return Status::InvalidArgument("Spaces not allowed in ACL usernames");
    if (!seen.insert(name).second) {
      return Status::InvalidArgument(fmt::format(
          "Error in user declaration '{}': Duplicate user found. A user can only be defined once in "
          "config files", name));
    }
    std::vector<std::string> rules;
    size_t bad = 0;
    if (!MergeSelectorArgs(std::span<const std::string>(line).subspan(2), &rules, &bad)) {
      return Status::InvalidArgument(fmt::format("Unmatched parenthesis in selector definition of user '{}'", name));
    }
    AclUser* u = Find(name);
    if (u == nullptr) {
      users_.emplace(name, std::make_unique<AclUser>(NewUser(name)));
      u = Find(name);
    } else {
      ApplyUserRule(*u, "reset");
    }
    for (const std::string& r : rules) {
      RuleError e = ApplyUserRule(*u, r);
      if (e != RuleError::kNone) {
        return Status::InvalidArgument(fmt::format("Error loading ACL rule '{}' for the user named '{}': {}",
                                                   r, name, RuleErrorText(e)));
      }
    }
    Refresh(*u);
  }
  return Status::OK();
}

void AclUsers::Log(AclLogEntry entry, size_t max_len) {
  // An entry like one of the last ten (same reason, context, object and user,
  // within a minute) is counted there and moves to the front.
  size_t scan = std::min<size_t>(10, log_.size());
  for (size_t i = 0; i < scan; i++) {
    AclLogEntry& e = log_[i];
    int64_t delta = e.ctime_ms - entry.ctime_ms;
    if (delta < 0) delta = -delta;
    if (e.reason == entry.reason && e.context == entry.context && delta <= kLogGroupingMs &&
        e.object == entry.object && e.username == entry.username) {
      AclLogEntry match = std::move(e);
      log_.erase(log_.begin() + static_cast<std::ptrdiff_t>(i));
      match.count++;
      match.ctime_ms = entry.ctime_ms;
      match.client_info = std::move(entry.client_info);
      log_.push_front(std::move(match));
      return;
    }
  }
  log_.push_front(std::move(entry));
  while (log_.size() > max_len) log_.pop_back();
}

}  // namespace feedkv::server
