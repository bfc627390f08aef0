// Helpers shared by the dumps tests: read a file from tests/data, summarise a fabric.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "ibf/dumps.h"

namespace ibf::test {

inline std::string read_data(const std::string& name) {
    std::ifstream in(std::string(IBF_TEST_DATA) + "/" + name, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot open test data " << name;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// "4xQDR" -> number of links (each link counted once, rate taken from its first end).
inline std::map<std::string, int> rate_histogram(const Fabric& f) {
    std::map<std::string, int> h;
    for (const Link& l : f.links()) ++h[to_string(f.node(l.a).ports[l.pa].rate())];
    return h;
}

inline NodeId by_name(const Fabric& f, const std::string& name) {
    auto ids = f.find_by_name(name);
    EXPECT_EQ(ids.size(), 1u) << "name " << name;
    return ids.empty() ? kNoNode : ids[0];
}

// Every link's two ends point at each other and carry the same active rate.
inline void expect_consistent(const Fabric& f) {
    for (NodeId i = 0; i < f.size(); ++i)
        for (const Port& p : f.node(i).ports) {
            if (!p.valid || !p.linked()) continue;
            const Port& q = f.node(p.peer).ports[p.peer_port];
            EXPECT_EQ(q.peer, i);
            EXPECT_EQ(q.peer_port, p.num);
            EXPECT_EQ(q.rate(), p.rate());
        }
}

}  // namespace ibf::test
