// route tracing against ibtracert on a real OpenSM fabric, topology.conf and impact (route_report.h,
// slurm_topology.h, impact.h).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/hostlist.h"
#include "ibf/impact.h"
#include "ibf/job_paths.h"
#include "ibf/lft_dump.h"
#include "ibf/plan_fabric.h"
#include "ibf/plan_yaml.h"
#include "ibf/route_report.h"
#include "ibf/slurm_topology.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

std::string data(const std::string& name) {
    std::ifstream in(std::string(IBF_TEST_DATA) + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Ibsim {
    Fabric f = parse_dump(data("ibsim-2sw2sp-4ca-ibnetdiscover.txt"), "ibnd.txt");
    Analysis a = analyze(f);
    std::vector<SwitchLft> lfts = parse_lft_dump(data("ibsim-2sw2sp-4ca-dump_lfts.txt"), "lfts.txt");
    RouteEnd end(const std::string& what) {
        std::string error;
        auto e = resolve_route_end(f, a.names, what, error);
        EXPECT_TRUE(e) << error;
        return e.value_or(RouteEnd{});
    }
    // "leaf01[1>5] spine01[1>2] leaf02[5>1]" like ibtracert's hops.
    std::string hops(const RouteTrace& t) {
        std::string s;
        for (const RouteHop& h : t.hops) s += (s.empty() ? "" : " ") + a.names[h.node] + "[" + std::to_string(h.in_port) + ">" + std::to_string(h.out_port) + "]";
        return s;
    }
};

TEST(RouteTrace, MatchesIbtracertOnTheIbsimFabricBothWays) {
    // ibtracert 1 7 on this fabric: node01 -> leaf01[1] ->[5] spine01[1] ->[2] leaf02[5] ->[1] node03;
    // ibtracert 7 1: node03 -> leaf02[1] ->[5] spine01[2] ->[1] leaf01[5] ->[1] node01.
    Ibsim s;
    const RouteGraph g(s.f, s.lfts);
    const RouteEnd a = s.end("node01"), b = s.end("node03");
    EXPECT_EQ(a.lid, 1u);
    EXPECT_EQ(b.lid, 7u);
    const RouteTrace there = trace_route(g, a.node, a.port, b.lid, s.a.names);
    EXPECT_TRUE(there.arrived) << there.why;
    EXPECT_EQ(s.hops(there), "leaf01[1>5] spine01[1>2] leaf02[5>1]");
    const RouteTrace back = trace_route(g, b.node, b.port, a.lid, s.a.names);
    EXPECT_TRUE(back.arrived) << back.why;
    EXPECT_EQ(s.hops(back), "leaf02[1>5] spine01[2>1] leaf01[5>1]");
    const std::string text = render_route(s.f, s.a.names, there, {});
    EXPECT_NE(text.find("node01/1 -> node03/1 (LID 7): 4 cables\n"), std::string::npos) << text;
    EXPECT_NE(text.find("   3  spine01/2"), std::string::npos) << text;
}

TEST(RouteTrace, EndsByNameGuidOrLidAndClearErrors) {
    Ibsim s;
    EXPECT_EQ(s.end("7").node, s.end("node03").node);
    EXPECT_EQ(s.end("0x7").lid, 7u);
    EXPECT_EQ(s.end("0x0000000000100005").lid, 7u);  // node03's port GUID
    EXPECT_EQ(s.end("leaf02").port, 0);
    std::string error;
    EXPECT_FALSE(resolve_route_end(s.f, s.a.names, "nod03", error));
    EXPECT_EQ(error, "no node, port GUID or LID 'nod03' in the fabric");
}

TEST(RouteTrace, AMissingEntrySaysWhereTheRouteEnds) {
    Ibsim s;
    for (SwitchLft& t : s.lfts)
        if (t.switch_guid == 0x200002) t.edit([](std::vector<uint8_t>& b) { b[7] = kLftNoPath; });  // spine01
    const RouteGraph g(s.f, s.lfts);
    const RouteEnd a = s.end("node01");
    const RouteTrace t = trace_route(g, a.node, a.port, 7, s.a.names);
    EXPECT_FALSE(t.arrived);
    EXPECT_EQ(t.why, "spine01 has no LFT entry for LID 7");
    EXPECT_FALSE(route_clean(s.f, t, {}));
}

TEST(JobPaths, EveryPairsCablesAndTheAllToAllBound) {
    Ibsim s;
    const RouteGraph g(s.f, s.lfts);
    std::vector<NodeId> hosts;
    for (const char* h : {"node01", "node02", "node03"}) hosts.push_back(s.end(h).node);
    // node03's cable to leaf02 is flagged: it comes first whatever its load.
    LinkNotes notes;
    const NodeId n3 = s.end("node03").node;
    notes[{n3, 1}].issues.push_back("link_flapping");
    const JobPaths j = job_paths(g, s.a.names, hosts, notes);
    EXPECT_EQ(j.hosts, 3);
    EXPECT_EQ(j.pairs, 6);
    EXPECT_EQ(j.unrouted, 0);
    ASSERT_FALSE(j.links.empty());
    EXPECT_EQ(j.links[0].node, n3);
    EXPECT_EQ(j.links[0].pairs, 2);  // node03 sends to node01 and node02
    // node01 and node02 both reach node03 through leaf01's uplink: 2 pairs on 4xSDR (8 Gb/s data),
    // so each host gets at most 2 x 8 / 2 = 8 Gb/s all-to-all.
    EXPECT_DOUBLE_EQ(j.all_to_all_gbps, 8.0);
    EXPECT_EQ(j.links[j.bottleneck].pairs, 2);
}

TEST(SlurmTopology, TreeOfASyntheticTwoLevelFabric) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    const std::string conf = slurm_topology(f, analyze(f), {.source = "synth"});
    std::string want = "# Slurm topology.conf (topology/tree) by ibfabric from synth: 32 compute hosts, 12 switches\n";
    for (int l = 1; l <= 8; ++l) {
        char line[96];
        std::snprintf(line, sizeof line, "SwitchName=leaf%04d Nodes=node[%05d-%05d]\n", l, 4 * l - 3, 4 * l);
        want += line;
    }
    for (int s = 1; s <= 4; ++s) want += "SwitchName=spine000" + std::to_string(s) + " Switches=leaf[0001-0008]\n";
    EXPECT_EQ(conf, want);
}

TEST(SlurmTopology, BlocksAreThePodsOfAThreeLevelTree) {
    const Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40});
    EXPECT_EQ(slurm_topology(f, analyze(f), {.block = true}),
              "# Slurm topology.conf (topology/block) by ibfabric: 40 compute hosts, 3 blocks\n"
              "BlockName=block01 Nodes=node[00001-00016]\n"
              "BlockName=block02 Nodes=node[00017-00032]\n"
              "BlockName=block03 Nodes=node[00033-00040]\n");
}

TEST(SlurmTopology, EveryComputeHostOfACaptureIsUnderALeafOnce) {
    const Fabric f = parse_dump(data("ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt"), "sx.txt");
    const Analysis a = analyze(f);
    const std::string conf = slurm_topology(f, a);
    std::map<std::string, int> seen;
    std::istringstream in(conf);
    int switches = 0;
    std::string off_leaf;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("# compute hosts on no leaf switch", 0) == 0) off_leaf = line;
        if (line.rfind("SwitchName=", 0) != 0) continue;
        ++switches;
        const size_t at = line.find(" Nodes=");
        if (at == std::string::npos) {
            EXPECT_NE(line.find(" Switches="), std::string::npos) << line;
            continue;
        }
        for (const std::string& h : hostlist_expand(line.substr(at + 7))) ++seen[h];
    }
    EXPECT_GT(switches, 1);
    // tank1 and tank2 hang off the spine ib7: named in the comment, every other host under one leaf.
    EXPECT_EQ(off_leaf, "# compute hosts on no leaf switch, left out (Slurm's tree places nodes under leaves): "
                        "tank1 (on ib7) tank2 (on ib7)");
    EXPECT_EQ(seen.size(), a.compute_hosts.size() - 2);
    for (NodeId h : a.compute_hosts) {
        if (f.node(h).name.rfind("tank", 0) != 0) {
            EXPECT_EQ(seen[f.node(h).name], 1) << f.node(h).name;
        }
    }
}

Plan example_plan(const std::string& name) {
    std::ifstream in(std::string(IBF_SOURCE_DIR) + "/config/examples/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_plan_yaml(ss.str(), name);
}

TEST(PlanFabric, ThePlansNodesWithEveryCableUpAtItsRate) {
    const Plan plan = example_plan("fat-tree-2tier-324.yaml");
    const Fabric f = plan_fabric(plan);
    // The plan's header: 18 leaves x 18 hosts, 9 spines; 18 host cables and 18 uplinks per leaf.
    EXPECT_EQ(f.count(NodeType::Switch), 27u);
    EXPECT_EQ(f.count(NodeType::CA), 324u);
    EXPECT_EQ(f.link_count(), 18u * 18 + 18 * 18);
    for (const Link& l : f.links())
        for (auto [n, p] : {std::pair{l.a, l.pa}, std::pair{l.b, l.pb}}) {
            const Port& port = *f.node(n).port(p);
            ASSERT_EQ(port.state, PortState::Active);
            ASSERT_EQ(port.rate(), (Rate{Width::X4, Speed::EDR})) << f.node(n).name << "/" << int(p);
        }
    ASSERT_EQ(f.find_by_name("node001").size(), 1u);
    const Node& host = f.node(f.find_by_name("node001")[0]);
    EXPECT_EQ(host.description, "node001 mlx5_0");
    EXPECT_EQ(f.node(host.ports[1].peer).name, "leaf01");
    const Analysis a = analyze(f);
    EXPECT_EQ(a.levels(), 2);
    EXPECT_EQ(a.compute_hosts.size(), 324u);
    std::set<Guid> guids;
    for (const Node& n : f.nodes()) guids.insert(n.guid);
    EXPECT_EQ(guids.size(), f.size());  // made up where the plan pins none, never twice
}

TEST(PlanFabric, ACableThePlanCannotHaveIsAnErrorAtItsLine) {
    Plan plan;
    plan.source = "p.yaml";
    plan.nodes = {{.name = "leaf01", .type = NodeType::Switch, .num_ports = 4}, {.name = "node01", .hca = "mlx5_0"},
                  {.name = "node02"}};
    plan.links = {{.a = {0, 1}, .b = {1, 1}, .where = {"p.yaml", 7, 5}}, {.a = {0, 1}, .b = {2, 1}, .where = {"p.yaml", 8, 5}}};
    try {
        plan_fabric(plan);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "p.yaml:8:5: port leaf01/1 is cabled twice in the plan");
    }
    plan.links = {{.a = {0, 5}, .b = {1, 1}, .where = {"p.yaml", 9, 1}}};
    try {
        plan_fabric(plan);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "p.yaml:9:1: port leaf01/5 does not exist (the node has 4)");
    }
}

TEST(SlurmTopology, FromThePlanOfThe324HostTree) {
    const Fabric f = plan_fabric(example_plan("fat-tree-2tier-324.yaml"));
    // The plan's comments: node001..node018 on leaf01, node019.. on leaf02, ...; 2 cables from every
    // leaf to each of the 9 spines.
    std::string want = "# Slurm topology.conf (topology/tree) by ibfabric from plan: 324 compute hosts, 27 switches\n";
    char line[96];
    for (int l = 1; l <= 18; ++l) {
        std::snprintf(line, sizeof line, "SwitchName=leaf%02d Nodes=node[%03d-%03d]\n", l, 18 * l - 17, 18 * l);
        want += line;
    }
    for (int sp = 1; sp <= 9; ++sp) {
        std::snprintf(line, sizeof line, "SwitchName=spine%02d Switches=leaf[01-18]\n", sp);
        want += line;
    }
    EXPECT_EQ(slurm_topology(f, analyze(f), {.source = "plan"}), want);
}

TEST(SlurmTopology, ADualRailHostIsUnderBothOfItsLeavesAndCountedOnce) {
    // Rail 0 (mlx5_0) on leaf01-02, rail 1 (mlx5_1) on leaf03-04, two spines over all four leaves.
    const Plan plan = parse_plan_yaml(R"(version: 1
rate: 4xHDR
switches:
  leaf:
    names: leaf[01-04]
    ports: 8
    down: 1-4
    up: 5-6
    up_to: spine
  spine:
    names: spine[01-02]
    ports: 8
    down: 1-4
hosts:
  - {names: "gpu[01-08]", hca: mlx5_0, attach: "leaf[01-02]", per_switch: 4}
  - {names: "gpu[01-08]", hca: mlx5_1, attach: "leaf[03-04]", per_switch: 4}
)", "rails.yaml");
    const Fabric f = plan_fabric(plan);
    EXPECT_EQ(f.count(NodeType::CA), 16u);
    EXPECT_EQ(slurm_topology(f, analyze(f)),
              "# Slurm topology.conf (topology/tree) by ibfabric: 8 compute hosts, 6 switches\n"
              "SwitchName=leaf01 Nodes=gpu[01-04]\n"
              "SwitchName=leaf02 Nodes=gpu[05-08]\n"
              "SwitchName=leaf03 Nodes=gpu[01-04]\n"
              "SwitchName=leaf04 Nodes=gpu[05-08]\n"
              "SwitchName=spine01 Switches=leaf[01-04]\n"
              "SwitchName=spine02 Switches=leaf[01-04]\n");
    EXPECT_EQ(slurm_topology(f, analyze(f), {.block = true}),
              "# Slurm topology.conf (topology/block) by ibfabric: 8 compute hosts, 1 block\n"
              "BlockName=block01 Nodes=gpu[01-08]\n");
}

TEST(SlurmTopology, HostNamesGivenPerNodeWinAndOffLeafHostsAreListedOnce) {
    // small-plan.yaml: storage01's two adapters hang off spine01 and spine02.
    const Fabric f = plan_fabric(example_plan("small-plan.yaml"));
    const Analysis a = analyze(f);
    SlurmTopologyOptions opt;
    opt.host_names.assign(f.size(), "");
    opt.host_names[f.find_by_name("node01")[0]] = "login01";
    const std::string conf = slurm_topology(f, a, opt);
    EXPECT_NE(conf.find("\nSwitchName=leaf01 Nodes=login01,node02\n"), std::string::npos) << conf;
    EXPECT_NE(conf.find("\n# compute hosts on no leaf switch, left out (Slurm's tree places nodes under leaves): "
                        "storage01 (on spine01, spine02)\n"),
              std::string::npos)
        << conf;
    EXPECT_NE(conf.find(": 9 compute hosts, 6 switches\n"), std::string::npos) << conf;
}

ImpactTarget target(const Fabric& f, const std::string& what) {
    ImpactTarget t;
    std::string error;
    const Analysis a = analyze(f);
    EXPECT_TRUE(parse_impact_target(f, a, what, t, error)) << error;
    return t;
}

TEST(Impact, ASpineOfATwoLevelTreeCostsPathsAndUplinksButNoPair) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    const Impact im = impact(f, {target(f, "spine0001")});
    EXPECT_EQ(im.pairs, 32 * 31 / 2);
    EXPECT_EQ(im.unreachable, 0);
    EXPECT_EQ(im.fewer_paths, 32 * 31 / 2 - 8 * (4 * 3 / 2));  // every pair on two leaves: 4 -> 3 paths
    EXPECT_EQ(im.longer, 0);
    ASSERT_GE(im.tiers.size(), 1u);
    EXPECT_DOUBLE_EQ(im.tiers[0].up_gbps_before, 8 * 4 * 200.0);
    EXPECT_DOUBLE_EQ(im.tiers[0].up_gbps_after, 8 * 3 * 200.0);
    EXPECT_NEAR(im.tiers[0].oversub_max_after, 4.0 / 3.0, 1e-9);
    EXPECT_NE(render_impact(im).find("minimal up/down"), std::string::npos);
}

TEST(Impact, ALeafCutsItsHostsOffAndAPortOnlyThinsPaths) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    Impact im = impact(f, {target(f, "leaf0001")});
    EXPECT_EQ(im.hosts_cut_off.size(), 4u);
    EXPECT_EQ(im.unreachable, 4 * 28 + 4 * 3 / 2);
    EXPECT_EQ(impact_json(im)["hosts_cut_off"][0], "node00001/1");
    im = impact(f, {target(f, "leaf0001/5")});
    EXPECT_EQ(im.unreachable, 0);
    EXPECT_EQ(im.fewer_paths, 4 * 28);
    std::string error;
    ImpactTarget t;
    EXPECT_FALSE(parse_impact_target(f, analyze(f), "leaf0001/40", t, error));
    EXPECT_EQ(error, "leaf0001 has no port 40");
    EXPECT_FALSE(parse_impact_target(f, analyze(f), "spine9", t, error));
    EXPECT_EQ(error, "no node 'spine9' in the fabric");
}

}  // namespace
}  // namespace ibf
