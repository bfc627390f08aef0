// `ibfabric maintenance add|list|remove`: hosts planned away for a while, kept in the waiver file's
// `maintenance:` section (checks/waivers.h, docs/findings.md#hosts-in-maintenance). An absent host in
// maintenance is no finding in check, analyze and the daemon (which re-reads the file on reload).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <system_error>

#include "commands.h"
#include "ibf/atomic_file.h"
#include "ibf/error.h"
#include "ibf/hostlist.h"
#include "ibf/inputs.h"
#include "ibf/text.h"
#include "ibf/waivers.h"

namespace ibf::cli {
namespace {

inline constexpr const char* kDefaultWaiverFile = "/etc/ibfabric/waivers.yaml";

struct MaintenanceArgs {
    std::string hostlist, until, reason, file = kDefaultWaiverFile;
    bool json = false;
};

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Loaded {
    std::string text;  // "" when the file does not exist yet
    WaiverSet set;
};

Loaded load(const std::string& path, bool must_exist) {
    Loaded l;
    std::error_code ec;
    if (!must_exist && !std::filesystem::exists(path, ec)) return l;
    l.text = read_text_file(path, "waiver file", 1u << 20);
    l.set = naming_file(path, "waiver file", [&] { return parse_waivers(l.text, path); });
    return l;
}

// Writes `text` after parsing it again (so a file this command writes always loads), with
// write_file_atomic() (a reader never sees half a file; the old file's mode and owner stay; a new
// one is 0644, as the daemon reads it as its own user).
void store(const std::string& path, const std::string& text) {
    naming_file(path, "waiver file", [&] { return parse_waivers(text, path); });
    if (text.size() > (1u << 20)) throw InputError(path, 0, 0, "the waiver file would exceed 1 MiB");
    try {
        write_file_atomic(path, text, {.mode_if_new = 0644});
    } catch (const std::system_error& e) {  // "PATH: cannot ...": an InputError as before (exit 2)
        std::string why = e.what();
        if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
        throw InputError(path, 0, 0, why);
    }
}

void print_entries(const std::vector<Maintenance>& ms, bool json, int64_t now) {
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const Maintenance& m : ms) arr.push_back(maintenance_to_json(m, now));
        std::cout << nlohmann::json{{"maintenance", arr}}.dump(2) << "\n";
        return;
    }
    if (ms.empty()) std::cout << "no hosts in maintenance\n";
    for (const Maintenance& m : ms)
        std::cout << m.hosts << "  (" << m.names.size() << (m.names.size() == 1 ? " host" : " hosts") << ")  until "
                  << m.until << (now >= m.until_unix_ms ? " (ended)" : "") << "  " << terminal_safe(m.reason) << "  ["
                  << m.where << "]\n";
}

int run_add(const MaintenanceArgs& a) {
    const int64_t now = now_ms();
    Maintenance m;
    m.hosts = a.hostlist;
    m.names = hostlist_expand(a.hostlist, "HOSTLIST");
    if (m.names.empty()) throw InputError("HOSTLIST", 0, 0, "no host names in '" + a.hostlist + "'");
    m.until = a.until;
    const auto until = end_of_day_unix_ms(a.until);
    if (!until) throw InputError("--until", 0, 0, "bad date '" + a.until + "': expected YYYY-MM-DD (UTC, inclusive)");
    m.until_unix_ms = *until;
    if (now >= m.until_unix_ms) throw InputError("--until", 0, 0, a.until + " is already past: a maintenance ends in the future");
    if (a.reason.empty()) throw InputError("--reason", 0, 0, "a reason is required (what is being done, for the next administrator)");
    m.reason = a.reason;
    Loaded l = load(a.file, false);
    std::vector<Maintenance> next = l.set.maintenance;
    next.push_back(m);
    store(a.file, with_maintenance(l.text, next));
    Loaded after = load(a.file, true);
    if (a.json) {
        print_entries({after.set.maintenance.back()}, true, now);
    } else {
        std::cout << "added to " << a.file << ": ";
        print_entries({after.set.maintenance.back()}, false, now);
        std::cout << "ibfabricd reads it at its next reload (systemctl reload ibfabricd); check/analyze take --waivers "
                  << a.file << "\n";
    }
    return kExitClean;
}

int run_list(const MaintenanceArgs& a) {
    const Loaded l = load(a.file, false);
    print_entries(l.set.maintenance, a.json, now_ms());
    return kExitClean;
}

// Removes the hosts of HOSTLIST from every entry; an entry left without hosts goes.
int run_remove(const MaintenanceArgs& a) {
    const std::vector<std::string> gone_list = hostlist_expand(a.hostlist, "HOSTLIST");
    const std::set<std::string> gone(gone_list.begin(), gone_list.end());
    Loaded l = load(a.file, true);
    std::vector<Maintenance> next;
    size_t removed = 0;
    for (Maintenance m : l.set.maintenance) {
        std::vector<std::string> keep;
        for (const std::string& n : m.names)
            if (!gone.count(n)) keep.push_back(n);
        removed += m.names.size() - keep.size();
        if (keep.empty()) continue;
        if (keep.size() != m.names.size()) m.hosts = hostlist_compress(keep), m.names = keep;
        next.push_back(std::move(m));
    }
    if (removed == 0) {
        std::fprintf(stderr, "ibfabric: no host of %s is in maintenance in %s\n", terminal_safe(a.hostlist).c_str(),
                     a.file.c_str());
        return kExitFindings;
    }
    store(a.file, with_maintenance(l.text, next));
    if (a.json) {
        const Loaded after = load(a.file, true);
        nlohmann::json j{{"removed", removed}, {"maintenance", nlohmann::json::array()}};
        for (const Maintenance& m : after.set.maintenance) j["maintenance"].push_back(maintenance_to_json(m, now_ms()));
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << "removed " << removed << (removed == 1 ? " host" : " hosts") << " from maintenance in " << a.file
                  << "\n";
    }
    return kExitClean;
}

}  // namespace

void register_maintenance(CLI::App& app, Runner& run) {
    CLI::App* top = app.add_subcommand(
        "maintenance",
        "Hosts planned away for a while (drained, powered off): an absent host in maintenance is no finding.\n"
        "Kept in the waiver file's maintenance: section (docs/findings.md#hosts-in-maintenance).\n"
        "Example: ibfabric maintenance add 'node[001-004]' --until 2026-12-24 --reason 'DIMM replacement'");
    top->require_subcommand(1);
    auto file_opt = [](CLI::App* c, MaintenanceArgs& a) {
        c->add_option("-f,--waivers", a.file, "The waiver file (YAML) that holds the maintenance: section")
            ->type_name("FILE")
            ->capture_default_str();
        c->add_flag("--json", a.json, "Print JSON: {\"maintenance\": [{hosts, count, until, reason, where, ended}]}");
    };
    {
        auto a = std::make_shared<MaintenanceArgs>();
        CLI::App* c = top->add_subcommand("add", "Put hosts in maintenance until a date (UTC, inclusive)");
        c->add_option("HOSTLIST", a->hostlist, "Slurm hostlist: node[001-004],gpu07")->required();
        c->add_option("--until", a->until, "Last day of the maintenance, YYYY-MM-DD (UTC); after it the hosts count again")
            ->required()
            ->type_name("DATE");
        c->add_option("--reason", a->reason, "What is being done (shown with the hosts)")->required()->type_name("TEXT");
        file_opt(c, *a);
        c->footer(
            "Examples:\n"
            "  ibfabric maintenance add 'node[001-004]' --until 2026-12-24 --reason 'DIMM replacement, ticket 4711'\n"
            "  ibfabric maintenance add gpu07 --until 2027-01-10 --reason 'GPU RMA' -f ./waivers.yaml\n"
            "\n"
            "Exit status: 0 added, 2 bad hostlist, date (or a date already past), reason or file.\n");
        c->callback([&run, a] { run = [a] { return run_add(*a); }; });
    }
    {
        auto a = std::make_shared<MaintenanceArgs>();
        CLI::App* c = top->add_subcommand("list", "The hosts in maintenance, with their dates and reasons");
        file_opt(c, *a);
        c->footer(
            "Examples:\n"
            "  ibfabric maintenance list\n"
            "  ibfabric maintenance list -f ./waivers.yaml --json | jq '.maintenance[] | select(.ended)'\n"
            "\n"
            "Exit status: 0 listed (an entry past its date shows as ended), 2 bad file.\n");
        c->callback([&run, a] { run = [a] { return run_list(*a); }; });
    }
    {
        auto a = std::make_shared<MaintenanceArgs>();
        CLI::App* c = top->add_subcommand("remove", "Take hosts out of maintenance (from every entry that holds them)");
        c->add_option("HOSTLIST", a->hostlist, "Slurm hostlist: node[001-004]")->required();
        file_opt(c, *a);
        c->footer(
            "Examples:\n"
            "  ibfabric maintenance remove 'node[001-004]'\n"
            "  ibfabric maintenance remove node003 -f ./waivers.yaml   # node[001-002,004] stay\n"
            "\n"
            "Exit status: 0 removed, 1 none of these hosts was in maintenance, 2 bad hostlist or file.\n");
        c->callback([&run, a] { run = [a] { return run_remove(*a); }; });
    }
}

}  // namespace ibf::cli
