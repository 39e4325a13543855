// CLUSTER: feedkv has no cluster mode yet, so every subcommand answers as
// Redis does with cluster-enabled no: "ERR This instance has cluster support
// disabled" (after the usual unknown-subcommand and arity checks, which the
// table's rows give dispatch). Cluster-aware clients read that error as "not
// a cluster" and fall back to a plain connection.
#include "server/command_context.h"

namespace feedkv::server {

namespace {

void Cluster(CommandContext& ctx) { ctx.Error(protocol::err::kClusterDisabled); }

constexpr uint32_t kAdm = kAdmin | kStale;

// Redis 7.0's subcommands, arities and flags.
const SubcommandSpec kClusterSubs[] = {
    {"addslots", -3, kAdm, "Assign new hash slots to receiving node"},
    {"addslotsrange", -4, kAdm, "Assign new hash slots to receiving node"},
    {"bumpepoch", 2, kAdm, "Advance the cluster config epoch"},
    {"count-failure-reports", 3, kAdm, "Return the number of failure reports active for a given node"},
    {"countkeysinslot", 3, kStale, "Return the number of local keys in the specified hash slot"},
    {"delslots", -3, kAdm, "Set hash slots as unbound in receiving node"},
    {"delslotsrange", -4, kAdm, "Set hash slots as unbound in receiving node"},
    {"failover", -2, kAdm, "Forces a replica to perform a manual failover of its master."},
    {"flushslots", 2, kAdm, "Delete a node's own slots information"},
    {"forget", 3, kAdm, "Remove a node from the nodes table"},
    {"getkeysinslot", 4, kStale, "Return local key names in the specified hash slot"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
    {"info", 2, kStale, "Provides info about Redis Cluster node state"},
    {"keyslot", 3, kStale, "Returns the hash slot of the specified key"},
    {"links", 2, kStale, "Returns a list of all TCP links to and from peer nodes in cluster"},
    {"meet", -4, kAdm, "Force a node cluster to handshake with another node"},
    {"myid", 2, kStale, "Return the node id"},
    {"nodes", 2, kStale, "Get Cluster config for the node"},
    {"replicas", 3, kAdm, "List replica nodes of the specified master node"},
    {"replicate", 3, kAdm, "Reconfigure a node as a replica of the specified master node"},
    {"reset", -2, kAdm | kNoScript, "Reset a Redis Cluster node"},
    {"saveconfig", 2, kAdm, "Forces the node to save cluster state on disk"},
    {"set-config-epoch", 3, kAdm, "Set the configuration epoch in a new node"},
    {"setslot", -4, kAdm, "Bind a hash slot to a specific node"},
    {"shards", 2, kStale, "Get array of cluster slots to node mappings"},
    {"slaves", 3, kAdm, "List replica nodes of the specified master node"},
    {"slots", 2, kStale, "Get array of Cluster slot to node mappings"},
};

const CommandSpec kCommands[] = {
    {"cluster", -2, 0, 0, 0, 0, Cluster, "A container for cluster commands", "cluster", kClusterSubs},
};

}  // namespace

std::span<const CommandSpec> ClusterCommands() { return kCommands; }

}  // namespace feedkv::server
