// A synthetic OpenSM subnet for the plugin's benchmark and tests: OpenSM's own structs
// (osm_opensm_t, osm_node_t with its physp table, osm_switch_t with an LFT), laid out the way
// OpenSM allocates them, without OpenSM (switches[i]->lft is lfts[i]). Freed with the FakeSubnet (the sanitizer build's leak
// check runs the tests that use it).
//
//   ibf::osm::FakeSubnet fs;
//   fs.build(48000);                        // a 3-tier fat-tree of radix-64 switches, ~48k LIDs
//   osm_node_t* sw = fs.add(IB_NODE_TYPE_SWITCH, 0x10, 8, "sw");  // or node by node, then fs.link()
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../src/osm_headers.h"
#include "ibf/fabric.h"

namespace ibf::osm {

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
    FakeSubnet(const FakeSubnet&) = delete;
    FakeSubnet& operator=(const FakeSubnet&) = delete;
    ~FakeSubnet() {
        for (osm_switch_t* sw : switches) std::free(sw);
        for (osm_node_t* n : nodes) {
            std::free(n->print_desc);
            std::free(n);
        }
        std::free(osm);
    }

    // A node with `ports` ports, every valid one Active 4xQDR, one new LID (a switch's on port 0).
    osm_node_t* add(uint8_t type, Guid guid, int ports, const std::string& desc) {
        const int physp = ports + 1;
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
        add_lfts();
    }

    // An LFT for every switch over every LID given so far (deterministic egress ports 1..64).
    void add_lfts() {
        for (osm_node_t* n : nodes)
            if (n->node_info.node_type == IB_NODE_TYPE_SWITCH) add_lft(n);
    }

    // One switch's osm_switch_t in sw_guid_tbl with an LFT over every LID given so far.
    osm_switch_t* add_lft(osm_node_t* n) {
        const size_t max_lid = next_lid - 1;
        auto* sw = static_cast<osm_switch_t*>(std::calloc(1, sizeof(osm_switch_t)));
        sw->p_node = n;
        sw->num_ports = static_cast<uint8_t>(n->physp_tbl_size);
        sw->max_lid_ho = static_cast<uint16_t>(max_lid);
        sw->lft_size = static_cast<uint16_t>(((max_lid / 64) + 1) * 64);
        lfts.emplace_back(sw->lft_size, OSM_NO_PATH);
        std::vector<uint8_t>& t = lfts.back();
        const size_t ports = n->physp_tbl_size - 1;
        for (size_t l = 1; l <= max_lid; ++l) t[l] = static_cast<uint8_t>(1 + (l * 7 + switches.size()) % ports);
        sw->lft = t.data();
        cl_qmap_insert(&osm->subn.sw_guid_tbl, n->node_info.node_guid, &sw->map_item);
        switches.push_back(sw);
        return sw;
    }
};

}  // namespace ibf::osm
