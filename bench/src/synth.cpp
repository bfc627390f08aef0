#include "ibf/synth.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace ibf {
namespace {

constexpr Guid kSwitchBase = 0x7cfe900300000000ULL;
constexpr Guid kHostBase = 0x0c42a10300000000ULL;

std::string numbered(const char* prefix, int n, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%0*d", prefix, digits, n);
    return buf;
}

void set_up(Port& p, const FatTreeSpec& s) {
    p.state = PortState::Active;
    p.phys = PhysState::LinkUp;
    p.width_active = s.rate.width;
    p.speed_active = s.rate.speed;
    p.width_supported = s.width_supported ? s.width_supported : width_bit(s.rate.width);
    p.speed_supported = s.speed_supported ? s.speed_supported : speed_bit(s.rate.speed);
    p.width_enabled = p.width_supported;
    p.speed_enabled = p.speed_supported;
    p.mtu_cap = s.mtu;
    p.mtu_active = s.mtu;
}

void set_down(Port& p) {
    p.state = PortState::Down;
    p.phys = PhysState::Polling;
    p.width_active = Width::Unknown;
    p.speed_active = Speed::Unknown;
    p.mtu_active = 0;
}

Port& must_port(Fabric& f, NodeId n, int port) {
    if (n >= f.size()) throw std::invalid_argument("no such node");
    Port* p = f.node(n).port(port);
    if (!p) throw std::invalid_argument("no port " + std::to_string(port) + " on " + f.node(n).name);
    return *p;
}

// Adds switches and one-port CAs with the spec's port settings (LIDs from 1 in the order added),
// and cables that come up at the spec's rate.
struct Builder {
    const FatTreeSpec& s;
    Fabric f;
    uint16_t lid = 1;

    explicit Builder(const FatTreeSpec& spec) : s(spec) {}

    // A Mellanox/NVIDIA node (vendor 0x02c9) with the next LID, its system GUID its node GUID.
    NodeId add(NodeType type, std::string description, Guid guid, uint16_t device_id, int ports) {
        Node n;
        n.type = type;
        n.guid = guid;
        n.system_guid = guid;
        n.description = std::move(description);
        n.vendor_id = 0x02c9;
        n.device_id = device_id;
        n.lid = lid++;
        return f.add_node(std::move(n), ports);
    }

    NodeId add_switch(std::string description, Guid guid, int ports) {
        const NodeId id = add(NodeType::Switch, std::move(description), guid, 0xd2f0, ports);
        Node& node = f.node(id);
        for (auto& p : node.ports) {
            p.guid = node.guid;
            p.lid = p.num == 0 ? node.lid : 0;
            if (p.num == 0) {
                p.state = PortState::Active;
                p.phys = PhysState::LinkUp;
            } else {
                set_down(p);
                p.width_supported = p.width_enabled = s.width_supported ? s.width_supported : width_bit(s.rate.width);
                p.speed_supported = p.speed_enabled = s.speed_supported ? s.speed_supported : speed_bit(s.rate.speed);
                p.mtu_cap = s.mtu;
            }
        }
        return id;
    }

    // A one-port CA, port GUID = node GUID + 1; device 0x101b (ConnectX-6) unless given.
    NodeId add_ca(std::string description, Guid guid, uint16_t device_id = 0x101b) {
        const NodeId id = add(NodeType::CA, std::move(description), guid, device_id, 1);
        Port& p = *f.node(id).port(1);
        p.guid = guid + 1;
        p.lid = f.node(id).lid;
        return id;
    }

    void link(NodeId a, int pa, NodeId b, int pb) {
        f.connect(a, pa, b, pb);
        set_up(*f.node(a).port(pa), s);
        set_up(*f.node(b).port(pb), s);
    }
};

}  // namespace

FatTreeShape fat_tree_shape(const FatTreeSpec& s) {
    if (s.levels != 2 && s.levels != 3) throw std::invalid_argument("fat tree levels must be 2 or 3");
    if (s.radix < 4 || s.radix > 254 || s.radix % 2) throw std::invalid_argument("fat tree radix must be even, 4..254");
    const int k = s.radix, h = k / 2;
    FatTreeShape r;
    if (s.levels == 2) {
        r.hosts = s.hosts > 0 ? s.hosts : k * h;
        r.leaves = (r.hosts + h - 1) / h;
        if (r.leaves > k) throw std::invalid_argument("too many hosts for a 2-level tree of this radix");
        r.spines = h;
        r.links = static_cast<size_t>(r.hosts) + static_cast<size_t>(r.leaves) * h;
    } else {
        r.hosts = s.hosts > 0 ? s.hosts : k * h * h;
        r.leaves = (r.hosts + h - 1) / h;
        int pods = (r.leaves + h - 1) / h;
        if (pods > k) throw std::invalid_argument("too many hosts for a 3-level tree of this radix");
        r.spines = pods * h;
        r.cores = h * h;
        r.links = static_cast<size_t>(r.hosts) + static_cast<size_t>(r.leaves) * h + static_cast<size_t>(r.spines) * h;
    }
    return r;
}

Fabric synth_fat_tree(const FatTreeSpec& s) {
    const FatTreeShape shape = fat_tree_shape(s);
    const int k = s.radix, h = k / 2;
    Builder b(s);
    auto add_switch = [&](const char* tier_name, int tier, int index) {
        return b.add_switch("MF0;" + numbered(tier_name, index, 4) + ":" + s.switch_model + "/U1",
                            kSwitchBase | (static_cast<Guid>(tier) << 24) | static_cast<Guid>(index), k);
    };
    auto link = [&](NodeId x, int px, NodeId y, int py) { b.link(x, px, y, py); };
    Fabric& f = b.f;

    std::vector<NodeId> leaves, spines, cores;
    for (int i = 1; i <= shape.leaves; ++i) leaves.push_back(add_switch("leaf", 1, i));
    for (int i = 1; i <= shape.spines; ++i) spines.push_back(add_switch("spine", 2, i));
    for (int i = 1; i <= shape.cores; ++i) cores.push_back(add_switch("core", 3, i));

    for (int i = 0; i < shape.hosts; ++i) {
        const NodeId id = b.add_ca(numbered("node", i + 1, 5) + " " + s.hca, kHostBase | (static_cast<Guid>(i + 1) << 4));
        link(leaves[i / h], i % h + 1, id, 1);
    }

    if (s.levels == 2) {
        for (int l = 0; l < shape.leaves; ++l)
            for (int u = 1; u <= h; ++u) link(leaves[l], h + u, spines[u - 1], l + 1);
    } else {
        for (int l = 0; l < shape.leaves; ++l) {
            int pod = l / h, i = l % h;
            for (int u = 1; u <= h; ++u) link(leaves[l], h + u, spines[pod * h + u - 1], i + 1);
        }
        for (int sp = 0; sp < shape.spines; ++sp) {
            int pod = sp / h, j = sp % h;  // j 0-based
            for (int u = 1; u <= h; ++u) link(spines[sp], h + u, cores[j * h + u - 1], pod + 1);
        }
    }
    f.finalize();
    return std::move(b.f);
}

namespace {

// Cables per leaf-spine pair of a SuperPOD without a core: the most that fit on a spine's 40
// ports and divide a leaf's 20 uplinks evenly.
int superpod_pair_cables(int leaves) {
    for (int c = 20; c >= 1; --c)
        if (20 % c == 0 && c * leaves <= 40) return c;
    return 0;
}

}  // namespace

SuperPodShape superpod_shape(const SuperPodSpec& s) {
    constexpr int rails = kSuperPodRails, per_unit = kSuperPodDgxPerUnit;
    if (s.units < 1 || per_unit % s.units) throw std::invalid_argument("superpod units must divide 20 (1, 2, 4, 5, ...)");
    if (s.service_slots < 0 || s.service_slots > per_unit) throw std::invalid_argument("superpod service slots must be 0..20");
    SuperPodShape r;
    r.leaves = s.units * rails;
    if (s.core) {
        r.spines = s.units * rails;
        r.cores = s.units * rails / 2;
    } else {
        const int c = superpod_pair_cables(r.leaves);
        if (c == 0) throw std::invalid_argument("superpod without a core: at most 5 units (40 leaves on a 40-port spine)");
        r.spines = per_unit / c;
    }
    r.dgx = s.units * per_unit - s.service_slots;
    r.hcas = r.dgx * rails;
    r.service_nodes = s.service_slots * rails;
    r.aggregation_nodes = s.sharp ? r.leaves + r.spines + r.cores : 0;
    r.links = static_cast<size_t>(r.hcas + r.service_nodes + r.aggregation_nodes) + static_cast<size_t>(r.leaves) * 20 +
              static_cast<size_t>(s.core ? r.spines * 20 : 0);
    return r;
}

Fabric synth_superpod(const SuperPodSpec& s) {
    const SuperPodShape shape = superpod_shape(s);
    constexpr int rails = kSuperPodRails, per_unit = kSuperPodDgxPerUnit, ports = 40;
    FatTreeSpec port_spec;
    port_spec.rate = s.rate;
    Builder b(port_spec);
    const int switch_ports = ports + (s.sharp ? 1 : 0);
    std::vector<NodeId> switches;
    auto add_switch = [&](const std::string& name, int tier, int index) {
        const Guid guid = kSwitchBase | (static_cast<Guid>(tier) << 24) | static_cast<Guid>(index);
        switches.push_back(b.add_switch("MF0;" + name + ":" + s.switch_model + "/U1", guid, switch_ports));
        return switches.back();
    };
    // leaf[(su - 1) * rails + rail - 1]
    std::vector<NodeId> leaves, spines, cores;
    for (int su = 1; su <= s.units; ++su)
        for (int r = 1; r <= rails; ++r)
            leaves.push_back(add_switch("su" + std::to_string(su) + "-leaf-r" + std::to_string(r), 1, static_cast<int>(leaves.size()) + 1));
    if (s.core) {
        // spine[(rail - 1) * units + j - 1], core[(j - 1) * 4 + c - 1]
        for (int r = 1; r <= rails; ++r)
            for (int j = 1; j <= s.units; ++j)
                spines.push_back(add_switch("spine-r" + std::to_string(r) + "-" + std::to_string(j), 2, static_cast<int>(spines.size()) + 1));
        for (int j = 1; j <= s.units; ++j)
            for (int c = 1; c <= rails / 2; ++c)
                cores.push_back(add_switch("core-" + std::to_string(j) + "-" + std::to_string(c), 3, static_cast<int>(cores.size()) + 1));
        const int per_pair = 20 / s.units;  // leaf to each spine of its rail group
        for (int su = 0; su < s.units; ++su)
            for (int r = 0; r < rails; ++r)
                for (int j = 0; j < s.units; ++j)
                    for (int c = 0; c < per_pair; ++c)
                        b.link(leaves[su * rails + r], 21 + j * per_pair + c, spines[r * s.units + j], su * per_pair + c + 1);
        const int per_core = 20 / (rails / 2);  // spine to each core of its core group
        for (int r = 0; r < rails; ++r)
            for (int j = 0; j < s.units; ++j)
                for (int c = 0; c < rails / 2; ++c)
                    for (int k = 0; k < per_core; ++k)
                        b.link(spines[r * s.units + j], 21 + c * per_core + k, cores[j * (rails / 2) + c], r * per_core + k + 1);
    } else {
        for (int j = 1; j <= shape.spines; ++j) spines.push_back(add_switch(numbered("spine", j, 2), 2, j));
        const int per_pair = superpod_pair_cables(shape.leaves);
        for (int l = 0; l < shape.leaves; ++l)
            for (int j = 0; j < shape.spines; ++j)
                for (int c = 0; c < per_pair; ++c) b.link(leaves[l], 21 + j * per_pair + c, spines[j], l * per_pair + c + 1);
    }
    if (s.sharp) {
        for (NodeId sw : switches) {
            const NodeId an = b.add_ca("Mellanox Technologies Aggregation Node", b.f.node(sw).guid | Guid{1} << 20, 0xcf08);
            b.link(sw, ports + 1, an, 1);
        }
    }
    for (int su = 0; su < s.units; ++su)
        for (int d = 0; d < per_unit; ++d) {
            const int dgx = su * per_unit + d + 1;
            if (su == s.units - 1 && d >= per_unit - s.service_slots) break;
            for (int r = 0; r < rails; ++r) {
                const Guid guid = kHostBase | static_cast<Guid>(dgx) << 8 | static_cast<Guid>(r) << 4;
                const NodeId hca = b.add_ca(numbered(s.dgx_prefix.c_str(), dgx, 3) + " mlx5_" + std::to_string(r), guid);
                b.link(leaves[su * rails + r], d + 1, hca, 1);
            }
        }
    for (int i = 0; i < shape.service_nodes; ++i) {
        const char* kind = i < 2 ? "ufm" : i < 4 ? "mgmt" : "stor";
        const int index = i < 2 ? i + 1 : i < 4 ? i - 1 : i - 3;
        const int slot = per_unit - s.service_slots + i / rails, r = i % rails;
        const NodeId n = b.add_ca(numbered(kind, index, 2) + " mlx5_0", kHostBase | 0xf00000 | static_cast<Guid>(i + 1) << 4);
        b.link(leaves[(s.units - 1) * rails + r], slot + 1, n, 1);
    }
    b.f.finalize();
    return std::move(b.f);
}

std::vector<SwitchLft> synth_lfts(const Fabric& f) {
    std::vector<NodeId> sws;
    std::vector<int> idx(f.size(), -1);
    for (NodeId n = 0; n < f.size(); ++n)
        if (f.node(n).type == NodeType::Switch) idx[n] = static_cast<int>(sws.size()), sws.push_back(n);
    // Destinations by the switch they hang off: (switch index, port there or 0 for the switch, LID).
    std::vector<std::vector<std::pair<int, uint32_t>>> by_sw(sws.size());
    uint32_t max_lid = 0;
    for (NodeId n = 0; n < f.size(); ++n) {
        const Node& node = f.node(n);
        for (const Port& p : node.ports) {
            if (!p.valid || p.lid == 0) continue;
            const int count = 1 << std::min<int>(p.lmc, 7);
            for (int i = 0; i < count; ++i) {
                const uint32_t lid = p.lid + static_cast<uint32_t>(i);
                max_lid = std::max(max_lid, lid);
                if (node.type == NodeType::Switch && p.num == 0) by_sw[idx[n]].push_back({0, lid});
                else if (node.type == NodeType::CA && p.linked() && idx[p.peer] >= 0)
                    by_sw[idx[p.peer]].push_back({p.peer_port, lid});
            }
        }
    }
    std::vector<std::vector<uint8_t>> table(sws.size(), std::vector<uint8_t>(max_lid + 1, kLftNoPath));
    std::vector<int> dist(sws.size()), queue;
    std::vector<int> closer;
    for (size_t root = 0; root < sws.size(); ++root) {
        if (by_sw[root].empty()) continue;
        std::fill(dist.begin(), dist.end(), -1);
        dist[root] = 0;
        queue.assign(1, static_cast<int>(root));
        for (size_t i = 0; i < queue.size(); ++i)
            for (const Port& p : f.node(sws[queue[i]]).ports)
                if (p.valid && p.linked() && idx[p.peer] >= 0 && dist[idx[p.peer]] < 0)
                    dist[idx[p.peer]] = dist[queue[i]] + 1, queue.push_back(idx[p.peer]);
        for (auto [port, lid] : by_sw[root]) table[root][lid] = static_cast<uint8_t>(port);
        for (size_t s = 0; s < sws.size(); ++s) {
            if (dist[s] <= 0) continue;
            closer.clear();
            for (const Port& p : f.node(sws[s]).ports)
                if (p.valid && p.num > 0 && p.linked() && idx[p.peer] >= 0 && dist[idx[p.peer]] == dist[s] - 1)
                    closer.push_back(p.num);
            for (auto [port, lid] : by_sw[root])
                table[s][lid] = static_cast<uint8_t>(closer[lid % closer.size()]);
        }
    }
    std::vector<SwitchLft> out;
    out.reserve(sws.size());
    for (size_t s = 0; s < sws.size(); ++s) out.emplace_back(f.node(sws[s]).guid, std::move(table[s]));
    return out;
}

void synth_reroute(const Fabric& f, std::vector<SwitchLft>& lfts, size_t every) {
    std::vector<uint32_t> ca_lids;
    int radix = 0;
    for (NodeId n = 0; n < f.size(); ++n) {
        const Node& node = f.node(n);
        if (node.type == NodeType::CA && node.port(1) && node.port(1)->lid) ca_lids.push_back(node.port(1)->lid);
        if (node.type == NodeType::Switch && !radix) radix = node.num_ports();
    }
    const int h = radix / 2;
    for (size_t i = 0; i < lfts.size(); i += 100) {
        std::vector<uint8_t> t = lfts[i].port_by_lid();
        auto up = [&](uint32_t lid) { return lid < t.size() && t[lid] > h && t[lid] != kLftNoPath; };
        auto move = [&](uint32_t lid) {
            if (up(lid)) t[lid] = static_cast<uint8_t>(h + 1 + (t[lid] - h) % h);
        };
        if (every == 0) {
            for (size_t k = 0; k < ca_lids.size(); ++k)  // the first CA LID this table sends up, from a spread start
                if (uint32_t lid = ca_lids[(i * 7919 + k) % ca_lids.size()]; up(lid)) {
                    move(lid);
                    break;
                }
        } else {
            for (size_t k = 0; k < ca_lids.size(); k += every) move(ca_lids[k]);
        }
        const uint64_t hash = lft_hash(t);
        lfts[i].set_port_by_lid(std::move(t), hash);
    }
}

NodeId synth_node(const Fabric& f, const std::string& name) {
    auto ids = f.find_by_name(name);
    return ids.empty() ? kNoNode : ids.front();
}

void remove_cable(Fabric& f, NodeId n, int port) {
    Port& p = must_port(f, n, port);
    if (!p.linked()) return;
    NodeId m = p.peer;
    int mp = p.peer_port;
    f.disconnect(n, port);
    set_down(p);
    set_down(must_port(f, m, mp));
}

void move_far_end(Fabric& f, NodeId n, int port, int to) {
    Port& p = must_port(f, n, port);
    if (!p.linked()) throw std::invalid_argument("move_far_end: port is not cabled");
    NodeId m = p.peer;
    int mp = p.peer_port;
    Port& dest = must_port(f, m, to);
    if (dest.linked()) throw std::invalid_argument("move_far_end: destination port is in use");
    Port old = must_port(f, m, mp);
    f.connect(n, port, m, to);
    Port& d = must_port(f, m, to);
    d.state = old.state;
    d.phys = old.phys;
    d.width_active = old.width_active;
    d.speed_active = old.speed_active;
    d.mtu_active = old.mtu_active;
    set_down(must_port(f, m, mp));
}

void cross_cables(Fabric& f, NodeId sw, int p1, int p2) {
    Port& a = must_port(f, sw, p1);
    Port& b = must_port(f, sw, p2);
    if (!a.linked() || !b.linked()) throw std::invalid_argument("cross_cables: both ports must be cabled");
    NodeId fa = a.peer, fb = b.peer;
    int pa = a.peer_port, pb = b.peer_port;
    f.disconnect(sw, p1);
    f.disconnect(sw, p2);
    f.connect(sw, p1, fb, pb);
    f.connect(sw, p2, fa, pa);
}

void set_link_rate(Fabric& f, NodeId n, int port, Rate r) {
    Port& p = must_port(f, n, port);
    if (!p.linked()) throw std::invalid_argument("set_link_rate: port is not cabled");
    Port& q = must_port(f, p.peer, p.peer_port);
    p.width_active = q.width_active = r.width;
    p.speed_active = q.speed_active = r.speed;
}

void set_link_mtu(Fabric& f, NodeId n, int port, int mtu) {
    Port& p = must_port(f, n, port);
    if (!p.linked()) throw std::invalid_argument("set_link_mtu: port is not cabled");
    Port& q = must_port(f, p.peer, p.peer_port);
    p.mtu_active = q.mtu_active = mtu;
}

NodeId add_host(Fabric& f, const std::string& name, Guid guid, NodeId sw, int port, Rate rate, int mtu) {
    if (f.find(guid)) throw std::invalid_argument("add_host: GUID already in the fabric");
    if (must_port(f, sw, port).linked()) throw std::invalid_argument("add_host: switch port is in use");
    Node n;
    n.type = NodeType::CA;
    n.guid = guid;
    n.description = name;
    NodeId id = f.add_node(std::move(n), 1);
    f.node(id).port(1)->guid = guid + 1;
    f.connect(sw, port, id, 1);
    FatTreeSpec s;
    s.rate = rate;
    s.mtu = mtu;
    set_up(*f.node(id).port(1), s);
    set_up(*f.node(sw).port(port), s);
    f.finalize();
    return id;
}

Fabric without_node(const Fabric& f, NodeId gone) {
    Fabric out;
    auto remap = [gone](NodeId id) { return id > gone ? id - 1 : id; };
    for (NodeId i = 0; i < f.size(); ++i) {
        if (i == gone) continue;
        Node n = f.node(i);
        std::vector<Port> ports = n.ports;
        NodeId id = out.add_node(n, n.num_ports());
        out.node(id).ports = std::move(ports);
        for (Port& p : out.node(id).ports) {
            if (!p.linked()) continue;
            if (p.peer == gone) {
                p.peer = kNoNode;
                p.peer_port = 0;
                set_down(p);
            } else {
                p.peer = remap(p.peer);
            }
        }
    }
    out.finalize();
    return out;
}

}  // namespace ibf
