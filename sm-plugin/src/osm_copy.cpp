// The subnet walk. copy_subnet() and LftCache::refresh() run on OpenSM's sweeper thread under
// osm->lock: a copy of OpenSM's fields and nothing more; build_snapshot() and LftCache::fill()
// turn the copy into a Snapshot after the lock is released.
#include "ibf/osm_copy.h"

#include <algorithm>
#include <cstring>

#include "osm_headers.h"

namespace ibf::osm {

namespace {

SpeedMask base_speeds(unsigned bits) {  // PortInfo LinkSpeed{Supported,Enabled}: 1 SDR, 2 DDR, 4 QDR
    SpeedMask m = 0;
    if (bits & 1) m |= speed_bit(Speed::SDR);
    if (bits & 2) m |= speed_bit(Speed::DDR);
    if (bits & 4) m |= speed_bit(Speed::QDR);
    return m;
}

SpeedMask ext_speeds_mask(unsigned bits) {  // LinkSpeedExt*: 1 FDR, 2 EDR, 4 HDR, 8 NDR
    SpeedMask m = 0;
    if (bits & 1) m |= speed_bit(Speed::FDR);
    if (bits & 2) m |= speed_bit(Speed::EDR);
    if (bits & 4) m |= speed_bit(Speed::HDR);
    if (bits & 8) m |= speed_bit(Speed::NDR);
    return m;
}

Speed active_speed(const ib_port_info_t& pi, const ib_mlnx_ext_port_info_t& epi, bool ext) {
    if (ext) {
        switch (ib_port_info_get_link_speed_ext_active(&pi)) {
            case 1: return Speed::FDR;
            case 2: return Speed::EDR;
            case 4: return Speed::HDR;
            case 8: return Speed::NDR;
            default: break;
        }
    }
    if (epi.link_speed_active & kMlnxFdr10Bit) return Speed::FDR10;
    switch (ib_port_info_get_link_speed_active(&pi)) {
        case 1: return Speed::SDR;
        case 2: return Speed::DDR;
        case 4: return Speed::QDR;
        default: return Speed::Unknown;
    }
}

Width active_width(uint8_t w) {
    switch (w) {
        case 1: case 2: case 4: case 8: case 16: return static_cast<Width>(w);
        default: return Width::Unknown;
    }
}

SmState sm_state(unsigned s) { return s <= 3 ? static_cast<SmState>(s) : SmState::NotActive; }

}  // namespace

namespace {

// One port from OpenSM's PortInfo and the three Mellanox ExtendedPortInfo speed bytes.
void fill_port(const ib_port_info_t& pi, uint8_t mlnx_sup, uint8_t mlnx_en, uint8_t mlnx_act, Guid guid, uint8_t num,
               bool ext, bool is_switch, Port& out) {
    ib_mlnx_ext_port_info_t epi{};
    epi.link_speed_supported = mlnx_sup;
    epi.link_speed_enabled = mlnx_en;
    epi.link_speed_active = mlnx_act;
    out.guid = guid;
    if (!is_switch || num == 0) {
        out.lid = cl_ntoh16(pi.base_lid);
        out.lmc = ib_port_info_get_lmc(&pi);
        out.master_sm_lid = cl_ntoh16(pi.master_sm_base_lid);
    }
    unsigned st = ib_port_info_get_port_state(&pi);
    out.state = st <= 4 ? static_cast<PortState>(st) : PortState::Unknown;
    unsigned ph = ib_port_info_get_port_phys_state(&pi);
    out.phys = ph <= 7 ? static_cast<PhysState>(ph) : PhysState::Unknown;
    out.width_active = active_width(pi.link_width_active);
    out.width_enabled = pi.link_width_enabled & 0x1F;
    out.width_supported = pi.link_width_supported & 0x1F;
    out.speed_active = active_speed(pi, epi, ext);
    out.speed_supported = base_speeds(ib_port_info_get_link_speed_sup(&pi));
    out.speed_enabled = base_speeds(ib_port_info_get_link_speed_enabled(&pi));
    if (ext) {
        out.speed_supported |= ext_speeds_mask(ib_port_info_get_link_speed_ext_sup(&pi));
        unsigned en = ib_port_info_get_link_speed_ext_enabled(&pi);
        if (en < IB_LINK_SPEED_EXT_DISABLE) out.speed_enabled |= ext_speeds_mask(en);
    }
    if (epi.link_speed_supported & kMlnxFdr10Bit) out.speed_supported |= speed_bit(Speed::FDR10);
    if (epi.link_speed_enabled & kMlnxFdr10Bit) out.speed_enabled |= speed_bit(Speed::FDR10);
    out.mtu_cap = mtu_from_code(ib_port_info_get_mtu_cap(&pi));
    out.mtu_active = mtu_from_code(ib_port_info_get_neighbor_mtu(&pi));
}

static_assert(sizeof(ib_port_info_t) == sizeof(SubnetCopy::RawPort::port_info));
static_assert(sizeof(ib_node_desc_t) == sizeof(SubnetCopy::RawNode::desc));

void copy_head(osm_opensm_t* osm, Snapshot& out) {
    osm_subn_t& subn = osm->subn;
    out.osm_version = osm->osm_version ? osm->osm_version : OSM_VERSION;
    out.self.port_guid = cl_ntoh64(subn.sm_port_guid);
    out.self.lid = cl_ntoh16(subn.sm_base_lid);
    out.self.priority = subn.opt.sm_priority;
    out.self.state = sm_state(subn.sm_state);
    out.self.act_count = static_cast<uint32_t>(osm->stats.qp0_mads_sent);
    out.master_lid = cl_ntoh16(subn.master_sm_base_lid);
    out.initialization_error = subn.subnet_initialization_error;
    out.routing_engine = osm->routing_engine_used && osm->routing_engine_used->name ? osm->routing_engine_used->name : "";
    // As configured (opensm.conf routing_engine, comma-separated list tried in order); NULL means
    // OpenSM's default, minhop.
    out.routing_engine_configured = subn.opt.routing_engine_names ? subn.opt.routing_engine_names : "";
    for (cl_map_item_t* it = cl_qmap_head(&subn.sm_guid_tbl); it != cl_qmap_end(&subn.sm_guid_tbl); it = cl_qmap_next(it)) {
        const auto* rsm = reinterpret_cast<const osm_remote_sm_t*>(it);
        SmInfo s;
        s.port_guid = cl_ntoh64(rsm->smi.guid);
        s.priority = ib_sminfo_get_priority(&rsm->smi);
        s.state = sm_state(ib_sminfo_get_state(&rsm->smi));
        s.act_count = cl_ntoh32(rsm->smi.act_count);
        cl_map_item_t* pit = cl_qmap_get(&subn.port_guid_tbl, rsm->smi.guid);
        if (pit != cl_qmap_end(&subn.port_guid_tbl))
            s.lid = cl_ntoh16(osm_port_get_base_lid(reinterpret_cast<const osm_port_t*>(pit)));
        out.other_sms.push_back(s);
    }
}

}  // namespace

void copy_port(const osm_physp_t* p, bool ext, bool is_switch, Port& out) {
    const ib_mlnx_ext_port_info_t& epi = p->ext_port_info;
    fill_port(p->port_info, epi.link_speed_supported, epi.link_speed_enabled, epi.link_speed_active, cl_ntoh64(p->port_guid),
              p->port_num, ext, is_switch, out);
}

// Under the lock: the node table once, each valid port's PortInfo copied as it is. The remote end
// is kept as the remote node's GUID and port number, resolved after the lock.
void copy_subnet(osm_opensm_t* osm, SubnetCopy& out) {
    out.head = Snapshot{};
    out.nodes.clear();  // capacity kept: no page faults under the lock for a SubnetCopy reused
    out.ports.clear();
    copy_head(osm, out.head);
    osm_subn_t& subn = osm->subn;
    cl_qmap_t* nodes = &subn.node_guid_tbl;
    out.nodes.reserve(cl_qmap_count(nodes));
    out.ports.reserve(cl_qmap_count(nodes) * 8);
    size_t max_lid = 0;
    for (cl_map_item_t* it = cl_qmap_head(nodes); it != cl_qmap_end(nodes); it = cl_qmap_next(it)) {
        auto* n = reinterpret_cast<osm_node_t*>(it);
        SubnetCopy::RawNode& rn = out.nodes.emplace_back();
        rn.type = osm_node_get_type(n);
        rn.guid = cl_ntoh64(n->node_info.node_guid);
        rn.system_guid = cl_ntoh64(n->node_info.sys_guid);
        rn.vendor_id = static_cast<uint16_t>(cl_ntoh32(ib_node_info_get_vendor_id(&n->node_info)));
        rn.device_id = cl_ntoh16(n->node_info.device_id);
        std::memcpy(rn.desc, n->node_desc.description, sizeof rn.desc);
        if (n->print_desc && std::strncmp(n->print_desc, rn.desc, sizeof rn.desc) != 0) rn.print_desc = n->print_desc;  // node-name-map
        rn.num_physp = osm_node_get_num_physp(n);
        rn.physp_base = reinterpret_cast<uintptr_t>(&n->physp_table[0]);
        rn.first_port = static_cast<uint32_t>(out.ports.size());
        const bool is_switch = rn.type == IB_NODE_TYPE_SWITCH;
        if (is_switch) {
            const osm_physp_t* p0 = osm_node_get_physp_ptr(n, 0);
            rn.ext_speeds = p0 && (p0->port_info.capability_mask & IB_PORT_CAP_HAS_EXT_SPEEDS);
        }
        for (int pn = is_switch ? 0 : 1; pn < rn.num_physp; ++pn) {
            const osm_physp_t* p = osm_node_get_physp_ptr(n, static_cast<uint32_t>(pn));
            if (!p || !osm_physp_is_valid(p)) continue;
            SubnetCopy::RawPort& rp = out.ports.emplace_back();
            rp.num = static_cast<uint8_t>(pn);
            rp.guid = cl_ntoh64(p->port_guid);
            std::memcpy(rp.port_info, &p->port_info, sizeof rp.port_info);
            rp.mlnx_speed[0] = p->ext_port_info.link_speed_supported;
            rp.mlnx_speed[1] = p->ext_port_info.link_speed_enabled;
            rp.mlnx_speed[2] = p->ext_port_info.link_speed_active;
            rp.remote = reinterpret_cast<uintptr_t>(p->p_remote_physp);
            if (!is_switch || pn == 0) {
                const size_t lid = cl_ntoh16(p->port_info.base_lid);
                if (lid) max_lid = std::max<size_t>(max_lid, lid + (size_t{1} << ib_port_info_get_lmc(&p->port_info)) - 1);
            }
        }
        rn.ports = static_cast<uint32_t>(out.ports.size()) - rn.first_port;
    }
    // subn.max_ucast_lid_ho is OpenSM's capacity (30720 on ibsim), far above the LIDs in use.
    if (max_lid == 0 || max_lid > subn.max_ucast_lid_ho) max_lid = subn.max_ucast_lid_ho;
    out.lids = max_lid + 1;
    out.physp_size = sizeof(osm_physp_t);
}

namespace {

NodeId add_raw_node(const SubnetCopy& raw, const SubnetCopy::RawNode& rn, Fabric& f) {
    Node node;
    node.type = rn.type <= 3 ? static_cast<NodeType>(rn.type) : NodeType::Unknown;
    node.guid = rn.guid;
    node.system_guid = rn.system_guid;
    node.description.assign(rn.desc, strnlen(rn.desc, sizeof rn.desc));
    node.name = rn.print_desc;
    node.vendor_id = rn.vendor_id;
    node.device_id = rn.device_id;
    const bool is_switch = node.type == NodeType::Switch;
    NodeId id = f.add_node(std::move(node), rn.num_physp - 1);
    Node& dst = f.node(id);
    for (Port& p : dst.ports) p.valid = false;
    uint16_t first_lid = 0, linked_lid = 0;
    for (uint32_t i = rn.first_port; i < rn.first_port + rn.ports; ++i) {
        const SubnetCopy::RawPort& rp = raw.ports[i];
        ib_port_info_t pi;
        std::memcpy(&pi, rp.port_info, sizeof pi);
        const bool ext = is_switch ? rn.ext_speeds : (pi.capability_mask & IB_PORT_CAP_HAS_EXT_SPEEDS) != 0;
        Port& port = dst.ports[rp.num];
        port.valid = true;
        fill_port(pi, rp.mlnx_speed[0], rp.mlnx_speed[1], rp.mlnx_speed[2], rp.guid, rp.num, ext, is_switch, port);
        if (!first_lid) first_lid = port.lid;
        if (!linked_lid && rp.remote) linked_lid = port.lid;
    }
    dst.lid = is_switch ? dst.ports[0].lid : (linked_lid ? linked_lid : first_lid);
    return id;
}

}  // namespace

void build_snapshot(const SubnetCopy& raw, Snapshot& out) {
    out.osm_version = raw.head.osm_version;
    out.self = raw.head.self;
    out.master_lid = raw.head.master_lid;
    out.initialization_error = raw.head.initialization_error;
    out.routing_engine = raw.head.routing_engine;
    out.routing_engine_configured = raw.head.routing_engine_configured;
    out.other_sms = raw.head.other_sms;
    Fabric& f = out.fabric;
    std::vector<NodeId> ids(raw.nodes.size(), kNoNode);
    for (size_t i = 0; i < raw.nodes.size(); ++i)
        if (!f.find(raw.nodes[i].guid)) ids[i] = add_raw_node(raw, raw.nodes[i], f);  // a GUID twice cannot happen in OpenSM's table
    // Remote physp addresses -> (node, port): the nodes' physp tables sorted by address.
    std::vector<std::pair<uintptr_t, size_t>> by_addr;
    by_addr.reserve(raw.nodes.size());
    for (size_t i = 0; i < raw.nodes.size(); ++i) by_addr.emplace_back(raw.nodes[i].physp_base, i);
    std::sort(by_addr.begin(), by_addr.end());
    auto resolve = [&](uintptr_t a) -> std::pair<NodeId, int> {
        auto it = std::upper_bound(by_addr.begin(), by_addr.end(), std::pair(a, SIZE_MAX));
        if (it == by_addr.begin() || raw.physp_size == 0) return {kNoNode, 0};
        --it;
        const SubnetCopy::RawNode& rn = raw.nodes[it->second];
        const uintptr_t off = a - it->first;
        if (off % raw.physp_size || off / raw.physp_size >= rn.num_physp) return {kNoNode, 0};
        return {ids[it->second], static_cast<int>(off / raw.physp_size)};
    };
    for (size_t i = 0; i < raw.nodes.size(); ++i) {
        const SubnetCopy::RawNode& rn = raw.nodes[i];
        const NodeId id = ids[i];
        if (id == kNoNode) continue;
        for (uint32_t k = rn.first_port; k < rn.first_port + rn.ports; ++k) {
            const SubnetCopy::RawPort& rp = raw.ports[k];
            if (!rp.remote || rp.num == 0) continue;
            const auto [rid, rpn] = resolve(rp.remote);
            if (rid == kNoNode || rpn == 0) continue;
            const int pn = rp.num;
            if (std::pair(id, pn) >= std::pair(rid, rpn)) continue;  // each cable once
            const Node& rnode = f.node(rid);
            if (!rnode.port(rpn)) continue;
            f.connect(id, pn, rid, rpn);
        }
    }
    f.finalize();
}

namespace {

// Up to the highest LID in use: from the ports already copied (base LID + 2^LMC - 1).
// subn.max_ucast_lid_ho is OpenSM's capacity (30720 on ibsim), far above it.
size_t lids_in_use(const osm_subn_t& subn, const Snapshot& snap) {
    size_t max_lid = 0;
    for (const Node& n : snap.fabric.nodes())
        for (const Port& p : n.ports)
            if (p.valid && p.lid) max_lid = std::max<size_t>(max_lid, p.lid + (size_t{1} << std::min<int>(p.lmc, 7)) - 1);
    if (max_lid == 0 || max_lid > subn.max_ucast_lid_ho) max_lid = subn.max_ucast_lid_ho;
    return max_lid + 1;
}

// Does `have` hold exactly the switch's table over `lids` LIDs (LID 0 and entries beyond the
// switch's own max LID or allocation count as kLftNoPath)?
bool same_table(const std::vector<uint8_t>& have, const uint8_t* lft, size_t n, size_t lids) {
    if (have.size() != lids) return false;
    if (have[0] != kLftNoPath) return false;
    if (n > 1 && std::memcmp(have.data() + 1, lft + 1, n - 1) != 0) return false;
    for (size_t l = std::max<size_t>(n, 1); l < lids; ++l)
        if (have[l] != kLftNoPath) return false;
    return true;
}

}  // namespace

LftRefresh LftCache::refresh(osm_opensm_t* osm, size_t lids, const LftChanges& changes) {
    osm_subn_t& subn = osm->subn;
    if (lids == 0) lids = static_cast<size_t>(subn.max_ucast_lid_ho) + 1;
    const LftSweepFacts sweep{.tracked = changes.tracked,
                              .first_refresh = refreshes_ == 0,
                              .lids_changed = refreshes_ > 0 && lids != lids_,
                              .first_master_sweep = changes.first_master_sweep,
                              .not_master = changes.not_master,
                              .sweep_error = changes.sweep_error,
                              .marks_lost = changes.marks_lost};
    LftRefresh r;
    r.scope = lft_compare_why(sweep, {.have_copy = true});  // a sweep-wide reason, or Reuse
    const uint32_t audit = static_cast<uint32_t>(refreshes_ % kLftAuditPeriod);
    cl_qmap_t* sws = &subn.sw_guid_tbl;
    std::vector<Entry>& order = spare_;
    order.clear();
    order.reserve(cl_qmap_count(sws));
    size_t j = 0;  // the merge cursor in order_ (both in sw_guid_tbl's ascending key order)
    uint32_t idx = 0;
    for (cl_map_item_t* it = cl_qmap_head(sws); it != cl_qmap_end(sws); it = cl_qmap_next(it), ++idx) {
        const auto* sw = reinterpret_cast<const osm_switch_t*>(it);
        if (!sw->p_node) continue;
        const uint8_t* lft = sw->lft ? sw->lft : sw->new_lft;
        // Entries up to the switch's own max LID and within the allocated table; LID 0 is never routed.
        const size_t n = lft ? std::min<size_t>({lids, static_cast<size_t>(sw->max_lid_ho) + 1, sw->lft_size}) : 0;
        Entry e{cl_qmap_key(it), cl_ntoh64(sw->p_node->node_info.node_guid), sw->num_ports,
                reinterpret_cast<uintptr_t>(sw), reinterpret_cast<uintptr_t>(sw->lft), n, nullptr};
        while (j < order_.size() && order_[j].key < e.key) ++j;
        const Entry* old = j < order_.size() && order_[j].key == e.key && order_[j].guid == e.guid ? &order_[j] : nullptr;
        const LftSwitchFacts facts{.marked = !changes.marked.empty() && changes.marked.count(e.guid) != 0,
                                   .have_copy = old != nullptr,
                                   .same_object = old && old->sw == e.sw && old->lft == e.lft,
                                   .same_length = old && old->n == n,
                                   .lft_null = sw->lft == nullptr,
                                   .audit_slot = idx % kLftAuditPeriod == audit};
        const LftWhy why = lft_compare_why(sweep, facts);
        if (why == LftWhy::Reuse) {
            e.raw = old->raw;  // nothing says it changed: OpenSM's table not read
            e.sent = old->sent;
        } else {
            ++r.compared;
            if (old && same_table(*old->raw, lft, n, lids)) {
                e.raw = old->raw;
                e.sent = old->sent;
            } else {
                e.raw = std::make_shared<std::vector<uint8_t>>(lids, kLftNoPath);
                if (n > 1) std::memcpy(e.raw->data() + 1, lft + 1, n - 1);
                ++r.copied;
                if (why == LftWhy::Audit) ++r.audit_found;
            }
        }
        order.push_back(std::move(e));
    }
    std::swap(order_, spare_);  // switches gone from the subnet are forgotten here
    spare_.clear();
    lids_ = lids;
    ++refreshes_;
    r.switches = order_.size();
    return r;
}

namespace {
// `raw` as it may be sent: itself, or a copy with egress ports beyond the switch's replaced by
// kLftNoPath (never send what the decoder must refuse).
std::shared_ptr<const std::vector<uint8_t>> sendable(const std::shared_ptr<std::vector<uint8_t>>& raw, uint8_t num_ports) {
    const auto bad = [num_ports](uint8_t p) { return p != kLftNoPath && p >= num_ports; };
    if (std::none_of(raw->begin(), raw->end(), bad)) return raw;
    auto fixed = std::make_shared<std::vector<uint8_t>>(*raw);
    std::replace_if(fixed->begin(), fixed->end(), bad, kLftNoPath);
    return fixed;
}
}  // namespace

void LftCache::fill(Snapshot& snap) const {
    snap.lfts.reserve(snap.lfts.size() + order_.size());
    for (const Entry& e : order_) {
        if (!e.sent) e.sent = sendable(e.raw, e.num_ports);
        snap.lfts.emplace_back(e.guid, e.sent);
    }
}

void copy_lfts(osm_opensm_t* osm, Snapshot& out) {
    LftCache c;
    c.refresh(osm, lids_in_use(osm->subn, out));
    c.fill(out);
}

SmInfo poll_self(osm_opensm_t* osm) {
    osm_subn_t& subn = osm->subn;
    SmInfo s;
    s.port_guid = cl_ntoh64(__atomic_load_n(&subn.sm_port_guid, __ATOMIC_RELAXED));
    s.lid = cl_ntoh16(__atomic_load_n(&subn.sm_base_lid, __ATOMIC_RELAXED));
    s.priority = __atomic_load_n(&subn.opt.sm_priority, __ATOMIC_RELAXED);
    s.state = sm_state(__atomic_load_n(&subn.sm_state, __ATOMIC_RELAXED));
    s.act_count = static_cast<uint32_t>(osm->stats.qp0_mads_sent);
    return s;
}

}  // namespace ibf::osm
