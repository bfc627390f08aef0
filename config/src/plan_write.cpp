#include "ibf/plan_write.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <stdexcept>

namespace ibf {
namespace {

// Names, patterns and port lists are always double-quoted, whatever they hold.
void quoted(YAML::Emitter& o, const std::string& key, const std::string& value) {
    o << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
}

void names(YAML::Emitter& o, const std::vector<std::string>& v) {
    o << YAML::Key << "names" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& n : v) o << YAML::DoubleQuoted << n;
    o << YAML::EndSeq;
}

void rate(YAML::Emitter& o, const std::optional<Rate>& r) {
    if (r) o << YAML::Key << "rate" << YAML::Value << to_string(*r);
}

// A top-level section after a blank line.
void section(YAML::Emitter& o, const char* key) {
    o << YAML::Newline << YAML::Newline << YAML::Key << key << YAML::Value;
}

void write_tier(YAML::Emitter& o, const PlanDocument::Tier& t) {
    o << YAML::Key << t.key;
    if (!t.comment.empty()) o << YAML::Comment(t.comment);
    o << YAML::Value << YAML::BeginMap;
    names(o, t.names);
    o << YAML::Key << "ports" << YAML::Value << t.ports;
    if (t.pods > 0) o << YAML::Key << "pods" << YAML::Value << t.pods;
    if (!t.down.empty()) quoted(o, "down", t.down);
    if (!t.up.empty()) quoted(o, "up", t.up);
    if (!t.up_to.empty()) o << YAML::Key << "up_to" << YAML::Value << t.up_to;
    if (t.cables_per_pair > 0) o << YAML::Key << "cables_per_pair" << YAML::Value << t.cables_per_pair;
    rate(o, t.rate);
    o << YAML::EndMap;
}

void write_host_group(YAML::Emitter& o, const PlanDocument::HostGroup& g) {
    o << YAML::Flow << YAML::BeginMap;
    names(o, g.names);
    if (!g.hca.empty()) quoted(o, "hca", g.hca);
    o << YAML::Key << "port" << YAML::Value << g.port;
    quoted(o, "attach", g.attach);
    quoted(o, "ports", g.ports);
    o << YAML::Key << "per_switch" << YAML::Value << g.per_switch;
    rate(o, g.rate);
    o << YAML::EndMap;
}

void write_end(YAML::Emitter& o, const char* key, const PlanDocument::End& e) {
    o << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    quoted(o, "node", e.node);
    if (!e.hca.empty()) quoted(o, "hca", e.hca);
    o << YAML::Key << "port" << YAML::Value << e.port << YAML::EndMap;
}

void write_node(YAML::Emitter& o, const PlanDocument::NodeEntry& n) {
    o << YAML::Key << YAML::DoubleQuoted << n.key << YAML::Value;
    if (n.type.empty()) {
        if (!n.guid) throw std::logic_error("plan_yaml_text: nodes entry '" + n.key + "' has neither a type nor a GUID");
        o << guid_hex(*n.guid);
        return;
    }
    o << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value << n.type;
    o << YAML::Key << "ports" << YAML::Value << n.ports;
    if (n.guid) o << YAML::Key << "guid" << YAML::Value << guid_hex(*n.guid);
    o << YAML::EndMap;
}

void write_lists(YAML::Emitter& o, const PlanDocument& d) {
    if (!d.hosts.empty()) {
        section(o, "hosts");
        o << YAML::BeginSeq;
        for (const auto& g : d.hosts) write_host_group(o, g);
        o << YAML::EndSeq;
    }
    if (!d.cables.empty()) {
        section(o, "cables");
        o << YAML::BeginSeq;
        for (const auto& c : d.cables) {
            o << YAML::Flow << YAML::BeginMap;
            write_end(o, "a", c.a);
            write_end(o, "b", c.b);
            rate(o, c.rate);
            o << YAML::EndMap;
        }
        o << YAML::EndSeq;
    }
    if (!d.overrides.empty()) {
        section(o, "overrides");
        o << YAML::BeginSeq;
        for (const auto& v : d.overrides) {
            o << YAML::Flow << YAML::BeginMap;
            quoted(o, "port", v.port);
            rate(o, v.rate);
            o << YAML::EndMap;
        }
        o << YAML::EndSeq;
    }
}

}  // namespace

std::string plan_yaml_text(const PlanDocument& d) {
    YAML::Emitter o;
    o.SetPreCommentIndent(3);  // "leaf_other:   # ..."
    std::string top;
    for (const std::string& c : d.comments) top += (top.empty() ? "" : "\n") + c;
    if (!d.comments.empty()) o << YAML::Comment(top);  // one comment: yaml-cpp starts each line with "# "
    o << YAML::BeginMap << YAML::Key << "version" << YAML::Value << d.version;
    quoted(o, "name", d.name);
    rate(o, d.rate);
    if (d.mtu > 0) o << YAML::Key << "mtu" << YAML::Value << d.mtu;
    if (!d.switches.empty()) {
        section(o, "switches");
        o << YAML::BeginMap;
        for (const auto& t : d.switches) write_tier(o, t);
        o << YAML::EndMap;
    }
    write_lists(o, d);
    if (!d.nodes.empty()) {
        section(o, "nodes");
        o << YAML::BeginMap;
        for (const auto& n : d.nodes) write_node(o, n);
        o << YAML::EndMap;
    }
    o << YAML::EndMap;
    if (!o.good()) throw std::logic_error("plan_yaml_text: " + o.GetLastError());
    return std::string(o.c_str()) + "\n";
}

}  // namespace ibf
