// bench_plugin_snapshot: one sweep's way from OpenSM's memory to the daemon's Snapshot at the size
// of the largest subnets, on a synthetic osm_subn (3-tier fat-tree of radix-64 switches, one LID per
// host and per switch, an LFT per switch): the plugin's copy under the lock (copy_subnet +
// LftCache::refresh), what follows it off the lock (finish_copy + fill), the version 2 encoder
// (SnapshotWriter) and decoder (wire::Decoder, part by part), for a first sweep (every table
// sent), a sweep that changed nothing and one that re-routed 1 % of the switches; the version 1
// JSON frame for comparison. Times are thread CPU ms. docs/benchmarks.md has the figures.
//
//   build/bin/bench_plugin_snapshot --lids 48000 [--runs 3] [--no-v1]
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../src/osm_headers.h"
#include "ibf/osm_copy.h"
#include "ibf/wire.h"

namespace {

using ibf::Guid;

// Thread CPU time: the machine is shared, wall clock would measure the neighbours.
struct Clock {
    using time_point = double;
    static double now() {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
    }
};
double ms_since(double t) { return Clock::now() - t; }

long rss_kb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
    return 0;
}

// The synthetic subnet: OpenSM's own structs, laid out the way OpenSM allocates them.
struct FakeSubnet {
    osm_opensm_t* osm = nullptr;
    std::vector<osm_node_t*> nodes;
    std::vector<osm_switch_t*> switches;
    std::vector<std::vector<uint8_t>> lfts;
    uint16_t next_lid = 1;

    FakeSubnet() {
        osm = static_cast<osm_opensm_t*>(std::calloc(1, sizeof(osm_opensm_t)));
        cl_qmap_init(&osm->subn.node_guid_tbl);
        cl_qmap_init(&osm->subn.sw_guid_tbl);
        cl_qmap_init(&osm->subn.port_guid_tbl);
        cl_qmap_init(&osm->subn.sm_guid_tbl);
        osm->subn.max_ucast_lid_ho = 49151;
        osm->subn.sm_state = IB_SMINFO_STATE_MASTER;
        osm->osm_version = const_cast<char*>("OpenSM 3.3.23");
    }

    osm_node_t* add(uint8_t type, Guid guid, int ports, const std::string& desc) {
        const int physp = type == IB_NODE_TYPE_SWITCH ? ports + 1 : ports + 1;
        auto* n = static_cast<osm_node_t*>(std::calloc(1, sizeof(osm_node_t) + sizeof(osm_physp_t) * static_cast<size_t>(physp)));
        n->node_info.node_type = type;
        n->node_info.num_ports = static_cast<uint8_t>(ports);
        n->node_info.node_guid = cl_hton64(guid);
        n->node_info.sys_guid = cl_hton64(guid);
        std::strncpy(reinterpret_cast<char*>(n->node_desc.description), desc.c_str(), IB_NODE_DESCRIPTION_SIZE - 1);
        n->physp_tbl_size = static_cast<uint32_t>(physp);
        n->print_desc = strdup(desc.c_str());
        const uint16_t lid = next_lid++;
        for (int pn = type == IB_NODE_TYPE_SWITCH ? 0 : 1; pn < physp; ++pn) {
            osm_physp_t& p = n->physp_table[pn];
            p.port_num = static_cast<uint8_t>(pn);
            p.port_guid = cl_hton64(type == IB_NODE_TYPE_SWITCH ? guid : guid + 1);
            p.p_node = n;
            ib_port_info_t& pi = p.port_info;
            if (type != IB_NODE_TYPE_SWITCH || pn == 0) pi.base_lid = cl_hton16(lid);
            ib_port_info_set_port_state(&pi, IB_LINK_ACTIVE);
            ib_port_info_set_port_phys_state(5, &pi);
            pi.link_width_active = 2;
            pi.link_width_enabled = 3;
            pi.link_width_supported = 3;
            pi.link_speed = static_cast<uint8_t>((4 << 4) | 7);
            pi.mtu_cap = 5;
            pi.mtu_smsl = static_cast<uint8_t>(5 << 4);
        }
        cl_qmap_insert(&osm->subn.node_guid_tbl, n->node_info.node_guid, &n->map_item);
        nodes.push_back(n);
        return n;
    }

    void link(osm_node_t* a, int pa, osm_node_t* b, int pb) {
        a->physp_table[pa].p_remote_physp = &b->physp_table[pb];
        b->physp_table[pb].p_remote_physp = &a->physp_table[pa];
    }

    // Hosts on leaves (32 down, 32 up), leaves to the aggregation switches of their pod (32
    // leaves x 32 aggregation switches per pod), aggregation up ports to the core round-robin.
    void build(size_t lids) {
        const size_t hosts = lids * 928 / 1000;  // ~7 % of the LIDs are switches at radix 64
        const size_t leaves = (hosts + 31) / 32, pods = (leaves + 31) / 32, aggs = pods * 32, cores = std::max<size_t>(1, aggs / 2);
        std::vector<osm_node_t*> leaf, agg, core;
        Guid sg = 0x0002c90400000000ull;
        for (size_t i = 0; i < leaves; ++i) leaf.push_back(add(IB_NODE_TYPE_SWITCH, sg++, 64, "MF0;leaf" + std::to_string(i) + ":MQM8700/U1"));
        for (size_t i = 0; i < aggs; ++i) agg.push_back(add(IB_NODE_TYPE_SWITCH, sg++, 64, "MF0;agg" + std::to_string(i) + ":MQM8700/U1"));
        for (size_t i = 0; i < cores; ++i) core.push_back(add(IB_NODE_TYPE_SWITCH, sg++, 64, "MF0;core" + std::to_string(i) + ":MQM8700/U1"));
        for (size_t h = 0; h < hosts; ++h) {
            osm_node_t* n = add(IB_NODE_TYPE_CA, 0x0002c90300000000ull + 2 * h, 1, "gpu" + std::to_string(h) + " mlx5_0");
            link(n, 1, leaf[h / 32], 1 + static_cast<int>(h % 32));
        }
        for (size_t l = 0; l < leaves; ++l)
            for (int k = 0; k < 32; ++k) link(leaf[l], 33 + k, agg[(l / 32) * 32 + static_cast<size_t>(k)], 1 + static_cast<int>(l % 32));
        std::vector<int> core_port(cores, 1);
        size_t c = 0;
        for (size_t a = 0; a < aggs; ++a)
            for (int u = 0; u < 32; ++u, c = (c + 1) % cores) {
                if (core_port[c] > 64) continue;
                link(agg[a], 33 + u, core[c], core_port[c]++);
            }
        const size_t max_lid = next_lid - 1;
        for (osm_node_t* n : nodes) {
            if (n->node_info.node_type != IB_NODE_TYPE_SWITCH) continue;
            auto* sw = static_cast<osm_switch_t*>(std::calloc(1, sizeof(osm_switch_t)));
            sw->p_node = n;
            sw->num_ports = 65;
            sw->max_lid_ho = static_cast<uint16_t>(max_lid);
            sw->lft_size = static_cast<uint16_t>(((max_lid / 64) + 1) * 64);
            lfts.emplace_back(sw->lft_size, OSM_NO_PATH);
            std::vector<uint8_t>& t = lfts.back();
            for (size_t l = 1; l <= max_lid; ++l) t[l] = static_cast<uint8_t>(1 + (l * 7 + switches.size()) % 64);
            sw->lft = t.data();
            cl_qmap_insert(&osm->subn.sw_guid_tbl, n->node_info.node_guid, &sw->map_item);
            switches.push_back(sw);
        }
    }
};

struct Sweep {
    double lock_ms = 0, copy_ms = 0, after_ms = 0, encode_ms = 0, decode_ms = 0;
    size_t bytes = 0, parts = 0, copied = 0, sent = 0, unchanged = 0;
};

Sweep one_sweep(FakeSubnet& fs, ibf::osm::LftCache& cache, ibf::wire::LftHashes& delivered, ibf::wire::Decoder& dec) {
    Sweep r;
    auto snap = std::make_shared<ibf::Snapshot>();
    ibf::osm::SubnetCopy raw;
    auto t0 = Clock::now();
    ibf::osm::copy_subnet(fs.osm, raw);
    r.copy_ms = ms_since(t0);
    r.copied = cache.refresh(fs.osm, raw.lids);
    r.lock_ms = ms_since(t0);
    auto t1 = Clock::now();
    ibf::osm::build_snapshot(raw, *snap);
    cache.fill(*snap);
    r.after_ms = ms_since(t1);
    ibf::wire::SnapshotWriter w(*snap, delivered);
    std::string frame;
    for (;;) {
        auto te = Clock::now();
        const bool more = w.next(frame);
        r.encode_ms += ms_since(te);
        if (!more) break;
        r.bytes += frame.size();
        ++r.parts;
        auto td = Clock::now();
        dec.feed(frame.data(), frame.size());
        while (auto m = dec.next())
            if (!std::holds_alternative<ibf::Snapshot>(*m)) std::fprintf(stderr, "unexpected message\n");
        r.decode_ms += ms_since(td);
    }
    delivered = w.take_delivered();
    r.sent = w.lfts_sent();
    r.unchanged = w.lfts_unchanged();
    return r;
}

void print(const char* what, const Sweep& s) {
    std::printf("  %-22s under lock %7.1f ms (copy %6.1f, LFTs %6.1f; %zu tables copied)  after %6.1f ms  "
                "v2 %8.2f MB in %3zu parts (%zu LFTs sent, %zu unchanged)  encode %6.1f ms  decode %7.1f ms\n",
                what, s.lock_ms, s.copy_ms, s.lock_ms - s.copy_ms, s.copied, s.after_ms, s.bytes / 1e6, s.parts, s.sent,
                s.unchanged, s.encode_ms, s.decode_ms);
}

}  // namespace

int main(int argc, char** argv) {
    size_t lids = 48000;
    int runs = 3;
    bool v1 = true;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--lids" && i + 1 < argc) lids = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
        else if (a == "--no-v1") v1 = false;
        else {
            std::fprintf(stderr, "usage: bench_plugin_snapshot [--lids N (<= 49151)] [--runs N] [--no-v1]\n");
            return 2;
        }
    }
    if (lids < 100 || lids > 49151 || runs < 1) {
        std::fprintf(stderr, "bench_plugin_snapshot: --lids must be 100..49151 and --runs >= 1\n");
        return 2;
    }
    FakeSubnet fs;
    fs.build(lids);
    std::printf("synthetic subnet: %u LIDs, %zu nodes, %zu switches (LFTs of %u LIDs); RSS %ld MB\n",
                fs.next_lid - 1, fs.nodes.size(), fs.switches.size(), fs.next_lid, rss_kb() / 1024);
    for (int run = 0; run < runs; ++run) {
        ibf::osm::LftCache cache;  // a plugin just loaded
        ibf::wire::LftHashes delivered;  // a connection just opened
        ibf::wire::Decoder dec;
        std::string h = ibf::wire::encode(ibf::wire::Message(ibf::wire::Hello{.wire_version = 2}));
        dec.feed(h.data(), h.size());
        (void)dec.next();
        std::printf("run %d\n", run + 1);
        print("first sweep", one_sweep(fs, cache, delivered, dec));
        print("nothing changed", one_sweep(fs, cache, delivered, dec));
        for (size_t i = 0; i < fs.lfts.size(); i += 100) fs.lfts[i][1 + i % (fs.next_lid - 1)] ^= 1;  // 1 % re-routed
        print("1 % of LFTs changed", one_sweep(fs, cache, delivered, dec));
        std::printf("  RSS %ld MB\n", rss_kb() / 1024);
    }
    if (v1) {
        ibf::Snapshot s;
        ibf::osm::SubnetCopy raw;
        auto t0 = Clock::now();
        ibf::osm::copy_subnet(fs.osm, raw);
        ibf::osm::build_snapshot(raw, s);
        ibf::osm::copy_lfts(fs.osm, s);
        const double copy = ms_since(t0);
        auto t1 = Clock::now();
        try {
            std::string f = ibf::wire::encode(s);
            std::printf("v1 JSON: the Fabric and every LFT built (what was under the lock before) %.1f ms, frame %.2f MB, "
                        "encode %.1f ms\n", copy, f.size() / 1e6, ms_since(t1));
        } catch (const ibf::wire::Error& e) {
            std::printf("v1 JSON: copy as before %.1f ms; the encoder refuses it: %s\n", copy, e.what());
        }
    }
    return 0;
}
