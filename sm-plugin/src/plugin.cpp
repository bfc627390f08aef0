// libibfabric_osm.so: the OpenSM event plugin. OpenSM dlopen()s it for `event_plugin_name
// ibfabric_osm` and calls create() / report() / delete() through the exported `osm_event_plugin`.
// Threading model: docs/plugin.md. In short: report() runs on OpenSM's threads, copies at
// SUBNET_UP under osm->lock (shared), and hands off to the Sender's own thread; it never does I/O.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "ibf/osm_copy.h"
#include "ibf/osm_counters.h"
#include "ibf/osm_plugin_options.h"
#include "ibf/osm_sender.h"
#include "ibf/wire_auth.h"
#include "osm_headers.h"

#ifndef IBF_VERSION
#define IBF_VERSION "0.0.0"
#endif

namespace {

// The start of the plugin's "loaded" log line, kept whole in the library (also when stripped: the
// package test and `strings` find the version there; GCC would otherwise build it from immediates).
[[gnu::used]] constexpr char kLoadedLine[] = "loaded (ibfabric " IBF_VERSION ", ";

using namespace ibf;
using namespace ibf::osm;
using Clock = std::chrono::steady_clock;

int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The plugin's own `log=` option is the filter (Sender::log, below); what passes goes to OpenSM's
// log at INFO (errors at ERROR), because OpenSM's DEBUG level is far too verbose to turn on.
void osm_say(osm_opensm_t* osm, LogLevel l, const std::string& msg) {
    osm_log_level_t lvl = l == LogLevel::error ? OSM_LOG_ERROR : OSM_LOG_INFO;
    osm_log(&osm->log, lvl, "ibfabric_osm: %s%s\n", l == LogLevel::warn ? "WARNING: " : "", msg.c_str());
}

struct Plugin {
    osm_opensm_t* osm = nullptr;
    Options opts;
    std::atomic<uint64_t> seq{0};
    std::unique_ptr<Fanout> sender;  // one Sender (thread) per endpoint
    ibf::osm::LftCache lfts;         // sweeper thread only (take_snapshot): the last sweep's tables
    ibf::osm::LftMarks lft_marks;    // switches LFT_CHANGE named since the last snapshot (any thread)
    ibf::osm::SubnetCopy raw;        // sweeper thread only: the flat copy, its capacity reused each sweep
    // The opensm.conf settings of the Hello (sm_conf_drift): written on OpenSM's main thread in
    // create() and on the sweeper thread at SUBNET_UP, read by the senders' threads at each Hello.
    std::mutex conf_mu;
    SmConf conf;
    std::atomic<uint64_t> conf_gen{0};
};

// The opensm.conf settings that must agree across SM nodes, as OpenSM holds them now. Called on
// the thread that re-reads opensm.conf (the sweeper, at the start of a heavy sweep) or before
// any sweep, so the option strings are stable while read.
SmConf read_conf(const osm_subn_opt_t& opt) {
    SmConf conf;
    conf.routing_engine = opt.routing_engine_names ? opt.routing_engine_names : "";
    conf.root_guid_file = opt.root_guid_file ? opt.root_guid_file : "";
    conf.cn_guid_file = opt.cn_guid_file ? opt.cn_guid_file : "";
    conf.lmc = opt.lmc;
    conf.honor_guid2lid = opt.honor_guid2lid_file;
    conf.sm_key_digest = wire::sm_key_digest(cl_ntoh64(opt.sm_key));
    return conf;
}

// At each SUBNET_UP: OpenSM re-reads opensm.conf on SIGHUP (osm_subn_rescan_conf_files, in the
// heavy sweep that ends here); a change goes out as a fresh Hello at the next heartbeat.
void refresh_conf(Plugin* p) {
    SmConf now = read_conf(p->osm->subn.opt);
    std::lock_guard lk(p->conf_mu);
    if (now == p->conf) return;
    p->conf = std::move(now);
    ++p->conf_gen;
}

// The running OpenSM binary ("/usr/sbin/opensm"), "" when /proc cannot say: names the rebuild prefix.
std::string running_exe() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

void* plugin_create(osm_opensm_t* osm) {
    try {
        if (auto err = check_version(osm->osm_version, OSM_VERSION)) {
            osm_say(osm, LogLevel::error, "refusing to load: " + *err + "; rebuild the plugin against this OpenSM: " +
                                              rebuild_command(running_exe()));
            return nullptr;
        }
        auto parsed = parse_options(osm->subn.opt.event_plugin_options);
        if (auto* err = std::get_if<std::string>(&parsed)) {
            osm_say(osm, LogLevel::error, "refusing to load: " + *err);
            return nullptr;
        }
        auto p = std::make_unique<Plugin>();
        p->osm = osm;
        p->opts = std::get<Options>(parsed);
        if (!p->opts.key_file.empty()) {
            wire::KeyCheck k = wire::read_key_file(p->opts.key_file);
            if (!k.error.empty()) {
                osm_say(osm, LogLevel::error, "refusing to load: key_file=" + k.error);
                return nullptr;
            }
            p->opts.key = std::move(k.key);
        }
        Plugin* raw = p.get();
        SenderHooks hooks;
        raw->conf = read_conf(osm->subn.opt);  // main thread, before any sweep
        hooks.hello = [raw] {
            wire::Hello h{OSM_VERSION, IBF_VERSION, poll_self(raw->osm), static_cast<uint32_t>(::getpid())};
            std::lock_guard lk(raw->conf_mu);
            h.conf = raw->conf;
            return h;
        };
        hooks.hello_generation = [raw] { return raw->conf_gen.load(); };
        hooks.heartbeat = [raw] { return wire::Heartbeat{poll_self(raw->osm), raw->seq.load(), unix_ms()}; };
        hooks.log = [raw](LogLevel l, const std::string& m) { osm_say(raw->osm, l, m); };
        p->sender = std::make_unique<Fanout>(p->opts, hooks);
        p->sender->start();
        const bool any_tcp = std::any_of(p->opts.endpoints.begin(), p->opts.endpoints.end(),
                                         [](const Endpoint& e) { return e.tcp(); });
        osm_say(osm, LogLevel::info, std::string(kLoadedLine) + OSM_VERSION + "), sending to " +
                                         p->opts.endpoint() + ", event queue " + std::to_string(p->opts.queue) +
                                         " per endpoint" +
                                         (!any_tcp ? "" : p->opts.key.empty() ? ", TCP unauthenticated (no key_file)"
                                                                                : ", TCP authenticated with " + p->opts.key_file));
        return p.release();
    } catch (const std::exception& e) {
        osm_say(osm, LogLevel::error, std::string("refusing to load: ") + e.what());
    } catch (...) {
        osm_say(osm, LogLevel::error, "refusing to load: unknown error");
    }
    return nullptr;
}

void plugin_delete(void* data) {
    auto* p = static_cast<Plugin*>(data);
    if (!p) return;
    try {
        auto t0 = Clock::now();
        p->sender->stop();
        auto c = p->sender->total();
        osm_say(p->osm, LogLevel::info,
                "stopped in " +
                    std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()) +
                    " ms; snapshots taken " + std::to_string(c.snapshots_taken) + ", sent " +
                    std::to_string(c.snapshots_sent) + ", superseded " + std::to_string(c.snapshots_superseded) +
                    ", events dropped " + std::to_string(c.events_dropped));
    } catch (...) {
    }
    delete p;
}

// Under OpenSM's lock only the copy (nodes, ports, links and the LFTs that changed since the last
// sweep); names, indexes and the snapshot's LFT list are built after the lock is released, and
// the encoding happens on the senders' threads.
void take_snapshot(Plugin* p) {
    osm_opensm_t* osm = p->osm;
    auto snap = std::make_shared<Snapshot>();
    ibf::osm::SubnetCopy& raw = p->raw;
    ibf::osm::LftChanges changes;  // freed after the lock is released
    auto t0 = Clock::now();
    Clock::time_point t1;
    ibf::osm::LftRefresh lr;
    cl_plock_acquire(&osm->lock);
    try {
        ibf::osm::copy_subnet(osm, raw);
        t1 = Clock::now();
        if (p->opts.lft) {
            // Taken under the lock: every LFT_CHANGE reported before it (under OpenSM's exclusive
            // hold) is in this set, every later one goes to the next.
            changes = p->lft_marks.take();
            changes.sweep_error |= osm->subn.subnet_initialization_error != 0;
            changes.not_master |= osm->subn.sm_state != IB_SMINFO_STATE_MASTER;
            lr = p->lfts.refresh(osm, raw.lids, changes);
        }
    } catch (...) {
        cl_plock_release(&osm->lock);
        if (changes.tracked) p->lft_marks.note({.marks_lost = true});  // taken, not applied: all next time
        throw;
    }
    cl_plock_release(&osm->lock);
    auto t2 = Clock::now();
    ibf::osm::build_snapshot(raw, *snap);
    if (p->opts.lft) p->lfts.fill(*snap);
    auto us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(t2 - t0).count());
    auto lft_us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(t2 - t1).count());
    auto after_us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t2).count());
    snap->sweep_seq = ++p->seq;
    snap->taken_unix_ms = unix_ms();
    if (lr.audit_found && p->opts.log >= LogLevel::warn)
        osm_say(osm, LogLevel::warn, "snapshot " + std::to_string(snap->sweep_seq) + ": the rolling LFT audit found " +
                                         std::to_string(lr.audit_found) +
                                         " changed tables that no LFT_CHANGE named (copied now; docs/plugin.md, \"When the tables change\")");
    if (p->opts.log >= LogLevel::debug || (snap->initialization_error && p->opts.log >= LogLevel::info)) {
        size_t n = snap->fabric.size();
        osm_say(osm, LogLevel::info,
                "snapshot " + std::to_string(snap->sweep_seq) + ": " + std::to_string(n) + " nodes, " +
                    std::to_string(snap->fabric.link_count()) + " links, " + std::to_string(us) +
                    " us under the lock (" + std::to_string(n ? us * 1000 / n : 0) + " ns/node" +
                    (p->opts.lft ? ", LFTs of " + std::to_string(snap->lfts.size()) + " switches (" + std::to_string(lr.compared) +
                                       " compared: " + (lr.scope == ibf::osm::LftWhy::Reuse ? std::to_string(changes.marked.size()) + " marked"
                                                                                              : std::string(to_string(lr.scope))) +
                                       ", " + std::to_string(lr.copied) + " changed) " + std::to_string(lft_us) + " us" : "") +
                    "; " + std::to_string(after_us) + " us after the lock), routing engine " + (snap->routing_engine.empty() ? "?" : snap->routing_engine) + " (configured: " +
                    (snap->routing_engine_configured.empty() ? "default" : snap->routing_engine_configured) + ")" +
                    (snap->initialization_error ? ", sweep reported a subnet initialization error" : ""));
    }
    p->sender->submit_snapshot(std::move(snap), us);
}

// On the sweeper thread (HEAVY_SWEEP_START, UCAST_ROUTING_DONE; no lock held): the facts that
// make LFT_CHANGE unreliable until the next snapshot (docs/plugin.md, "When the tables change").
// Word-sized fields written by OpenSM under its lock or by this same thread: relaxed loads.
void note_sweep_facts(Plugin* p) {
    if (!p->opts.lft) return;
    osm_subn_t& subn = p->osm->subn;
    ibf::osm::LftChanges f;
    f.first_master_sweep = __atomic_load_n(&subn.first_time_master_sweep, __ATOMIC_RELAXED) != 0;
    f.not_master = __atomic_load_n(&subn.sm_state, __ATOMIC_RELAXED) != IB_SMINFO_STATE_MASTER;
    f.sweep_error = __atomic_load_n(&subn.subnet_initialization_error, __ATOMIC_RELAXED) != 0;
    if (f.first_master_sweep || f.not_master || f.sweep_error) p->lft_marks.note(f);
}

// Runs on OpenSM's sweeper and MAD dispatcher threads, sometimes with osm->lock held (TRAP,
// LFT_CHANGE): only SUBNET_UP (lock not held by the caller) may take the lock.
void plugin_report(void* data, osm_epi_event_id_t id, void* ev) {
    auto* p = static_cast<Plugin*>(data);
    if (!p) return;
    try {
        switch (id) {
            case OSM_EVENT_ID_SUBNET_UP:
                refresh_conf(p);
                take_snapshot(p);
                break;
            case OSM_EVENT_ID_TRAP: {
                wire::Event e;
                e.kind = wire::EventKind::Trap;
                e.unix_ms = unix_ms();
                e.state = poll_self(p->osm).state;
                if (const auto* ntc = static_cast<const ib_mad_notice_attr_t*>(ev)) {
                    if (ib_notice_is_generic(ntc)) e.trap_num = cl_ntoh16(ntc->g_or_v.generic.trap_num);
                    e.lid = cl_ntoh16(ntc->issuer_lid);
                }
                e.text = "trap " + std::to_string(e.trap_num) + " from lid " + std::to_string(e.lid);
                p->sender->submit_event(std::move(e));
                break;
            }
            case OSM_EVENT_ID_STATE_CHANGE: {
                if (p->opts.lft) p->lft_marks.note({.not_master = true});
                wire::Event e{wire::EventKind::StateChange, unix_ms(), 0, 0, poll_self(p->osm).state, {}};
                e.text = "SM state " + std::string(to_string(e.state));
                p->sender->submit_event(std::move(e));
                break;
            }
            case OSM_EVENT_ID_HEAVY_SWEEP_START:
                note_sweep_facts(p);
                p->sender->submit_event({wire::EventKind::SweepStart, unix_ms(), 0, 0, poll_self(p->osm).state, "heavy sweep start"});
                break;
            case OSM_EVENT_ID_UCAST_ROUTING_DONE:
                note_sweep_facts(p);
                p->sender->submit_event({wire::EventKind::RoutingDone, unix_ms(), 0, 0, poll_self(p->osm).state, "unicast routing done"});
                break;
            // perfmgr (perfmgr TRUE): several MAD receive threads at once, no lock held. A copy of
            // integers and one bounded push per endpoint; the sender threads sum and send them.
            case OSM_EVENT_ID_PORT_ERRORS:
                if (ev && p->opts.counter_queue) p->sender->submit_counters(counter_event(*static_cast<const osm_epi_pe_event_t*>(ev)));
                break;
            case OSM_EVENT_ID_PORT_DATA_COUNTERS:
                if (ev && p->opts.counter_queue) p->sender->submit_counters(counter_event(*static_cast<const osm_epi_dc_event_t*>(ev)));
                break;
            // MAD dispatcher, caller holds osm->lock EXCLUSIVELY: never take it here. The switch
            // object is alive while that lock is held; only its node GUID is kept (an
            // osm_switch_t address could be freed and reused by the next sweep's drop manager).
            case OSM_EVENT_ID_LFT_CHANGE:
                if (ev && p->opts.lft) {
                    const auto* c = static_cast<const osm_epi_lft_change_event_t*>(ev);
                    if (c->p_sw && c->p_sw->p_node) p->lft_marks.mark(cl_ntoh64(c->p_sw->p_node->node_info.node_guid));
                }
                break;
            default:  // PORT_SELECT, SA DB dump: not used
                break;
        }
    } catch (const std::exception& e) {
        osm_say(p->osm, LogLevel::error, std::string("report: ") + e.what());
    } catch (...) {
    }
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) osm_event_plugin_t osm_event_plugin = {
    OSM_VERSION, plugin_create, plugin_delete, plugin_report};
}
