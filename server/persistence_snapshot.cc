// Persistence: snapshots. SAVE in the foreground; BGSAVE, BGREWRITEAOF and
// save points in a forked child; finishing (rename, fsync dir, segment
// retirement) off the command thread once the AOF is durable to the
// snapshot's position. And DEBUG DIGEST.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <cstring>
#include <future>

#include <fmt/format.h>

#include "server/cold_tier.h"
#include "server/job_thread.h"
#include "server/persistence.h"
#include "server/script_engine.h"
#include "server/startup.h"
#include "storage/rdb_writer.h"

namespace feedkv::server {

rdb::SnapshotSource Persistence::Source(const rdb::Header& h) {
  rdb::SnapshotSource src;
  src.header = h;
  src.compress = server_.cfg().rdbcompression;
  src.aux = {{"feedkv-ver", kFeedkvVersion},
             {"redis-ver", kRedisCompatVersion},
             {"ctime", std::to_string(h.ctime_ms / 1000)},
             {"used-mem", std::to_string(server_.UsedMemory())}};
  server_.dataset().AddTo(&src);
  src.function_libraries = server_.scripts().LibraryCodes();
  return src;
}

rdb::Header Persistence::SnapshotHeader() {
  rdb::Header h;
  h.ctime_ms = NowMs();
  // The snapshot equals the journal at a group boundary; replay from there
  // starts with SELECT.
  Journal& journal = server_.journal();
  journal.Seal();
  journal.ForgetSelectedDb();
  h.aof_offset = journal.sealed_offset();
  if (writer_) {
    h.aof_lineage = writer_->lineage();
    h.aof_segment = writer_->position().segment;
    h.aof_segment_offset = writer_->position().offset;
  }
  return h;
}

std::function<void(const Status&)> Persistence::FinishWork(
    std::string tmp, rdb::Header h, std::function<void(const Status&)> after) {
  std::string final_path = rdb_path();
  Env* env = env_;
  aof::AofWriter* writer = writer_.get();
  uint64_t retain = static_cast<uint64_t>(server_.cfg().aof_retain_segments);
  return [=](const Status& aof_status) {
    Status s = aof_status;
    if (s.ok()) s = env->RenameFile(tmp, final_path);
    if (s.ok()) s = env->SyncDir(DirName(final_path));
    if (!s.ok()) env->RemoveFile(tmp).PermitUnchecked();
    // Segments before the snapshot's are history now; keep `retain` of them.
    // Only for a snapshot of this log: one begun before the AOF was turned
    // off and on again names another lineage's segments, and is no base.
    if (s.ok() && writer != nullptr && h.aof_segment > 0 && h.aof_lineage == writer->lineage()) {
      writer->RetireBefore(h.aof_segment > retain ? h.aof_segment - retain : 1);
    }
    after(s);
  };
}

void Persistence::RunFinish(std::function<void(const Status&)> work) {
  if (writer_) {
    writer_->RunWhenDurable(std::move(work));
  } else {
    jobs_->Submit([work] { work(Status::OK()); });
  }
}

void Persistence::Finalize(std::string tmp, rdb::Header h, std::function<void(const Status&)> done) {
  finalizing_++;
  boost::asio::io_context& io = server_.io();
  RunFinish(FinishWork(std::move(tmp), h, [this, &io, h, done](const Status& s) {
    boost::asio::post(io, [this, s, h, done] {
      finalizing_--;
      if (s.ok()) SnapshotTaken(h);
      done(s);
    });
  }));
}

Status Persistence::Save() {
  if (child_.pid > 0) return Status::Busy("Background save already in progress");
  rdb::SnapshotSource src = Source(SnapshotHeader());
  std::shared_future<Status> cold_done;
  ColdTier* cold = server_.cold_tier();
  const bool cold_checkpoint = cold != nullptr && cold->QueueCheckpoint(src.header, &cold_done);
  std::string tmp = JoinPath(server_.cfg().dir, fmt::format("temp-{}.rdb", getpid()));
  rdb::SaveStats st;
  Status s = rdb::WriteSnapshotFile(env_, tmp, src, &st);
  if (s.ok() && cold_checkpoint) s = cold_done.get();  // SAVE blocks anyway
  if (s.ok()) {
    // The rename waits for the AOF to be durable to the snapshot's position
    // (it runs on the writer thread): wait for it here, as SAVE blocks.
    std::promise<Status> done;
    std::future<Status> f = done.get_future();
    RunFinish(FinishWork(tmp, src.header, [&done](const Status& r) { done.set_value(r); }));
    s = f.get();
    if (s.ok()) SnapshotTaken(src.header);
  }
  if (!s.ok()) {
    env_->RemoveFile(tmp).PermitUnchecked();
    server_.Log(3, "Failed saving the snapshot: " + s.ToString());
    return s;
  }
  server_.stats().dirty = 0;
  last_save_ms_ = NowMs();
  rdb_saves_++;
  last_bgsave_ok_ = true;
  UpdateWriteError();
  server_.Log(2, fmt::format("DB saved on disk ({} keys, {} bytes)", st.keys, st.bytes));
  return Status::OK();
}

void Persistence::AfterFlushAll() {
  if (server_.cfg().save_points.empty()) return;
  if (child_.pid > 0 && !child_.rewrite) KillChild("FLUSHALL made the running background save outdated; killed it");
  // After the FLUSHALL has counted its own change.
  boost::asio::post(server_.io(), [this] {
    std::string reply;
    BgSave(false, true, &reply).PermitUnchecked();
    server_.stats().dirty = 0;
    if (child_.pid > 0) child_.dirty_at_start = 0;
  });
}

Status Persistence::ScheduleRewrite(std::string* reply) {
  if (child_.pid > 0 && child_.rewrite) return Status::Busy("Background append only file rewriting already in progress");
  rewrite_scheduled_ = true;
  *reply = "Background append only file rewriting scheduled";
  return Status::OK();
}

Status Persistence::BgSave(bool rewrite, bool schedule, std::string* reply) {
  if (child_.pid > 0) {
    if (rewrite && child_.rewrite) return Status::Busy("Background append only file rewriting already in progress");
    if (rewrite || schedule) {
      (rewrite ? rewrite_scheduled_ : bgsave_scheduled_) = true;
      *reply = rewrite ? "Background append only file rewriting scheduled" : "Background saving scheduled";
      return Status::OK();
    }
    return Status::Busy("Background save already in progress");
  }
  Child c;
  c.rewrite = rewrite;
  if (rewrite && writer_) {
    server_.journal().Seal();  // the roll falls at the journal's end
    writer_->RequestRoll();
  }
  c.header = SnapshotHeader();
  c.start_ms = NowMs();
  c.dirty_at_start = server_.stats().dirty;
  c.tmp = JoinPath(server_.cfg().dir, fmt::format("temp-bg-{}-{}.rdb", getpid(), total_forks_));
  rdb::SnapshotSource src = Source(c.header);
  src.key_delay_us = server_.cfg().rdb_key_save_delay;  // the child only, as tests use it
  // The cold store as of this position, taken by its writer thread meanwhile.
  if (ColdTier* cold = server_.cold_tier()) c.cold_checkpoint = cold->QueueCheckpoint(c.header, &c.cold_done);
  int64_t t0 = NowUs();
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // Child: a frozen copy of the dataset (copy-on-write). Only the snapshot
    // code runs here; no Asio, no other thread's state.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    // Nobody would finish (rename) the snapshot of a server that died.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    rdb::SaveStats st;
    Status s = rdb::WriteSnapshotFile(Env::Default(), c.tmp, src, &st);
    if (!s.ok()) {
      std::fprintf(stderr, "feedkv snapshot child: %s\n", s.ToString().c_str());
      ::_exit(1);
    }
    ::_exit(0);
  }
  last_fork_us_ = NowUs() - t0;
  total_forks_++;
  server_.stats().latest_fork_usec = last_fork_us_;
  server_.stats().total_forks++;
  last_bgsave_try_ms_ = c.start_ms;
  if (pid < 0) {
    std::string err = fmt::format("Can't fork: {}", std::strerror(errno));
    server_.Log(3, err);
    last_bgsave_ok_ = false;
    return Status::IOError(err);
  }
  c.pid = pid;
  child_ = c;
  server_.set_fork_child_active(true);
  server_.Log(2, fmt::format("Background {} started by pid {} (fork took {} us)",
                             rewrite ? "AOF rewrite" : "saving", pid, last_fork_us_));
  *reply = rewrite ? "Background append only file rewriting started" : "Background saving started";
  return Status::OK();
}

void Persistence::ReapChild() {
  int status = 0;
  pid_t r = ::waitpid(child_.pid, &status, WNOHANG);
  if (r == 0) return;
  Child c = child_;
  child_ = Child{};
  server_.set_fork_child_active(false);
  bool ok = r == c.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  auto record = [this, c](bool success) { RecordChild(c, success); };
  if (!ok) {
    server_.Log(3, fmt::format("Background saving error (child pid {} status {})", c.pid, status));
    env_->RemoveFile(c.tmp).PermitUnchecked();
    record(false);
    return;
  }
  if (c.cold_checkpoint) {
    // The checkpoint job ran before any job queued after it.
    finalizing_++;
    server_.cold_tier()->AfterWriter([this, c, record] {
      finalizing_--;
      Status s = c.cold_done.get();
      if (!s.ok()) {
        server_.Log(3, "Background saving failed: the cold store checkpoint failed: " + s.ToString());
        env_->RemoveFile(c.tmp).PermitUnchecked();
        record(false);
        return;
      }
      FinishChild(c);
    });
    return;
  }
  FinishChild(c);
}

void Persistence::RecordChild(const Child& c, bool success) {
  const int64_t secs = (NowMs() - c.start_ms + 500) / 1000;
  if (c.rewrite) {
    // A failed rewrite loses nothing (the log goes on): unlike a failed BGSAVE
    // it does not stop writes (Redis's MISCONF is for BGSAVE and AOF writes).
    last_rewrite_ok_ = success;
    last_rewrite_secs_ = secs;
    if (success) aof_rewrites_++;
  } else {
    last_bgsave_ok_ = success;
    last_bgsave_secs_ = secs;
  }
  // A log turned on at runtime still needs its base: try again (as Redis
  // reschedules its rewrite while it waits for one), not at once.
  if (!success && base_pending_ && !rewrite_scheduled_) {
    rewrite_scheduled_ = true;
    rewrite_not_before_ms_ = NowMs() + kBaseRetryMs;
  }
  UpdateWriteError();
}

void Persistence::SnapshotTaken(const rdb::Header& h) {
  last_snapshot_ = h;
  // Any durable snapshot of this log is its base.
  if (writer_ && h.aof_lineage == writer_->lineage()) base_pending_ = false;
  if (ColdTier* cold = server_.cold_tier()) cold->KeepOnlyCheckpoint(h);
}

void Persistence::FinishChild(const Child& c) {
  auto record = [this, c](bool success) { RecordChild(c, success); };
  Finalize(c.tmp, c.header, [this, c, record](const Status& s) {
    if (!s.ok()) {
      server_.Log(3, "Background saving failed to finish: " + s.ToString());
      record(false);
      return;
    }
    uint64_t dirty = server_.stats().dirty;
    server_.stats().dirty = dirty > c.dirty_at_start ? dirty - c.dirty_at_start : 0;
    last_save_ms_ = c.start_ms;
    rdb_saves_++;
    server_.Log(2, c.rewrite ? "Background AOF rewrite finished successfully"
                             : "Background saving terminated with success");
    record(true);
  });
}

}  // namespace feedkv::server
