// What the server does with ACL users: the check before each command, the
// ACL log, moving clients off users that change or go away, and the ACL
// file. The model itself is server/acl.{h,cc}.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/commands/client_info.h"
#include "server/glob.h"
#include "server/network.h"
#include "server/server.h"

namespace feedkv::server {

Status Server::LoadAclAtStartup() {
  const std::string aclfile = config_.ValueOf("aclfile");
  const auto& lines = cfg().acl_user_lines;
  if (!aclfile.empty() && !lines.empty()) {
    return Status::InvalidArgument(
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path "
        "is invalid. This setup is very likely to lead to configuration errors and security holes, "
        "please define either an ACL file or declare users directly in your redis.conf, but not both.");
  }
  if (Status s = acl_->LoadConfigLines(lines); !s.ok()) return s;
  if (!aclfile.empty()) {
    std::vector<std::unique_ptr<AclUser>> removed;
    Status s = acl_->LoadFile(aclfile, &removed);
    if (!s.ok()) {
      return Status::InvalidArgument("Aborting Redis startup because of ACL errors: " + s.message());
    }
  }
  return Status::OK();
}

void Server::SetDefaultAuth(Client& c) {
  c.user = acl_->default_user();
  c.authenticated = c.user->nopass && c.user->enabled;
}

std::string Server::CheckAcl(Client& c, const CommandSpec& spec, std::span<const std::string_view> argv,
                             std::string_view context) {
  int idx = 0;
  AclResult r = acl_->Check(*c.user, spec, argv, &idx);
  if (r == AclResult::kOk) return {};
  std::string object = r == AclResult::kDeniedCommand ? std::string(spec.name) : std::string(argv[idx]);
  LogAclDenial(c, r, std::move(object), {}, context);
  switch (r) {
    case AclResult::kDeniedKey: return protocol::err::kNoPermKey;
    case AclResult::kDeniedChannel: return protocol::err::kNoPermChannel;
    default: return fmt::format(protocol::err::kNoPermCommand, spec.name);
  }
}

void Server::LogAclDenial(const Client& c, AclResult reason, std::string object, std::string_view username,
                          std::string_view context) {
  const Client& real = c.script_caller != nullptr ? *c.script_caller : c;
  AclLogEntry e;
  e.reason = reason;
  e.context = context.empty() ? (c.in_multi ? "multi" : "toplevel") : std::string(context);
  e.object = std::move(object);
  e.username = !username.empty() ? std::string(username)
               : c.user != nullptr ? c.user->name
                                   : std::string("default");
  e.ctime_ms = NowMs();
  e.client_info = ClientInfoLine(*this, real);
  const int64_t max_len = std::strtoll(config_.ValueOf("acllog-max-len").c_str(), nullptr, 10);
  acl_->Log(std::move(e), static_cast<size_t>(std::max<int64_t>(0, max_len)));
}

void Server::DisconnectUser(AclUser* u, Client* current) {
  std::vector<Connection*> victims;
  for (const auto& [id, conn] : connections_) {
    if (conn->client().user == u) victims.push_back(conn.get());
  }
  for (Connection* v : victims) {
    Client& c = v->client();
    c.user = acl_->default_user();
    c.authenticated = false;
    if (&c == current) {
      c.close_after_reply = true;
    } else {
      v->Close();
    }
  }
}

void Server::DisconnectRevokedSubscribers(const AclUser& u, const std::vector<std::string>& old_channels,
                                          Client* current) {
  std::vector<std::string> upcoming;
  for (const AclSelector& s : u.selectors) {
    if (s.all_channels) return;
    upcoming.insert(upcoming.end(), s.channels.begin(), s.channels.end());
  }
  // As Redis: nothing to do when every old pattern is still there.
  bool kept = std::all_of(old_channels.begin(), old_channels.end(), [&](const std::string& p) {
    return std::find(upcoming.begin(), upcoming.end(), p) != upcoming.end();
  });
  if (kept) return;
  auto allowed = [&](std::string_view ch, bool pattern) {
    return std::any_of(upcoming.begin(), upcoming.end(), [&](const std::string& p) {
      return pattern ? p == ch : GlobMatch(p, ch, false);
    });
  };
  std::vector<Connection*> victims;
  for (const auto& [id, conn] : connections_) {
    const Client& c = conn->client();
    if (c.user != &u || !c.subscribed()) continue;
    bool kill = false;
    for (const auto& p : c.patterns) kill = kill || !allowed(p, true);
    for (const auto& ch : c.channels) kill = kill || !allowed(ch, false);
    for (const auto& ch : c.shard_channels) kill = kill || !allowed(ch, false);
    if (kill) victims.push_back(conn.get());
  }
  for (Connection* v : victims) {
    if (&v->client() == current) {
      v->client().close_after_reply = true;
    } else {
      v->Close();
    }
  }
}

Status Server::ReloadAclFile(const std::string& path, Client* current) {
  std::vector<std::unique_ptr<AclUser>> removed;
  Status s = acl_->LoadFile(path, &removed);
  if (!s.ok()) return s;
  // Users of the old set are gone (even one of the same name): their clients
  // are closed, as Redis frees the old users with their clients.
  for (auto& u : removed) DisconnectUser(u.get(), current);
  return Status::OK();
}

Status Server::SaveAclFile(const std::string& path) {
  // A small file written and renamed in place, as Redis's ACLSaveToFile (the
  // command thread writes it: ACL SAVE is an operator's command, not a hot path).
  const std::string text = acl_->FileText();
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, getpid(), NowMs());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Status::IOError(fmt::format("Opening temp ACL file for ACL SAVE: {}", std::strerror(errno)));
  ssize_t n = ::write(fd, text.data(), text.size());
  int write_errno = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    ::unlink(tmp.c_str());
    return Status::IOError(fmt::format("Writing ACL file for ACL SAVE: {}", std::strerror(write_errno)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return Status::IOError(fmt::format("Renaming ACL file for ACL SAVE: {}", std::strerror(e)));
  }
  return Status::OK();
}

}  // namespace feedkv::server
