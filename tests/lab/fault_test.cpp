#include <gtest/gtest.h>

#include "ibf/error.h"
#include "ibf/lab_fault.h"
#include "plan_fixture.h"

using namespace ibf;

namespace {

const NetPort* at(const Net& n, const std::string& node, int port) {
    auto i = n.find(node);
    if (!i) return nullptr;
    auto it = n.nodes[*i].ports.find(port);
    return it == n.nodes[*i].ports.end() ? nullptr : &it->second;
}

// Every link appears at both ends with identical masks (what ibsim requires).
void expect_consistent(const Net& n) {
    for (const auto& node : n.nodes)
        for (const auto& [p, np] : node.ports) {
            const NetPort* back = at(n, np.peer, np.peer_port);
            ASSERT_NE(back, nullptr) << node.id << "/" << p;
            EXPECT_EQ(back->peer, node.id);
            EXPECT_EQ(back->peer_port, p);
            EXPECT_EQ(back->masks, np.masks) << node.id << "/" << p;
        }
}

}  // namespace

TEST(LabFault, ParsesEveryKind) {
    Fault m = parse_fault("move:leaf01/19:leaf01/30");
    EXPECT_EQ(m.kind, Fault::Kind::Move);
    EXPECT_EQ(m.a, (PortRef{"leaf01", 19}));
    EXPECT_EQ(m.b, (PortRef{"leaf01", 30}));
    Fault c = parse_fault("cross:leaf01/19,leaf01/20");
    EXPECT_EQ(c.kind, Fault::Kind::Cross);
    EXPECT_EQ(c.b, (PortRef{"leaf01", 20}));
    EXPECT_EQ(parse_fault("remove:leaf02/21").kind, Fault::Kind::Remove);
    Fault w = parse_fault("width:leaf03/22=1x");
    EXPECT_EQ(w.kind, Fault::Kind::Width);
    EXPECT_EQ(w.width, Width::X1);
    Fault s = parse_fault("speed:leaf03/23=SDR");
    EXPECT_EQ(s.speed, Speed::SDR);
    // A node id with a space (a host with its HCA name) is fine.
    EXPECT_EQ(parse_fault("remove:node002 mlx5_0/1").a, (PortRef{"node002 mlx5_0", 1}));
    for (auto spec : {"move:leaf01/19:leaf01/30", "cross:leaf01/19,leaf01/20", "remove:leaf02/21",
                      "width:leaf03/22=1x", "speed:leaf03/23=SDR"})
        EXPECT_EQ(to_string(parse_fault(spec)), spec);
}

TEST(LabFault, BadSpecsAreInputErrors) {
    for (auto spec : {"", "move", "explode:leaf01/1", "move:leaf01/19", "move:leaf01/19:leaf01/19", "cross:leaf01/19",
                      "remove:leaf01", "remove:leaf01/x", "remove:leaf01/0", "remove:/3", "width:leaf01/1=3x",
                      "width:leaf01/1", "speed:leaf01/1=NDR", "speed:leaf01/1=fast"}) {
        EXPECT_THROW(parse_fault(spec), InputError) << spec;
    }
    try {
        parse_fault("speed:leaf01/1=NDR");
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "--fault");
        EXPECT_NE(e.message().find("SDR, DDR"), std::string::npos);
    }
}

TEST(LabFault, MoveCableToAFreePort) {
    Net n = net_from_plan(test::small_plan());
    apply_fault(n, parse_fault("move:leaf01/19:leaf01/30"));
    EXPECT_EQ(at(n, "leaf01", 19), nullptr);
    ASSERT_NE(at(n, "leaf01", 30), nullptr);
    EXPECT_EQ(at(n, "leaf01", 30)->peer, "spine01");
    EXPECT_EQ(at(n, "leaf01", 30)->peer_port, 1);
    EXPECT_EQ(at(n, "spine01", 1)->peer_port, 30);
    EXPECT_EQ(n.link_count(), 8u);
    expect_consistent(n);
    // Target taken / source empty / port beyond the switch.
    EXPECT_THROW(apply_fault(n, parse_fault("move:leaf01/30:leaf01/20")), InputError);
    EXPECT_THROW(apply_fault(n, parse_fault("move:leaf01/19:leaf01/31")), InputError);
    EXPECT_THROW(apply_fault(n, parse_fault("move:leaf01/30:leaf01/37")), InputError);
    EXPECT_THROW(apply_fault(n, parse_fault("move:leaf09/1:leaf01/31")), InputError);
}

TEST(LabFault, CrossSwapsFarEnds) {
    Net n = net_from_plan(test::small_plan());
    apply_fault(n, parse_fault("cross:leaf01/19,leaf01/20"));
    EXPECT_EQ(at(n, "leaf01", 19)->peer_port, 2);
    EXPECT_EQ(at(n, "leaf01", 20)->peer_port, 1);
    EXPECT_EQ(at(n, "spine01", 1)->peer_port, 20);
    EXPECT_EQ(at(n, "spine01", 2)->peer_port, 19);
    EXPECT_EQ(n.link_count(), 8u);
    expect_consistent(n);
    // Crossing across nodes (host cables on two leaves) keeps masks consistent too.
    apply_fault(n, parse_fault("cross:leaf01/2,leaf02/2"));  // 4xHDR and 4xEDR cables
    EXPECT_EQ(at(n, "leaf01", 2)->peer, "node004");
    expect_consistent(n);
    EXPECT_THROW(apply_fault(n, parse_fault("cross:leaf01/19,spine01/2")), InputError);  // one cable
    EXPECT_THROW(apply_fault(n, parse_fault("cross:leaf01/19,leaf01/25")), InputError);  // no cable at 25
}

TEST(LabFault, RemoveCable) {
    Net n = net_from_plan(test::small_plan());
    apply_fault(n, parse_fault("remove:leaf02/20"));
    EXPECT_EQ(at(n, "leaf02", 20), nullptr);
    EXPECT_EQ(at(n, "spine01", 4), nullptr);
    EXPECT_EQ(n.link_count(), 7u);
    expect_consistent(n);
    EXPECT_THROW(apply_fault(n, parse_fault("remove:leaf02/20")), InputError);
    // by the far end / a host's plan name
    apply_fault(n, parse_fault("remove:node002/1"));
    EXPECT_EQ(at(n, "leaf01", 2), nullptr);
}

TEST(LabFault, DegradeWidthAndSpeedAtBothEnds) {
    Net n = net_from_plan(test::small_plan());
    apply_fault(n, parse_fault("width:leaf01/19=1x"));
    EXPECT_EQ(rate_for_masks(at(n, "leaf01", 19)->masks), (Rate{Width::X1, Speed::HDR}));
    EXPECT_EQ(rate_for_masks(at(n, "spine01", 1)->masks), (Rate{Width::X1, Speed::HDR}));
    apply_fault(n, parse_fault("speed:spine01/2=SDR"));
    EXPECT_EQ(rate_for_masks(at(n, "leaf01", 20)->masks), (Rate{Width::X4, Speed::SDR}));
    EXPECT_EQ(*at(n, "leaf01", 20)->masks.e, 0);
    expect_consistent(n);
    std::string text = write_net(n);
    EXPECT_NE(text.find("[19] \"spine01\"[1] w=1 s=4 e=4"), std::string::npos);
    EXPECT_NE(text.find("[2] \"leaf01\"[20] w=2 s=1 e=0"), std::string::npos);
    EXPECT_THROW(apply_fault(n, parse_fault("width:leaf01/30=1x")), InputError);
}
