// YAML text -> a yaml-cpp tree, with its expanded size bounded before the tree is built: the one
// way plans and waiver files are loaded (issue 19 item 4: a 2 MB flow list took 472 MB, 70k
// aliases of a 250k-label list asked for ~560 GB).
//
//   YAML::Node root = ibf::load_yaml_bounded(text, "plan.yaml", "plan", {.max_nodes = 250000});
//
// Counted: every scalar, null, sequence and map, and every alias as the nodes it stands for (so
// "billion laughs" files are refused, not expanded). Two passes, both bounded: a byte scan of
// flow collections (`[a, a, ...]`, where yaml-cpp buffers every item) refuses one larger than the
// limit without any allocation, then yaml-cpp's event parser counts the rest; only then is the
// tree built. Errors are InputError at file:line:column:
//   "plan.yaml:1:2000001: the plan has more than 250000 YAML nodes (aliases counted as what they
//    stand for); split it or write the fat-tree compactly (docs/plan.md)"
// Pure: no I/O.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace ibf {

struct YamlLimits {
    size_t max_nodes = 250000;  // expanded nodes (aliases as what they stand for)
    size_t max_depth = 100;     // nesting of sequences and maps
};

// Parses `text` (one document) as yaml-cpp does, refusing it beyond `limits`. `what` names the
// file's role in messages ("plan", "waiver file"). YAML syntax errors are InputError too
// ("YAML syntax error: ...").
YAML::Node load_yaml_bounded(std::string_view text, const std::string& file, std::string_view what,
                             const YamlLimits& limits = {});

}  // namespace ibf
