#include "ibf/inputs.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"

namespace ibf {
namespace {

// The directory part of `path` ("" when none), to resolve files a plan names relative to it.
std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

}  // namespace

std::string read_text_file(const std::string& path, std::string_view what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, 0, "cannot read the " + std::string(what) + ": " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw InputError(path, 0, 0, "cannot read the " + std::string(what) + ": " + std::strerror(errno));
    return ss.str();
}

void write_text_file(const std::string& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw InputError(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
}

NodeNameMap load_node_name_map(const std::string& path) {
    return parse_node_name_map(read_text_file(path, "node-name-map"), path);
}

Fabric load_dump_file(const std::string& path, const NodeNameMap& names) {
    Fabric f = parse_dump(read_text_file(path, "dump"), path);
    if (!names.empty()) apply_node_name_map(f, names);
    return f;
}

Expected load_expected(const std::string& path, const std::string& node_name_map) {
    Expected e;
    if (!node_name_map.empty()) {
        e.names = load_node_name_map(node_name_map);
        e.names_path = node_name_map;
    }
    const std::string text = read_text_file(path, "plan");
    if (!looks_like_plan_yaml(text) && detect_dump_format(text)) {
        e.golden = parse_dump(text, path);
        if (!e.names.empty()) apply_node_name_map(*e.golden, e.names);
        e.plan = plan_from_fabric(*e.golden, path);
        return e;
    }
    e.plan = parse_plan_yaml(text, path);
    if (node_name_map.empty() && !e.plan.node_name_map.empty()) {
        std::string p = e.plan.node_name_map;
        if (p.front() != '/') p = dir_of(path) + p;
        e.names = parse_node_name_map(read_text_file(p, "node-name-map named by the plan"), p);
        e.names_path = p;
    }
    return e;
}

}  // namespace ibf
