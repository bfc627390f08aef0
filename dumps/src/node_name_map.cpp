// OpenSM / infiniband-diags node-name-map: `<guid> "<name>"` (or an unquoted name), '#' comments.
#include "ibf/dumps.h"
#include "text.h"

namespace ibf {

NodeNameMap parse_node_name_map(std::string_view text, const std::string& file) {
    NodeNameMap map;
    std::unordered_map<Guid, int> where;
    detail::Lines lines(text);
    std::string_view raw;
    int ln = 0;
    while (lines.next(raw, ln)) {
        detail::Cursor c(raw, file, ln);
        c.skip_ws();
        if (c.at_end() || c.peek() == '#') continue;
        size_t gpos = c.pos();
        std::string_view gw = c.word();
        auto g = parse_guid(gw);
        if (!g) c.fail_at(gpos, "expected a node GUID such as 0x0002c90300a1b2c3 at the start of the line");
        c.skip_ws();
        std::string name;
        if (c.peek() == '"') {
            name = std::string(c.quoted("node name"));
            c.skip_ws();
            if (!c.at_end() && c.peek() != '#') c.fail("expected the end of the line or a # comment after the quoted name");
        } else {
            std::string_view rest = c.rest();
            size_t hash = rest.find('#');
            name = std::string(detail::trim(rest.substr(0, hash)));
        }
        if (name.empty()) c.fail("expected a name after the GUID");
        auto [it, fresh] = map.emplace(*g, name);
        if (!fresh && it->second != name)
            c.fail_at(gpos, "GUID " + guid_hex(*g) + " is already mapped to \"" + it->second + "\" at line " +
                                std::to_string(where[*g]));
        if (fresh) where[*g] = ln;
    }
    return map;
}

void apply_node_name_map(Fabric& f, const NodeNameMap& map) {
    for (NodeId i = 0; i < f.size(); ++i) {
        Node& n = f.node(i);
        auto it = map.find(n.guid);
        if (it == map.end()) continue;
        n.description = it->second;
        n.name.clear();
    }
    f.finalize();
}

}  // namespace ibf
