// Persistence: construction, start-up, cron, config changes, write errors and
// shutdown. Loading, the AOF and snapshots live in persistence_load.cc,
// persistence_aof.cc and persistence_snapshot.cc.
#include "server/persistence.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <boost/asio/post.hpp>
#include <fmt/format.h>

#include "server/job_thread.h"
#include "server/startup.h"

namespace feedkv::server {

Persistence::Persistence(Server& server, Env* env) : server_(server), env_(env) {}

Persistence::~Persistence() {
  if (child_.pid > 0) {
    ::kill(child_.pid, SIGKILL);
    ::waitpid(child_.pid, nullptr, 0);
  }
  StopWriter();
  jobs_.reset();
}

std::string Persistence::rdb_path() const {
  return JoinPath(server_.cfg().dir, server_.cfg().dbfilename);
}

std::string Persistence::aof_dir() const { return aof_dir_; }

aof::FsyncPolicy Persistence::fsync_policy() const { return server_.cfg().appendfsync; }

bool Persistence::Attach() {
  // A child writing a snapshot may exceed a file size limit; fail the write,
  // do not die.
  ::signal(SIGXFSZ, SIG_IGN);
  aof_dir_ = JoinPath(server_.cfg().dir, server_.cfg().appenddirname);
  RemoveTemporaryFiles();
  jobs_ = std::make_unique<JobThread>();
  server_.set_loading(true);
  int64_t t0 = NowMs();
  bool ok = LoadAtStartup();
  load_ms_ = NowMs() - t0;
  server_.set_loading(false);
  if (!ok) return false;
  server_.stats().dirty = 0;
  last_save_ms_ = NowMs();
  server_.AddCronHook([this](int64_t now) { Cron(now); });
  server_.AddConfigHook([this](const std::string& name) {
    if (name == "appendonly" || name == "appendfsync" || name == "aof-segment-size") {
      // Once the command that set it has finished (never in the middle of an
      // EXEC whose writes the new log's base snapshot would already hold).
      const bool in_exec = server_.call_depth() > 1;
      boost::asio::post(server_.io(), [this, in_exec] { ApplyLogConfig(in_exec); });
    }
  });
  server_.AddShutdownHook([this](const ShutdownOptions& o) { return Shutdown(o); });
  server_.AddInfoSection("persistence", [this](std::string* out) { InfoSection(out); });
  return true;
}

void Persistence::RemoveTemporaryFiles() {
  // Left by a process that died while saving: a snapshot being written
  // (temp-*.rdb, as Redis names them) or a manifest being replaced (*.tmp).
  // Nothing reads them; they would only fill the disk.
  auto sweep = [&](const std::string& dir, auto is_temp) {
    std::vector<std::string> names;
    if (!env_->ListDir(dir, &names).ok()) return;
    for (const std::string& n : names) {
      if (!is_temp(n)) continue;
      server_.Log(2, "Removing temporary file " + JoinPath(dir, n) + " left by an earlier run");
      env_->RemoveFile(JoinPath(dir, n)).PermitUnchecked();
    }
  };
  sweep(server_.cfg().dir, [](std::string_view n) {
    return n.starts_with("temp-") && n.ends_with(".rdb");
  });
  const std::string manifest_tmp = server_.cfg().appendfilename + ".manifest.tmp";
  sweep(aof_dir_, [&](std::string_view n) { return n == manifest_tmp; });
}

// --- cron, config, errors, shutdown ---

void Persistence::Cron(int64_t now_ms) {
  if (child_.pid > 0) ReapChild();
  // A reaped child's snapshot is still being finished (renamed once the AOF is
  // durable to its position) until `dirty` and the save time are reset: a save
  // point checked now would start a second, needless BGSAVE.
  if (child_.pid > 0 || finalizing_ > 0) return;
  std::string reply;
  if (rewrite_scheduled_ && now_ms >= rewrite_not_before_ms_) {
    rewrite_scheduled_ = false;
    if (base_pending_) {
      StartBaseRewrite(/*in_exec=*/false);
    } else {
      BgSave(true, false, &reply).PermitUnchecked();
    }
    return;
  }
  if (bgsave_scheduled_) {
    bgsave_scheduled_ = false;
    BgSave(false, false, &reply).PermitUnchecked();
    return;
  }
  // Save points; after a failure, retry no sooner than 5 s (as Redis).
  uint64_t dirty = server_.stats().dirty;
  for (const auto& [secs, changes] : server_.cfg().save_points) {
    if (dirty >= static_cast<uint64_t>(changes) && now_ms - last_save_ms_ > secs * 1000 &&
        (last_bgsave_ok_ || now_ms - last_bgsave_try_ms_ > 5000)) {
      server_.Log(2, fmt::format("{} changes in {} seconds. Saving...", changes, secs));
      BgSave(false, false, &reply).PermitUnchecked();
      break;
    }
  }
}

void Persistence::ApplyLogConfig(bool in_exec) {
  const ServerConfig& cfg = server_.cfg();
  if (!cfg.appendonly && writer_) {
    // As Redis's stopAppendOnly: a rewrite in progress is of no use any more.
    if (child_.pid > 0 && child_.rewrite) KillChild("Killing running AOF rewrite child");
    base_pending_ = false;
    rewrite_scheduled_ = false;
    StopWriter();
    server_.Log(2, "AOF turned off");
  } else if (cfg.appendonly && !writer_) {
    // A new log from the journal's offset on, whose base is a snapshot taken
    // in the background (a rewrite), as Redis's startAppendOnly: the command
    // thread never writes the dataset out here. Until that snapshot is
    // durable the manifest says `base pending`, and a restart meanwhile
    // discards the log and loads dump.rdb, as Redis does in that state.
    Status s = env_->CreateDirIfMissing(aof_dir_);
    if (s.ok()) {
      RemoveLogFiles();
      s = StartNewLog(/*save_base=*/false, /*lineage=*/0, /*base_pending=*/true);
    }
    if (!s.ok()) {
      server_.Log(3, "Could not turn the AOF on: " + s.ToString());
    } else {
      base_pending_ = true;
      StartBaseRewrite(in_exec);
    }
  }
  if (!writer_) return;
  if (writer_->policy() != cfg.appendfsync) {
    writer_->set_policy(cfg.appendfsync);
    UpdateReplyAck();
  }
  writer_->set_segment_size(static_cast<uint64_t>(std::max<int64_t>(cfg.aof_segment_size, 1024)));
}

void Persistence::StartBaseRewrite(bool in_exec) {
  // Redis's startAppendOnly, with its log lines.
  if (in_exec) {
    rewrite_scheduled_ = true;
    server_.Log(3, "AOF was enabled during a transaction. An AOF background was scheduled to start when possible.");
    return;
  }
  if (child_.pid > 0 || finalizing_ > 0) {
    rewrite_scheduled_ = true;
    server_.Log(3, "AOF was enabled but there is already another background operation. An AOF background was "
                   "scheduled to start when possible.");
    return;
  }
  std::string reply;
  Status s = BgSave(/*rewrite=*/true, /*schedule=*/false, &reply);
  if (!s.ok()) {
    // The log stays on and pending; the cron tries again (Redis turns the
    // AOF off and fails the CONFIG SET, which has already answered here).
    rewrite_scheduled_ = true;
    rewrite_not_before_ms_ = NowMs() + kBaseRetryMs;
    server_.Log(3, "Could not start the AOF's base snapshot (" + s.ToString() + "); retrying in 5 s");
  }
}

void Persistence::KillChild(std::string_view why) {
  server_.Log(2, fmt::format("{}: {}", why, child_.pid));
  ::kill(child_.pid, SIGKILL);
  ::waitpid(child_.pid, nullptr, 0);
  env_->RemoveFile(child_.tmp).PermitUnchecked();
  child_ = Child{};
  server_.set_fork_child_active(false);
}

void Persistence::UpdateWriteError() {
  std::string msg;
  if (!aof_error_.empty()) {
    msg = "MISCONF Errors writing to the AOF file: " + aof_error_;
  } else if (!last_bgsave_ok_ && server_.cfg().stop_writes_on_bgsave_error &&
             !server_.cfg().save_points.empty()) {
    msg = "MISCONF Errors writing the snapshot to disk";
  }
  server_.set_write_error(msg);
}

Status Persistence::Shutdown(const ShutdownOptions& o) {
  if (shut_down_) return Status::OK();
  if (child_.pid > 0) {
    // As Redis: the final save replaces whatever the child was writing.
    server_.Log(3, "There is a child saving an .rdb. Killing it!");
    KillChild("Killed the snapshot child");
  }
  const bool save = o.save == ShutdownOptions::Save::kSave ||
                    (o.save == ShutdownOptions::Save::kDefault && !server_.cfg().save_points.empty());
  if (save) {
    server_.Log(3, "Saving the final RDB snapshot before exiting.");
    Status s = Save();
    // The server stays up (unless FORCE) and this hook runs again at the next try.
    if (!s.ok()) return s;
  }
  shut_down_ = true;
  StopWriter();
  jobs_.reset();
  return Status::OK();
}


}  // namespace feedkv::server
