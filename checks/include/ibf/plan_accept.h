// `ibfabric accept` / POST /api/v1/accept: adopt what the fabric has into the YAML plan by editing
// the plan's text, not by regenerating it. Pure: text, plan, fabric and findings in, the edited
// text, what changed and a unified diff out (the caller writes the file: inputs.h
// write_plan_keeping_previous). The CLI's offline accept and the daemon's route both call this.
//
//   AcceptOptions o{.scope = {"leaf[19-20]", "node3*"}, .accept_kinds = {FindingKind::rate_mismatch}};
//   AcceptResult r = accept_into_plan(text, "plan.yaml", plan, fabric, check(plan, fabric), o,
//                                     [&](const Plan& p) { return check(p, fabric); });
//   if (r.refused.empty() && !r.changes.empty()) write(r.text); else show r.refused
//
// What each finding in the scope becomes (docs/plan.md "Accepting the fabric"):
//   unexpected_link   a new `cables:` entry (the plan's default rate and MTU apply)
//   unexpected_node   its cables as `cables:` entries; a switch also a `nodes:` entry (type, ports, GUID)
//   rate_mismatch, mtu_mismatch   an `overrides:` entry with the link's rate / MTU (the cable's existing override edited)
//   miswired          the `cables:` entry's far end moved to where the cable goes (each cable of a crossed pair)
//   missing_link      the `cables:` entry (and its override) removed
// Severity error kinds about planned cables (rate_mismatch, mtu_mismatch, miswired, missing_link) are
// faults, adopted only when named in `accept_kinds`; new cables and nodes are what an expansion
// adds and are adopted in scope. A cable made by the compact form (`switches:`/`hosts:`) cannot be
// moved or removed alone: refused. missing_node in scope is refused (remove a node by hand);
// host_absent (a powered-off host, maintenance), identity_changed and rate_below_capability are
// kept as planned and listed, never a refusal. Outside the scope nothing changes.
// Lines that are not edited stay byte-identical; edits replace whole lines (an entry's lines).
// Refused when any finding in scope is refused: then `text` is the input and `changes` empty.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/plan.h"

namespace ibf {

// A scope entry: a node name (`leaf03`), a plan name pattern (`leaf[19-20]`, `r[1-2]n[01-18]`,
// expanded as plans expand names) or a shell pattern (`node3*`, `leaf0?`); both at once too
// (`leaf[1-2]*`). Empty scope: everything. InputError (file "scope") for a bad pattern.
class AcceptScope {
public:
    explicit AcceptScope(const std::vector<std::string>& entries);
    bool empty() const { return globs_.empty(); }
    bool matches(const std::string& name) const;
    // A finding is in the scope when an end of it (a, b, or any end of its links) is.
    bool covers(const Finding& f) const;

private:
    std::vector<std::string> globs_;  // expanded; fnmatch patterns or plain names
};

struct AcceptOptions {
    std::vector<std::string> scope;                // AcceptScope entries; empty = the whole fabric
    std::vector<FindingKind> accept_kinds;         // severity error kinds adopted as well
    std::string source;                            // written as a comment above added entries ("" = none)
};

struct AcceptChange {
    std::string action;  // "add_cable", "add_node", "override", "move_cable", "remove_cable"
    std::string text;    // "cables: + leaf19/1 -- node325/1"
    int line = 0;        // 1-based line of the old text it changes or follows
};

struct AcceptItem {
    Finding finding;
    std::string why;     // refused: what to do instead; kept: why it stays as planned
};

struct AcceptResult {
    std::string text;                    // the edited plan (the input when refused or nothing to do)
    std::vector<AcceptChange> changes;   // in text order
    std::vector<Finding> adopted;        // the findings the edit absorbs
    std::vector<AcceptItem> refused;     // in scope, not adopted: accept writes nothing
    std::vector<AcceptItem> kept;        // left as planned: outside the scope, host_absent, ...
    std::string diff;                    // unified diff (`--- file`, `+++ file`, 3 lines of context) of the edits; "" when none
    size_t findings_after = 0;           // what `recheck` gives for the edited plan
};

// `findings` = check(plan, fabric) (filtered as the caller reports them). `recheck` checks an
// edited plan against the same fabric: the result must load, and none of `adopted` may remain
// (else std::logic_error: a bug in the edit, never written). InputError naming file:line when a
// section to edit is written in a form the edit does not handle (a flow list `cables: [...]`).
AcceptResult accept_into_plan(std::string_view text, const std::string& file, const Plan& plan, const Fabric& fabric,
                              const std::vector<Finding>& findings, const AcceptOptions& opt,
                              const std::function<std::vector<Finding>(const Plan&)>& recheck);

// Why nothing may be written, as one line ("" when the edit may be written or there is nothing to
// do): findings in the scope refused (up to three named, with what to do), or every difference
// outside the scope ("nothing in the scope differs from the plan ...: widen the scope").
std::string accept_refusal(const AcceptResult& r);

// The JSON both `ibfabric accept --json` and POST /api/v1/accept answer with (docs/api.md):
// {"changes": [...], "adopted": [findings], "refused": [{finding..., "why"}], "kept": [...], "diff", "findings_after"}.
nlohmann::json accept_result_json(const AcceptResult& r);

}  // namespace ibf
