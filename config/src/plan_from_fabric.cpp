// Plans from fabrics (a known-good dump as the plan) and plan/dump detection.
#include <string>
#include <string_view>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"

#include "ibf/dumps.h"

namespace ibf {

Plan plan_from_fabric(const Fabric& f, const std::string& source) {
    Plan p;
    p.source = source;
    p.nodes.reserve(f.size());
    for (const Node& n : f.nodes()) {
        PlannedNode pn;
        pn.name = n.name.empty() ? derive_name(n.type, n.description) : n.name;
        if (n.type == NodeType::CA) pn.hca = derive_hca(n.type, n.description);
        pn.guid = n.guid;
        pn.type = n.type;
        pn.num_ports = n.num_ports();
        pn.where = {source, 0, 0};
        p.nodes.push_back(std::move(pn));
    }
    for (const Link& l : f.links()) {
        PlannedLink pl;
        pl.a = {l.a, l.pa};
        pl.b = {l.b, l.pb};
        const Port* pa = f.node(l.a).port(l.pa);
        const Port* pb = f.node(l.b).port(l.pb);
        if (pa && pa->rate().known())
            pl.rate = pa->rate();
        else if (pb && pb->rate().known())
            pl.rate = pb->rate();
        int mtu = 0;
        for (const Port* q : {pa, pb})
            if (q && q->mtu_active > 0 && (mtu == 0 || q->mtu_active < mtu)) mtu = q->mtu_active;
        if (mtu > 0) pl.mtu = mtu;
        pl.where = {source, 0, 0};
        p.links.push_back(std::move(pl));
    }
    return p;
}

bool looks_like_plan_yaml(std::string_view text) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        std::string_view line = text.substr(pos, eol - pos);
        if (line.substr(0, 7) == "version") {
            std::string_view rest = line.substr(7);
            while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
            if (!rest.empty() && rest.front() == ':') return true;
        }
        pos = eol + 1;
    }
    return false;
}

Plan load_plan(std::string_view text, const std::string& file) {
    if (looks_like_plan_yaml(text)) return parse_plan_yaml(text, file);
    if (detect_dump_format(text)) return plan_from_fabric(parse_dump(text, file), file);
    throw InputError(file, 0, 0,
                     "neither a YAML plan (no top-level `version: 1`) nor an ibnetdiscover, iblinkinfo or "
                     "ibdiagnet dump");
}

}  // namespace ibf
