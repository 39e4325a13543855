// feedkv-server [path/to/feedkv.conf] [--name value ...]
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>

#include <fmt/format.h>
#include <string>
#include <vector>

#include "server/command_docs.h"
#include "server/command_table.h"
#include "server/config.h"
#include "server/allocator.h"
#include "server/monotonic_clock.h"
#include "server/server.h"
#include "server/startup.h"

int main(int argc, char** argv) {
  using namespace feedkv::server;
  MarkCommandThread();  // main runs the event loop: the command thread
  Config config;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "-v" || args[0] == "--version")) {
    std::printf("feedkv-server v=%s\n", kFeedkvVersion);
    return 0;
  }
  if (!args.empty() && args[0] == "--commands-markdown") {
    std::fputs(CommandsMarkdown(CommandTable()).c_str(), stdout);
    return 0;
  }
  // As Redis: a first argument not starting with "-" names the config file.
  std::string path;
  if (!args.empty() && !args[0].starts_with("-")) {
    path = args[0];
    args.erase(args.begin());
  }
  if (feedkv::Status s = config.Load(path, args); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  // glibc gives the top of the heap back to the kernel once 128 KB of it are free, so a
  // workload that allocates and frees ~100 KB values (LSSET of a 10,000-member list and
  // the read buffer for its bulk) faults every page in again each time: ~20% of LSSET's
  // server time in perf. Keep up to 64 MB of freed heap for reuse (jemalloc, Redis's
  // allocator, likewise holds freed pages for seconds) and serve blocks up to 4 MB from
  // the heap; bigger ones still come from mmap and go straight back.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  MonotonicClock::Init();  // ~10 ms of TSC calibration, before any command is timed
  boost::asio::io_context io(1);
  Server server(io, std::move(config));
  if (!server.cfg().pidfile.empty()) {
    std::ofstream(server.cfg().pidfile) << getpid() << "\n";
  }
  if (feedkv::Status s = server.LoadAclAtStartup(); !s.ok()) {
    server.Log(3, s.message());
    return 1;
  }
  // Subsystems (persistence, ...) attach here, before the first client.
  if (!AttachSubsystems(server)) return 1;
  if (!server.Start()) return 1;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  // A shutdown whose final save fails leaves the server up (as Redis); the next
  // signal tries again, so the wait is re-armed.
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
      server.Log(3, fmt::format("Received {} scheduling shutdown...", name));
      if (!server.Shutdown()) {
        server.Log(3, fmt::format("{} received but errors trying to shut down the server, "
                                  "check the logs for more information", name));
        wait_signal();
      }
    });
  };
  wait_signal();
  std::signal(SIGPIPE, SIG_IGN);
  io.run();
  if (!server.cfg().pidfile.empty()) ::unlink(server.cfg().pidfile.c_str());
  return 0;
}
