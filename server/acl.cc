// ACL users: rules, descriptions and the permission check (see acl.h).
// Loading and saving ACL files and the log are in acl_file.cc.
#include "server/acl.h"

#include <algorithm>
#include <cctype>
#include <climits>

#include <fmt/format.h>

#include "server/command_table.h"
#include "server/glob.h"
#include "server/sha256.h"

namespace feedkv::server {

namespace {

bool IsPasswordHash(std::string_view h) {
  if (h.size() != 64) return false;
  return std::all_of(h.begin(), h.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Constant-time comparison of two hashes of equal length.
bool SameHash(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); i++) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

bool AclUsers::HasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) || c == '\0'; });
}

const std::vector<std::string_view>& AclUsers::Categories() {
  static const std::vector<std::string_view> kCategories = {
      "keyspace", "read",   "write",    "set",       "sortedset",  "list",        "hash",
      "string",   "bitmap", "hyperloglog", "geo",    "stream",     "pubsub",      "admin",
      "fast",     "slow",   "blocking", "dangerous", "connection", "transaction", "scripting"};
  return kCategories;
}

AclUsers::AclUsers(const CommandTable& table) : table_(table), bits_(table.size() + 1) {
  row_categories_.assign(table.size(), 0);
  const auto& cats = Categories();
  for (const CommandSpec* spec : table.all_rows()) {
    uint32_t mask = 0;
    for (std::string_view c : AclCategories(*spec)) {
      auto it = std::find(cats.begin(), cats.end(), c);
      if (it != cats.end()) mask |= 1u << (it - cats.begin());
    }
    row_categories_[spec->id] = mask;
  }
  auto def = std::make_unique<AclUser>(NewUser("default"));
  for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) ApplyUserRule(*def, op);
  Refresh(*def);
  default_ = def.get();
  users_.emplace("default", std::move(def));
}

AclSelector AclUsers::NewSelector(bool root) const {
  AclSelector s;
  s.root = root;
  s.all_channels = pubsub_default_all_;
  s.allowed.assign((bits_ + 63) / 64, 0);
  return s;
}

AclUser AclUsers::NewUser(std::string_view name) const {
  AclUser u;
  u.name = std::string(name);
  u.selectors.push_back(NewSelector(true));
  return u;
}

AclUser* AclUsers::Find(std::string_view name) {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second.get();
}

bool AclUsers::Bit(const AclSelector& s, uint32_t id) { return (s.allowed[id / 64] >> (id % 64)) & 1; }

void AclUsers::SetBit(AclSelector& s, uint32_t id, bool on) {
  if (on) {
    s.allowed[id / 64] |= uint64_t{1} << (id % 64);
  } else {
    s.allowed[id / 64] &= ~(uint64_t{1} << (id % 64));
    s.all_commands = false;
  }
}

void AclUsers::SetCommand(AclSelector& s, const CommandSpec& spec, bool allow) const {
  SetBit(s, spec.id, allow);
  s.first_args.erase(spec.id);
  for (const CommandSpec& sub : spec.subs()) SetBit(s, sub.id, allow);
}

void AclUsers::SetCategory(AclSelector& s, size_t category, bool allow) const {
  const uint32_t flag = 1u << category;
  for (const CommandSpec* spec : table_.all()) {
    if (row_categories_[spec->id] & flag) SetCommand(s, *spec, allow);
    for (const CommandSpec& sub : spec->subs()) {
      if (row_categories_[sub.id] & flag) SetCommand(s, sub, allow);
    }
  }
}

std::string_view AclUsers::RuleErrorText(RuleError e) {
  switch (e) {
    case RuleError::kUnknownCommand: return "Unknown command or category name in ACL";
    case RuleError::kSyntax: return "Syntax error";
    case RuleError::kKeysAfterAll:
      return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
             "have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case RuleError::kChannelsAfterAll:
      return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
             "not have any effect. Try 'resetchannels' to start with an empty list of channels";
    case RuleError::kNoSuchPassword: return "The password you are trying to remove from the user does not exist";
    case RuleError::kBadHash:
      return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
             "characters";
    case RuleError::kFirstArgOfSubcommand: return "Allowing first-arg of a subcommand is not supported";
    case RuleError::kNone: break;
  }
  return "Wrong format";
}

AclUsers::RuleError AclUsers::ApplySelectorRule(AclSelector& s, std::string_view op) const {
  auto is = [&](std::string_view word) {
    return op.size() == word.size() && LowerAscii(op) == word;
  };
  if (is("allkeys") || op == "~*") {
    s.all_keys = true;
    s.keys.clear();
  } else if (is("resetkeys")) {
    s.all_keys = false;
    s.keys.clear();
  } else if (is("allchannels") || op == "&*") {
    s.all_channels = true;
    s.channels.clear();
  } else if (is("resetchannels")) {
    s.all_channels = false;
    s.channels.clear();
  } else if (is("allcommands") || is("+@all")) {
    std::fill(s.allowed.begin(), s.allowed.end(), ~uint64_t{0});
    s.all_commands = true;
    s.first_args.clear();
  } else if (is("nocommands") || is("-@all")) {
    std::fill(s.allowed.begin(), s.allowed.end(), 0);
    s.all_commands = false;
    s.first_args.clear();
  } else if (op[0] == '~' || op[0] == '%') {
    if (s.all_keys) return RuleError::kKeysAfterAll;
    uint8_t perms = 0;
    size_t offset = 1;
    if (op[0] == '%') {
      bool tilde = false;
      for (; offset < op.size(); offset++) {
        char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
        if (c == 'R' && !(perms & AclSelector::kRead)) {
          perms |= AclSelector::kRead;
        } else if (c == 'W' && !(perms & AclSelector::kWrite)) {
          perms |= AclSelector::kWrite;
        } else if (op[offset] == '~') {
          offset++;
          tilde = true;
          break;
        } else {
          return RuleError::kSyntax;
        }
      }
      // Redis accepts "%R" with no '~' as an empty pattern of no permission;
      // it is kept the same way.
      (void)tilde;
    } else {
      perms = AclSelector::kRead | AclSelector::kWrite;
    }
    std::string_view pattern = op.substr(offset);
    if (HasSpaces(pattern)) return RuleError::kSyntax;
    auto it = std::find_if(s.keys.begin(), s.keys.end(),
                           [&](const AclSelector::KeyPattern& k) { return k.pattern == pattern; });
    if (it == s.keys.end()) {
      s.keys.push_back({std::string(pattern), perms});
    } else {
      it->perms |= perms;
    }
    s.all_keys = false;
  } else if (op[0] == '&') {
    if (s.all_channels) return RuleError::kChannelsAfterAll;
    std::string_view pattern = op.substr(1);
    if (HasSpaces(pattern)) return RuleError::kSyntax;
    if (std::find(s.channels.begin(), s.channels.end(), pattern) == s.channels.end()) {
      s.channels.emplace_back(pattern);
    }
    s.all_channels = false;
  } else if (op.size() >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
    const auto& cats = Categories();
    std::string name = LowerAscii(op.substr(2));
    auto it = std::find(cats.begin(), cats.end(), name);
    if (it == cats.end()) return RuleError::kUnknownCommand;
    SetCategory(s, it - cats.begin(), op[0] == '+');
  } else if (op[0] == '+') {
    std::string_view name = op.substr(1);
    size_t bar = name.rfind('|');
    if (bar == std::string_view::npos) {
      const CommandSpec* spec = table_.Find(name);
      if (spec == nullptr) return RuleError::kUnknownCommand;
      SetCommand(s, *spec, true);
      return RuleError::kNone;
    }
    const CommandSpec* spec = table_.FindFullName(name.substr(0, bar));
    if (spec == nullptr) return RuleError::kUnknownCommand;
    if (spec->parent != nullptr) return RuleError::kFirstArgOfSubcommand;
    std::string_view sub = name.substr(bar + 1);
    if (sub.empty()) return RuleError::kSyntax;
    if (spec->is_container()) {
      const CommandSpec* row = table_.FindFullName(name);
      if (row == nullptr) return RuleError::kUnknownCommand;
      SetCommand(s, *row, true);
    } else {
      // A first argument of an otherwise blocked command (+select|0).
      auto& args = s.first_args[spec->id];
      bool known = std::any_of(args.begin(), args.end(), [&](const std::string& a) {
        return LowerAscii(a) == LowerAscii(sub);
      });
      if (!known) args.emplace_back(sub);
    }
  } else if (op[0] == '-') {
    const CommandSpec* spec = table_.FindFullName(op.substr(1));
    if (spec == nullptr) return RuleError::kUnknownCommand;
    SetCommand(s, *spec, false);
  } else {
    return RuleError::kSyntax;
  }
  return RuleError::kNone;
}

AclUsers::RuleError AclUsers::ApplyUserRule(AclUser& u, std::string_view op) const {
  if (op.empty()) return RuleError::kNone;
  std::string lower = LowerAscii(op);
  if (lower == "on") {
    u.enabled = true;
  } else if (lower == "off") {
    u.enabled = false;
  } else if (lower == "skip-sanitize-payload") {
    u.skip_sanitize_payload = true;
    u.sanitize_payload = false;
  } else if (lower == "sanitize-payload") {
    u.skip_sanitize_payload = false;
    u.sanitize_payload = true;
  } else if (lower == "nopass") {
    u.nopass = true;
    u.passwords.clear();
  } else if (lower == "resetpass") {
    u.nopass = false;
    u.passwords.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::string hash;
    if (op[0] == '>') {
      hash = Sha256Hex(op.substr(1));
    } else {
      if (!IsPasswordHash(op.substr(1))) return RuleError::kBadHash;
      hash = std::string(op.substr(1));
    }
    if (std::find(u.passwords.begin(), u.passwords.end(), hash) == u.passwords.end()) {
      u.passwords.push_back(hash);
    }
    u.nopass = false;
  } else if (op[0] == '<' || op[0] == '!') {
    std::string hash;
    if (op[0] == '<') {
      hash = Sha256Hex(op.substr(1));
    } else {
      if (!IsPasswordHash(op.substr(1))) return RuleError::kBadHash;
      hash = std::string(op.substr(1));
    }
    auto it = std::find(u.passwords.begin(), u.passwords.end(), hash);
    if (it == u.passwords.end()) return RuleError::kNoSuchPassword;
    u.passwords.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    AclSelector s = NewSelector(false);
    std::vector<std::string> words;
    std::string_view inner = op.substr(1, op.size() - 2);
    size_t i = 0;
    while (i < inner.size()) {
      while (i < inner.size() && inner[i] == ' ') i++;
      size_t j = i;
      while (j < inner.size() && inner[j] != ' ') j++;
      if (j > i) words.emplace_back(inner.substr(i, j - i));
      i = j;
    }
    for (const std::string& w : words) {
      RuleError e = ApplySelectorRule(s, w);
      if (e != RuleError::kNone) return e;
    }
    u.selectors.push_back(std::move(s));
  } else if (lower == "clearselectors") {
    u.selectors.resize(1);
  } else if (lower == "reset") {
    for (std::string_view r : {"resetpass", "resetkeys", "resetchannels"}) ApplyUserRule(u, r);
    if (pubsub_default_all_) ApplyUserRule(u, "allchannels");
    for (std::string_view r : {"off", "sanitize-payload", "clearselectors", "-@all"}) ApplyUserRule(u, r);
  } else {
    return ApplySelectorRule(u.selectors[0], op);
  }
  return RuleError::kNone;
}

void AclUsers::Refresh(AclUser& u) const {
  const AclSelector& r = u.selectors[0];
  u.unrestricted = r.all_commands && r.all_keys && r.all_channels;
}

bool AclUsers::MergeSelectorArgs(std::span<const std::string> in, std::vector<std::string>* out,
                                 size_t* bad_index) {
  out->clear();
  std::string selector;
  bool open = false;
  size_t open_at = 0;
  for (size_t j = 0; j < in.size(); j++) {
    const std::string& op = in[j];
    if (!open && !op.empty() && op[0] == '(' && op.back() != ')') {
      selector = op;
      open = true;
      open_at = j;
      continue;
    }
    if (open) {
      selector += " " + op;
      if (!op.empty() && op.back() == ')') {
        open = false;
        out->push_back(std::move(selector));
      }
      continue;
    }
    out->push_back(op);
  }
  if (open) {
    *bad_index = open_at;
    return false;
  }
  return true;
}

Status AclUsers::SetUser(std::string_view name, std::span<const std::string> rules) {
  AclUser* existing = Find(name);
  AclUser staged = existing != nullptr ? *existing : NewUser(name);
  for (const std::string& op : rules) {
    RuleError e = ApplyUserRule(staged, op);
    if (e != RuleError::kNone) {
      return Status::InvalidArgument(
          fmt::format("Error in ACL SETUSER modifier '{}': {}", op, RuleErrorText(e)));
    }
  }
  Refresh(staged);
  if (existing != nullptr) {
    *existing = std::move(staged);
  } else {
    users_.emplace(std::string(name), std::make_unique<AclUser>(std::move(staged)));
  }
  return Status::OK();
}

bool AclUsers::Remove(std::string_view name) {
  auto it = users_.find(name);
  if (it == users_.end() || it->second.get() == default_) return false;
  users_.erase(it);
  return true;
}

void AclUsers::SetDefaultPassword(std::string_view password) {
  ApplyUserRule(*default_, "resetpass");
  ApplyUserRule(*default_, password.empty() ? std::string("nopass") : ">" + std::string(password));
  Refresh(*default_);
}

void AclUsers::set_pubsub_default_all(bool all) { pubsub_default_all_ = all; }

// --- descriptions ----------------------------------------------------------

std::string AclUsers::DescribeCommands(const AclSelector& s) const {
  const bool additive = !Bit(s, static_cast<uint32_t>(bits_ - 1));
  std::string rules = additive ? "-@all " : "+@all ";
  AclSelector fake = NewSelector(false);
  ApplySelectorRule(fake, additive ? "-@all" : "+@all");
  // Categories, best fit first; `temp` holds what is still to be explained.
  AclSelector temp = s;
  const auto& cats = Categories();
  std::vector<bool> applied(cats.size(), false);
  while (true) {
    int best = -1;
    uint64_t min_diff = INT_MAX, max_same = 0;
    for (size_t j = 0; j < cats.size(); j++) {
      if (applied[j]) continue;
      uint64_t on = 0, off = 0;
      const uint32_t flag = 1u << j;
      for (const CommandSpec* row : table_.all_rows()) {
        if (row_categories_[row->id] & flag) (Bit(temp, row->id) ? on : off)++;
      }
      uint64_t diff = additive ? off : on, same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = static_cast<int>(j);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best < 0) break;
    SetCategory(fake, best, additive);
    SetCategory(temp, best, !additive);
    rules += fmt::format("{}@{} ", additive ? '+' : '-', cats[best]);
    applied[best] = true;
  }
  // Single commands (and their subcommands) that still differ.
  auto single = [&](const CommandSpec& spec, auto& self) -> void {
    bool user_bit = Bit(s, spec.id), fake_bit = Bit(fake, spec.id);
    if (user_bit != fake_bit) {
      rules += fmt::format("{}{} ", user_bit ? '+' : '-', spec.name);
      SetCommand(fake, spec, user_bit);
    }
    for (const CommandSpec& sub : spec.subs()) self(sub, self);
    if (!user_bit) {
      auto it = s.first_args.find(spec.id);
      if (it != s.first_args.end()) {
        for (const std::string& a : it->second) rules += fmt::format("+{}|{} ", spec.name, a);
      }
    }
  };
  for (const CommandSpec* spec : table_.all()) single(*spec, single);
  rules.pop_back();
  return rules;
}

std::string AclUsers::DescribeKeys(const AclSelector& s) {
  if (s.all_keys) return "~*";
  std::string out;
  for (const auto& k : s.keys) {
    if (!out.empty()) out += ' ';
    if (k.perms == (AclSelector::kRead | AclSelector::kWrite)) {
      out += "~";
    } else {
      out += "%";
      if (k.perms & AclSelector::kRead) out += 'R';
      if (k.perms & AclSelector::kWrite) out += 'W';
      out += "~";
    }
    out += k.pattern;
  }
  return out;
}

std::string AclUsers::DescribeChannels(const AclSelector& s) {
  if (s.all_channels) return "&*";
  std::string out;
  for (const auto& c : s.channels) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

std::string AclUsers::DescribeUser(const AclUser& u) const {
  std::string out = "user " + u.name + " ";
  out += u.enabled ? "on " : "off ";
  if (u.nopass) out += "nopass ";
  if (u.skip_sanitize_payload) out += "skip-sanitize-payload ";
  if (u.sanitize_payload) out += "sanitize-payload ";
  for (const std::string& p : u.passwords) out += "#" + p + " ";
  for (const AclSelector& s : u.selectors) {
    std::string d;
    if (s.all_keys) {
      d += "~* ";
    } else {
      std::string keys = DescribeKeys(s);
      if (!keys.empty()) d += keys + " ";
    }
    if (s.all_channels) {
      d += "&* ";
    } else {
      d += "resetchannels ";
      for (const auto& c : s.channels) d += "&" + c + " ";
    }
    d += DescribeCommands(s);
    out += s.root ? d : " (" + d + ")";
  }
  return out;
}

// --- the permission check --------------------------------------------------

AclResult AclUsers::CheckSelector(const AclSelector& s, const CommandSpec& spec,
                                  std::span<const std::string_view> argv, int* arg_index) const {
  if (!s.all_commands && !(spec.flags & kNoAuth) && !Bit(s, spec.id)) {
    auto it = s.first_args.find(spec.id);
    const size_t idx = spec.parent != nullptr ? 2 : 1;
    if (it == s.first_args.end() || argv.size() <= idx) return AclResult::kDeniedCommand;
    std::string first = LowerAscii(argv[idx]);
    bool allowed = std::any_of(it->second.begin(), it->second.end(),
                               [&](const std::string& a) { return LowerAscii(a) == first; });
    if (!allowed) return AclResult::kDeniedCommand;
  }
  if (!s.all_keys && (spec.first_key != 0 || spec.more_keys != nullptr || spec.keys_proc != nullptr)) {
    for (int pos : CommandTable::KeyPositions(spec, argv)) {
      const uint16_t kf = KeyFlagsOf(spec, argv, pos);
      if (kf & kKeyNotKey) continue;  // a counter id routes like a key but is not one
      uint8_t need = 0;
      if (kf & kKeyAccess) need |= AclSelector::kRead;
      if (kf & (kKeyInsert | kKeyDelete | kKeyUpdate)) need |= AclSelector::kWrite;
      bool ok = std::any_of(s.keys.begin(), s.keys.end(), [&](const AclSelector::KeyPattern& k) {
        return (k.perms & need) == need && GlobMatch(k.pattern, argv[pos], false);
      });
      if (!ok) {
        *arg_index = pos;
        return AclResult::kDeniedKey;
      }
    }
  }
  if (!s.all_channels && (spec.flags & (kChannelFirstArg | kChannelArgs | kChannelPatternArgs))) {
    const size_t last = (spec.flags & kChannelFirstArg) ? std::min<size_t>(argv.size(), 2) : argv.size();
    const bool patterns = (spec.flags & kChannelPatternArgs) != 0;
    for (size_t i = 1; i < last; i++) {
      bool ok = std::any_of(s.channels.begin(), s.channels.end(), [&](const std::string& p) {
        return patterns ? p == argv[i] : GlobMatch(p, argv[i], false);
      });
      if (!ok) {
        *arg_index = static_cast<int>(i);
        return AclResult::kDeniedChannel;
      }
    }
  }
  return AclResult::kOk;
}

AclResult AclUsers::Check(const AclUser& u, const CommandSpec& spec,
                          std::span<const std::string_view> argv, int* arg_index) const {
  AclResult relevant = AclResult::kDeniedCommand;
  int last_index = 0;
  for (const AclSelector& s : u.selectors) {
    int index = 0;
    AclResult r = CheckSelector(s, spec, argv, &index);
    if (r == AclResult::kOk) return r;
    if (r > relevant || (r == relevant && index > last_index)) {
      relevant = r;
      last_index = index;
    }
  }
  *arg_index = last_index;
  return relevant;
}

bool AclUsers::HasUnrestrictedReadAccess(const AclUser& u, const CommandSpec& spec,
                                         std::span<const std::string_view> argv) const {
  for (const AclSelector& s : u.selectors) {
    int index = 0;
    if (CheckSelector(s, spec, argv, &index) != AclResult::kOk) continue;
    if (s.all_keys) return true;
    for (const AclSelector::KeyPattern& k : s.keys) {
      if (k.pattern == "*" && (k.perms & AclSelector::kRead)) return true;
    }
  }
  return false;
}

AclUser* AclUsers::Authenticate(std::string_view name, std::string_view password) {
  AclUser* u = Find(name);
  if (u == nullptr || !u->enabled) return nullptr;
  if (u->nopass) return u;
  const std::string hash = Sha256Hex(password);
  for (const std::string& p : u->passwords) {
    if (SameHash(p, hash)) return u;
  }
  return nullptr;
}

}  // namespace feedkv::server
