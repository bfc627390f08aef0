// The route validation live after every sweep (pipeline/live_routes.h): what run_check publishes
// first, what finish_routes() adds after it, the cache over unchanged sweeps; and the routes that
// serve the same pure code on the live fabric: GET /api/v1/route, /api/v1/impact and
// /api/v1/topology/slurm.
#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "ibf/daemon_fixture.h"
#include "ibf/analysis.h"
#include "ibf/api.h"
#include "ibf/controller_state.h"
#include "ibf/impact.h"
#include "ibf/job_paths.h"
#include "ibf/pipeline.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"
#include "ibf/route_graph.h"
#include "ibf/slurm_topology.h"
#include "ibf/synth.h"

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

constexpr int64_t kNow = 1764468000000;

ApiResponse get(const ControllerState& st, const std::string& target, ApiContext ctx = {}) {
    ctx.state = &st;
    ctx.now_ms = kNow;
    return handle_api({.method = "GET", .target = target, .authorization = "", .body = ""}, ctx);
}

int count_kind(const json& findings, const std::string& kind) {
    return findings.at("summary").value(kind, 0);
}

// A 2-level radix-8 tree with minimum-hop tables: leaf0002/5 -- spine0001 runs at 1xHDR (a
// rate_outlier), and spine0002 has no entry for node00001's LID (a black hole).
struct Lab {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    std::vector<SwitchLft> lfts;
    ControllerState st;
    std::shared_ptr<LiveRouteCheck> routes = std::make_shared<LiveRouteCheck>();
    std::shared_ptr<CheckMemo> memo;  // null: every sweep afresh
    uint64_t seq = 0;
    std::optional<WorkItem> last;     // the last sweep's item

    Lab() {
        set_link_rate(f, synth_node(f, "leaf0002"), 5, {Width::X1, Speed::HDR});
        lfts = synth_lfts(f);
        set_spine2(f.node(synth_node(f, "node00001")).port(1)->lid, kLftNoPath);
        EXPECT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master), 10));
    }
    SwitchLft& spine2() {
        for (SwitchLft& t : lfts)
            if (t.switch_guid == f.node(synth_node(f, "spine0002")).guid) return t;
        throw std::logic_error("no spine0002 table");
    }
    void set_spine2(uint32_t lid, uint8_t port) {
        spine2().edit([&](std::vector<uint8_t>& t) { t[lid] = port; });
    }
    // One master sweep through run_check; publishes its result.
    CheckRun sweep() {
        Snapshot s = snapshot(f, kMasterGuid, SmState::Master, ++seq);
        s.lfts = lfts;
        auto job = st.on_snapshot(1, std::move(s), 20 + static_cast<int64_t>(seq));
        EXPECT_TRUE(job);
        WorkItem w{.job = *job};
        w.routes = routes;
        w.memo = memo;
        last = w;
        CheckRun run = run_check(w);
        EXPECT_TRUE(run.result) << run.error;
        EXPECT_TRUE(st.publish(*run.result, 30 + static_cast<int64_t>(seq)));
        return run;
    }
    bool finish(const CheckRun& run) {
        if (!run.routes_pending) {
            ADD_FAILURE() << "sweep " << seq << " left no route validation to finish";
            return false;
        }
        RoutesDone d = finish_routes(*run.routes_pending, *routes);
        return st.publish_routes(d.generation, std::move(d.findings), std::move(d.findings_json), std::move(d.routes_json), 40);
    }
    json findings() const { return json::parse(get(st, "/api/v1/findings").body); }
};

}  // namespace

TEST(LiveRoutes, ChangedInputsAreValidatedAfterTheCablingFindingsArePublished) {
    Lab lab;
    const CheckRun first = lab.sweep();
    ASSERT_TRUE(first.routes_pending) << "the first sweep's tables must be validated in full";
    // Published first: no route finding yet, the validation still running.
    EXPECT_EQ(count_kind(lab.findings(), "route_unreachable"), 0);
    EXPECT_EQ(lab.st.routes_json()["state"], "validating");

    ASSERT_TRUE(lab.finish(first));
    const json j = lab.findings();
    EXPECT_EQ(count_kind(j, "route_unreachable"), 1) << j.dump(1);
    EXPECT_EQ(count_kind(j, "route_via_degraded_link"), 1) << j.dump(1);
    const json a = json::parse(get(lab.st, "/api/v1/analysis").body);
    EXPECT_EQ(a["route_validation"]["state"], "done");
    EXPECT_EQ(a["route_validation"]["sweep_seq"], 1);
    EXPECT_GT(a["route_validation"]["pairs"].get<long>(), 0);
    const std::string m = get(lab.st, "/metrics").body;
    EXPECT_NE(m.find("ibfabric_findings{kind=\"route_unreachable\",severity=\"error\",role=\"active\"} 1"), std::string::npos)
        << m.substr(0, 4000);
}

TEST(LiveRoutes, AnUnchangedSweepReusesTheLastValidationAndAChangedOneKeepsItUntilDone) {
    Lab lab;
    ASSERT_TRUE(lab.finish(lab.sweep()));
    ASSERT_EQ(lab.routes->validations(), 1u);
    EXPECT_EQ(lab.st.routes_json()["mode"], "full");

    const CheckRun same = lab.sweep();  // the same tables, cabling and rates
    EXPECT_FALSE(same.routes_pending);
    EXPECT_EQ(lab.routes->validations(), 1u);
    EXPECT_EQ(count_kind(lab.findings(), "route_unreachable"), 1);  // in the first publish already
    EXPECT_EQ(lab.st.routes_json()["cached"], true);
    EXPECT_EQ(lab.st.routes_json()["state"], "done");

    // The black hole mended: validated again; until then the last route findings stay.
    for (const SwitchLft& t : synth_lfts(lab.f))
        if (t.switch_guid == lab.f.node(synth_node(lab.f, "spine0002")).guid) lab.spine2() = t;
    const CheckRun mended = lab.sweep();
    ASSERT_TRUE(mended.routes_pending);
    EXPECT_EQ(count_kind(lab.findings(), "route_unreachable"), 1);
    EXPECT_EQ(lab.st.routes_json()["state"], "validating");
    EXPECT_EQ(lab.st.routes_json()["sweep_seq"], 1);  // whose findings these are
    ASSERT_TRUE(lab.finish(mended));
    EXPECT_EQ(count_kind(lab.findings(), "route_unreachable"), 0);
    EXPECT_EQ(count_kind(lab.findings(), "route_via_degraded_link"), 1);
    EXPECT_EQ(lab.routes->validations(), 2u);
    // Only spine0002's table changed, in one entry: that destination LID alone was walked again.
    EXPECT_EQ(lab.st.routes_json()["mode"], "incremental");
    EXPECT_EQ(lab.st.routes_json()["revalidated_lids"], 1);
}

// The same item without the memo: what a sweep would give afresh.
CheckResult afresh(WorkItem w) {
    w.memo = nullptr;
    CheckRun run = run_check(w);
    EXPECT_TRUE(run.result) << run.error;
    return run.result ? *run.result : CheckResult{};
}

// Issue 18 item 3: a sweep that changed nothing reuses the last check, analysis and link table
// (the same findings, JSON and rows as afresh); any change of the fabric (one link's rate) or of
// a table is checked again; a newer route validation gives a new link table (its findings mark
// links) on top of the reused check.
TEST(CheckMemo, AnUnchangedSweepReusesTheCheckAndAnalysisAndAnyChangeIsCheckedAgain) {
    Lab lab;
    lab.memo = std::make_shared<CheckMemo>();
    const CheckRun first = lab.sweep();
    EXPECT_FALSE(first.reused);
    ASSERT_TRUE(lab.finish(first));

    const CheckRun same = lab.sweep();  // a new snapshot, equal in every field
    EXPECT_TRUE(same.reused);
    EXPECT_EQ(lab.memo->reused, 1u);
    EXPECT_EQ(same.result->analysis, first.result->analysis);  // the same object
    EXPECT_EQ(same.result->snapshot->sweep_seq, 2u);
    const CheckResult fresh = afresh(*lab.last);
    EXPECT_EQ(same.result->findings_json, fresh.findings_json);
    EXPECT_EQ(same.result->findings.size(), fresh.findings.size());
    EXPECT_EQ(count_kind(same.result->findings_json, "route_unreachable"), 1);  // the validation's, appended
    EXPECT_EQ(same.result->analysis->summary_json, fresh.analysis->summary_json);
    ASSERT_TRUE(same.result->links && fresh.links);
    EXPECT_NE(same.result->links, first.result->links);  // a validation came since: its findings mark links
    ASSERT_EQ(same.result->links->rows.size(), fresh.links->rows.size());
    for (size_t i = 0; i < fresh.links->rows.size(); ++i)
        EXPECT_EQ(same.result->links->rows[i].deviates, fresh.links->rows[i].deviates) << i;
    const CheckRun again = lab.sweep();
    EXPECT_TRUE(again.reused);
    EXPECT_EQ(again.result->links, same.result->links);  // nothing new at all: the same rows
    EXPECT_FALSE(again.routes_pending);  // the route key kept with the memo: still the last validation's

    // A link the state now knows to flap, on the same fabric: the check is reused, the routes are
    // not (a new degraded link changes the route key).
    {
        WorkItem w = *lab.last;
        Finding flap;
        flap.kind = FindingKind::link_flapping;
        flap.a = {"node00003", lab.f.node(synth_node(lab.f, "node00003")).guid, 1};
        w.link_health = {flap};
        const CheckRun flapping = run_check(w);
        EXPECT_TRUE(flapping.reused);
        ASSERT_TRUE(flapping.routes_pending);
        const RoutesDone d = finish_routes(*flapping.routes_pending, *lab.routes);
        int over_node3 = 0;
        for (const Finding& fd : d.findings) over_node3 += fd.kind == FindingKind::route_via_degraded_link && fd.a.name == "node00003";
        EXPECT_EQ(over_node3, 1);
    }

    // One link's rate changes: checked again, and the finding says the new rate.
    set_link_rate(lab.f, synth_node(lab.f, "leaf0003"), 6, {Width::X1, Speed::HDR});
    const CheckRun rate = lab.sweep();
    EXPECT_FALSE(rate.reused);
    EXPECT_EQ(rate.result->findings_json, afresh(*lab.last).findings_json);
    EXPECT_NE(rate.result->analysis, first.result->analysis);
    EXPECT_EQ(lab.sweep().reused, true);

    // One table entry changes: checked again (the LFT balance reads the tables).
    lab.set_spine2(lab.f.node(synth_node(lab.f, "node00002")).port(1)->lid, kLftNoPath);
    for (SwitchLft& t : lab.lfts) t.hash = 0;
    EXPECT_FALSE(lab.sweep().reused);

    // The same fabric under a new plan object: checked again.
    WorkItem w = *lab.last;
    w.plan = std::make_shared<const Plan>();
    EXPECT_FALSE(run_check(w).reused);
}

// What a memoised run gave equals what a fresh run_check gives: findings, analysis, link rows.
void expect_same_as_afresh(const CheckRun& run, const WorkItem& w, const std::string& what) {
    SCOPED_TRACE(what);
    ASSERT_TRUE(run.result);
    const CheckResult fresh = afresh(w);
    EXPECT_EQ(run.result->findings_json, fresh.findings_json);
    EXPECT_EQ(run.result->findings.size(), fresh.findings.size());
    ASSERT_TRUE(run.result->analysis && fresh.analysis);
    EXPECT_EQ(run.result->analysis->summary_json, fresh.analysis->summary_json);
    EXPECT_EQ(run.result->analysis->switches_json(), fresh.analysis->switches_json());
    EXPECT_EQ(findings_to_json(run.result->analysis->findings), findings_to_json(fresh.analysis->findings));
    EXPECT_EQ(run.result->analysis->lft_imbalanced, fresh.analysis->lft_imbalanced);
    EXPECT_EQ(run.result->analysis->names, fresh.analysis->names);
    EXPECT_EQ(run.result->analysis->tier_of, fresh.analysis->tier_of);
    ASSERT_TRUE(run.result->links && fresh.links);
    ASSERT_EQ(run.result->links->rows.size(), fresh.links->rows.size());
    for (size_t i = 0; i < fresh.links->rows.size(); ++i)
        EXPECT_EQ(run.result->links->rows[i].deviates, fresh.links->rows[i].deviates) << i;
}

// Issue 18 item 3: a sweep in which only tables changed (a re-route) reuses the check and the
// fabric's analysis and counts the LFT balance again for the changed tables only; what it gives
// is exactly what a fresh run_check gives — over random re-routes, one that makes a leaf's
// uplinks unbalanced (a new lft_imbalance) and one that mends it. A changed fabric (a rate, a
// link) is checked in full.
TEST(CheckMemo, AReRouteReusesTheFabricsCheckAndRecountsOnlyTheChangedTables) {
    Lab lab;
    lab.memo = std::make_shared<CheckMemo>();
    set_link_rate(lab.f, synth_node(lab.f, "leaf0002"), 5, {Width::X4, Speed::HDR});  // no rate fault: spreads matter
    ASSERT_TRUE(lab.finish(lab.sweep()));
    std::vector<uint32_t> host_lids;
    for (NodeId n = 0; n < lab.f.size(); ++n)
        if (lab.f.node(n).type == NodeType::CA) host_lids.push_back(lab.f.node(n).port(1)->lid);
    const std::vector<SwitchLft> original = lab.lfts;

    std::mt19937 rng(18);
    for (int round = 0; round < 8; ++round) {
        // 1-3 tables, 1-6 host entries each, sent to a random port (some are broken routes).
        const int tables = 1 + static_cast<int>(rng() % 3);
        for (int t = 0; t < tables; ++t) {
            SwitchLft& table = lab.lfts[rng() % lab.lfts.size()];
            const int entries = 1 + static_cast<int>(rng() % 6);
            table.edit([&](std::vector<uint8_t>& v) {
                for (int e = 0; e < entries; ++e) v[host_lids[rng() % host_lids.size()]] = static_cast<uint8_t>(1 + rng() % 8);
            });
        }
        const CheckRun run = lab.sweep();
        EXPECT_TRUE(run.tables_only) << "round " << round;
        EXPECT_FALSE(run.reused);
        expect_same_as_afresh(run, *lab.last, "random re-route " + std::to_string(round));
        if (round % 2 && run.routes_pending) lab.finish(run);  // a newer validation: its findings mark links
    }

    // leaf0001 sends every other leaf's host up port 5: unbalanced (a new lft_imbalance).
    lab.lfts = original;
    lab.sweep();
    const int balanced = lab.memo->base.analysis->lft_imbalanced;
    const NodeId leaf1 = synth_node(lab.f, "leaf0001");
    for (SwitchLft& t : lab.lfts)
        if (t.switch_guid == lab.f.node(leaf1).guid)
            t.edit([&](std::vector<uint8_t>& v) {
                for (uint32_t lid : host_lids)
                    if (v[lid] > 4) v[lid] = 5;
            });
    const CheckRun unbalanced = lab.sweep();
    EXPECT_TRUE(unbalanced.tables_only);
    EXPECT_EQ(unbalanced.result->analysis->lft_imbalanced, balanced + 1);
    expect_same_as_afresh(unbalanced, *lab.last, "leaf0001 unbalanced");
    lab.lfts = original;  // mended
    const CheckRun mended = lab.sweep();
    EXPECT_TRUE(mended.tables_only);
    EXPECT_EQ(mended.result->analysis->lft_imbalanced, balanced);
    expect_same_as_afresh(mended, *lab.last, "leaf0001 mended");
    EXPECT_TRUE(lab.sweep().reused);  // nothing changed since: the whole check reused

    // A changed fabric is checked in full: a rate, then a link.
    set_link_rate(lab.f, synth_node(lab.f, "leaf0003"), 6, {Width::X1, Speed::HDR});
    const CheckRun rate = lab.sweep();
    EXPECT_FALSE(rate.tables_only);
    EXPECT_FALSE(rate.reused);
    expect_same_as_afresh(rate, *lab.last, "a rate changed");
    lab.f.disconnect(synth_node(lab.f, "leaf0004"), 5);
    const CheckRun link = lab.sweep();
    EXPECT_FALSE(link.tables_only);
    EXPECT_FALSE(link.reused);
    expect_same_as_afresh(link, *lab.last, "a link gone");
    // Re-routes after it reuse the new fabric's check.
    lab.lfts[0].edit([&](std::vector<uint8_t>& v) { v[host_lids[0]] = 6; });
    const CheckRun after = lab.sweep();
    EXPECT_TRUE(after.tables_only);
    expect_same_as_afresh(after, *lab.last, "a re-route after the link");
}

// The link table depends on the fabric and on the ends its findings name: a re-route and a new
// validation whose findings name the same ends keep the same table (it was built again after every
// validation: 0.35-0.59 s CPU at 48k LIDs, on the first unchanged sweep after each).
TEST(CheckMemo, ALinkTableIsKeptWhileTheFindingsNameTheSameEnds) {
    Lab lab;
    lab.memo = std::make_shared<CheckMemo>();
    ASSERT_TRUE(lab.finish(lab.sweep()));
    const CheckRun marked = lab.sweep();  // the validation's findings now mark their links
    ASSERT_TRUE(marked.result && marked.result->links);
    // leaf0003 swaps the uplinks of node00005 and node00006 (both on leaf0002): the same balance,
    // the same black hole and the same degraded link named.
    const NodeId leaf3 = synth_node(lab.f, "leaf0003");
    const uint32_t l5 = lab.f.node(synth_node(lab.f, "node00005")).port(1)->lid;
    const uint32_t l6 = lab.f.node(synth_node(lab.f, "node00006")).port(1)->lid;
    for (SwitchLft& t : lab.lfts)
        if (t.switch_guid == lab.f.node(leaf3).guid) {
            ASSERT_NE(t.port_by_lid()[l5], t.port_by_lid()[l6]);
            t.edit([&](std::vector<uint8_t>& v) { std::swap(v[l5], v[l6]); });
        }
    const CheckRun reroute = lab.sweep();
    EXPECT_TRUE(reroute.tables_only);
    expect_same_as_afresh(reroute, *lab.last, "uplinks swapped");
    EXPECT_EQ(reroute.result->links, marked.result->links);
    ASSERT_TRUE(reroute.routes_pending);
    ASSERT_TRUE(lab.finish(reroute));  // a newer validation, its findings on the same ends
    const CheckRun after = lab.sweep();
    EXPECT_TRUE(after.reused);
    expect_same_as_afresh(after, *lab.last, "after the validation");
    EXPECT_EQ(after.result->links, marked.result->links);
}

TEST(LiveRoutes, AValidationOvertakenByANewerSweepIsNotPublished) {
    Lab lab;
    const CheckRun first = lab.sweep();
    ASSERT_TRUE(first.routes_pending);
    lab.set_spine2(1, kLftNoPath);  // a change: the second sweep is validated too
    const CheckRun second = lab.sweep();
    ASSERT_TRUE(second.routes_pending);
    EXPECT_FALSE(lab.finish(first));  // sweep 1's validation came after sweep 2's result
    EXPECT_EQ(lab.st.routes_json()["state"], "validating");
    EXPECT_TRUE(lab.finish(second));
    EXPECT_EQ(lab.st.routes_json()["sweep_seq"], 2);
}

TEST(LiveRoutes, RoutesOverAFlappingLinkTheStateKnowsAreDegradedRoutes) {
    Lab lab;
    set_link_rate(lab.f, synth_node(lab.f, "leaf0002"), 5, {Width::X4, Speed::HDR});  // no rate fault this time
    Snapshot s = snapshot(lab.f, kMasterGuid, SmState::Master, 1);
    s.lfts = lab.lfts;
    auto job = lab.st.on_snapshot(1, std::move(s), 21);
    ASSERT_TRUE(job);
    WorkItem w{.job = *job};
    w.routes = lab.routes;
    const NodeId h = synth_node(lab.f, "node00003");
    Finding flap;
    flap.kind = FindingKind::link_flapping;
    flap.a = {"node00003", lab.f.node(h).guid, 1};
    w.link_health = {flap};
    CheckRun run = run_check(w);
    ASSERT_TRUE(run.routes_pending);
    const RoutesDone d = finish_routes(*run.routes_pending, *lab.routes);
    int degraded = 0;
    for (const Finding& fd : d.findings)
        if (fd.kind == FindingKind::route_via_degraded_link) {
            ++degraded;
            EXPECT_EQ(fd.a.name, "node00003") << fd.message;
        }
    EXPECT_EQ(degraded, 1);
}

TEST(RouteApi, TracesBothWaysOnTheLiveTablesWithTheCablesFindings) {
    Lab lab;
    EXPECT_EQ(get(lab.st, "/api/v1/route?src=node00001&dst=node00016").status, 404);  // no fabric yet
    lab.finish(lab.sweep());
    // node00005 (under leaf0002) to node00016 (leaf0004): up over leaf0002's uplinks.
    ApiResponse r = get(lab.st, "/api/v1/route?src=node00005&dst=node00016");
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = json::parse(r.body);
    const RouteGraph g(lab.f, lab.lfts);
    const Analysis an = analyze(lab.f);
    const NodeId s = synth_node(lab.f, "node00005"), d = synth_node(lab.f, "node00016");
    const RouteTrace there = trace_route(g, s, 1, lab.f.node(d).port(1)->lid, an.names);
    EXPECT_EQ(j["forward"]["arrived"], true);
    EXPECT_EQ(j["reverse"]["arrived"], true);
    ASSERT_EQ(j["forward"]["cables"].size(), there.hops.size() + 1);  // host->leaf, ..., leaf->host
    for (size_t i = 0; i < there.hops.size(); ++i)
        EXPECT_EQ(j["forward"]["cables"][i + 1]["from"], an.names[there.hops[i].node] + "/" + std::to_string(there.hops[i].out_port));
    // The unreachable LID: spine0002 has no entry for node00001.
    bool via_spine2 = false;
    for (int k = 2; k <= 16 && !via_spine2; ++k) {
        const json t = json::parse(get(lab.st, "/api/v1/route?src=node" + std::string(k < 10 ? "0000" : "000") +
                                                   std::to_string(k) + "&dst=node00001").body);
        if (!t["forward"]["arrived"].get<bool>()) {
            via_spine2 = true;
            EXPECT_NE(t["forward"]["why"].get<std::string>().find("spine0002"), std::string::npos) << t.dump(1);
            EXPECT_EQ(t["clean"], false);
        }
    }
    EXPECT_TRUE(via_spine2) << "some host's route to node00001 goes over spine0002";
    EXPECT_EQ(get(lab.st, "/api/v1/route?src=node00001").status, 400);
    EXPECT_EQ(get(lab.st, "/api/v1/route?src=nosuch&dst=node00001").status, 400);
    EXPECT_EQ(get(lab.st, "/api/v1/route?src=1&dst=2&hops=1").status, 400);
}

// `ibfabric hosts --url`: the same pure job_paths on the live tables, with the published findings.
TEST(HostsApi, TheJobsCablesOnTheLiveTablesWithTheCablesFindings) {
    Lab lab;
    EXPECT_EQ(get(lab.st, "/api/v1/hosts?nodes=node[00001-00008]").status, 404);  // no fabric yet
    lab.finish(lab.sweep());
    ApiResponse r = get(lab.st, "/api/v1/hosts?nodes=node%5B00001-00008%5D,node00016");
    ASSERT_EQ(r.status, 200) << r.body;
    json j = json::parse(r.body);
    EXPECT_EQ(j["sweep_seq"], 1);
    j.erase("sweep_seq");
    std::string error;
    const auto hosts = job_hosts(lab.f, "node[00001-00008],node00016", error);
    ASSERT_TRUE(hosts) << error;
    EXPECT_EQ(hosts->size(), 9u);
    const Analysis an = analyze(lab.f);
    const JobPaths want = job_paths(RouteGraph(lab.f, lab.lfts), an.names, *hosts, {});
    EXPECT_EQ(j["hosts"], 9);
    EXPECT_EQ(j["pairs"], 72);
    EXPECT_EQ(j["unrouted"], want.unrouted);  // spine0002 has no entry for node00001
    EXPECT_GT(want.unrouted, 0);
    EXPECT_EQ(j["links"].size(), want.links.size());
    // leaf0002/5 runs at 1x: a published finding, so its cable has issues and comes first.
    ASSERT_FALSE(j["links"].empty());
    bool degraded = false;
    for (const json& l : j["links"])
        if ((l["from"] == "leaf0002/5" || l["to"] == "leaf0002/5") && !l["issues"].empty()) degraded = true;
    EXPECT_TRUE(degraded) << j.dump(1);
    EXPECT_FALSE(j["links"][0]["issues"].empty()) << j.dump(1);
    // The text is rendered from this same object.
    EXPECT_EQ(render_job_paths(j).substr(0, 40), render_job_paths(lab.f, an.names, want).substr(0, 40));
    EXPECT_EQ(get(lab.st, "/api/v1/hosts").status, 400);
    ApiResponse missing = get(lab.st, "/api/v1/hosts?nodes=node[00001-00040]");
    EXPECT_EQ(missing.status, 400);
    EXPECT_NE(missing.body.find("no host 'node00033' in the fabric"), std::string::npos) << missing.body;
    EXPECT_EQ(get(lab.st, "/api/v1/hosts?nodes=node[1-").status, 400);
    EXPECT_EQ(get(lab.st, "/api/v1/hosts?nodes=node00001&x=1").status, 400);
}

TEST(ImpactApi, TheSamePureImpactOnTheLiveFabric) {
    Lab lab;
    EXPECT_EQ(get(lab.st, "/api/v1/impact?node=spine0001").status, 404);
    lab.sweep();
    ApiResponse r = get(lab.st, "/api/v1/impact?node=spine0001");
    ASSERT_EQ(r.status, 200) << r.body;
    json j = json::parse(r.body);
    EXPECT_EQ(j["sweep_seq"], 1);
    j.erase("sweep_seq");
    const Impact want = impact(lab.f, {{synth_node(lab.f, "spine0001"), 0}});
    EXPECT_EQ(j, impact_json(want));
    EXPECT_EQ(j["unreachable"], 0);
    EXPECT_LT(j["tiers"][0]["up_gbps"]["after"].get<double>(), j["tiers"][0]["up_gbps"]["before"].get<double>());
    // One port, two ways of saying it; several targets.
    const json p1 = json::parse(get(lab.st, "/api/v1/impact?node=leaf0001&port=5").body);
    const json p2 = json::parse(get(lab.st, "/api/v1/impact?node=leaf0001/5").body);
    EXPECT_EQ(p1, p2);
    EXPECT_EQ(p1["removed"].size(), 1u);
    const json both = json::parse(get(lab.st, "/api/v1/impact?node=spine0001,spine0002").body);
    EXPECT_EQ(both["removed"].size(), 2u);
    EXPECT_EQ(both["unreachable"], 0);  // two spines are left
    EXPECT_GT(both["fewer_paths"].get<long>(), p1["fewer_paths"].get<long>());
    EXPECT_EQ(get(lab.st, "/api/v1/impact").status, 400);
    EXPECT_EQ(get(lab.st, "/api/v1/impact?node=nosuch").status, 400);
    EXPECT_EQ(get(lab.st, "/api/v1/impact?node=a,b&port=3").status, 400);
    EXPECT_EQ(get(lab.st, "/api/v1/impact?node=leaf0001&port=99").status, 400);
}

TEST(SlurmTopologyApi, TheLiveFabricNamedAsTheCheckNamesIt) {
    Lab lab;
    EXPECT_EQ(get(lab.st, "/api/v1/topology/slurm").status, 404);
    lab.sweep();
    ApiResponse r = get(lab.st, "/api/v1/topology/slurm");
    ASSERT_EQ(r.status, 200) << r.body;
    json j = json::parse(r.body);
    EXPECT_EQ(j["form"], "tree");
    EXPECT_EQ(j["sweep_seq"], 1);
    const std::string conf = j["conf"];
    // synth_fat_tree radix 8: 8 leaves of 4 hosts, 4 spines over all 8 leaves.
    EXPECT_EQ(conf.substr(0, conf.find('\n')),
              "# Slurm topology.conf (topology/tree) by ibfabric from ibfabricd, sweep 1: 32 compute hosts, 12 switches");
    EXPECT_NE(conf.find("\nSwitchName=leaf0001 Nodes=node[00001-00004]\n"), std::string::npos) << conf;
    EXPECT_NE(conf.find("\nSwitchName=leaf0008 Nodes=node[00029-00032]\n"), std::string::npos) << conf;
    EXPECT_NE(conf.find("\nSwitchName=spine0004 Switches=leaf[0001-0008]\n"), std::string::npos) << conf;
    j = json::parse(get(lab.st, "/api/v1/topology/slurm?block=1").body);
    EXPECT_EQ(j["form"], "block");
    EXPECT_EQ(j["conf"].get<std::string>().substr(j["conf"].get<std::string>().find('\n') + 1),
              "BlockName=block01 Nodes=node[00001-00032]\n");

    // The node-name-map renames node00002 gpu02; the plan (GUIDs pinned) calls node00001 login01
    // and spine0001 core-a, node00002 what its description says: plan names first, as the check's.
    ApiContext named;
    auto names = std::make_shared<std::unordered_map<Guid, std::string>>();
    (*names)[lab.f.node(synth_node(lab.f, "node00002")).guid] = "gpu02";
    named.names = names;
    Plan plan = plan_from_fabric(lab.f, "plan.yaml");
    for (PlannedNode& n : plan.nodes) {
        if (n.name == "node00001") n.name = "login01";
        if (n.name == "spine0001") n.name = "core-a";
    }
    named.plan = std::make_shared<const Plan>(plan);
    j = json::parse(get(lab.st, "/api/v1/topology/slurm", named).body);
    const std::string renamed = j["conf"];
    EXPECT_NE(renamed.find("\nSwitchName=leaf0001 Nodes=login01,node[00002-00004]\n"), std::string::npos) << renamed;
    EXPECT_NE(renamed.find("\nSwitchName=core-a Switches=leaf[0001-0008]\n"), std::string::npos) << renamed;
    named.plan = nullptr;  // the map alone
    j = json::parse(get(lab.st, "/api/v1/topology/slurm", named).body);
    EXPECT_NE(j["conf"].get<std::string>().find("\nSwitchName=leaf0001 Nodes=gpu02,node[00001,00003-00004]\n"), std::string::npos)
        << j["conf"];

    EXPECT_EQ(get(lab.st, "/api/v1/topology/slurm?block=2").status, 400);
    EXPECT_EQ(get(lab.st, "/api/v1/topology/slurm?form=tree").status, 400);
}
