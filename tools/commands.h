// The `ibfabric` CLI: one file per subcommand, each registering itself on the app.
//
// Exit codes shared by every subcommand (docs/cli.md):
//   0  clean: nothing to report
//   1  findings were reported
//   2  bad input or usage (the message names file:line:column)
//   3  the daemon or the lab could not be reached / started
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace ibf {
struct HttpResult;
}

namespace ibf::cli {

inline constexpr int kExitClean = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitUnavailable = 3;

// Each register_* adds a subcommand to `app`; when that subcommand is chosen, main() calls
// the function stored in `run` and exits with what it returns.
using Runner = std::function<int()>;

// The bearer token for ibfabricd (token.cpp): the trimmed content of `token_file` (bounded; an empty
// or unreadable file throws, naming it), else $IBFABRIC_TOKEN, else with `lab` (--lab DIR) that
// lab's own token (lab_token_file), else nullopt.
std::optional<std::string> bearer_token(const std::string& token_file, const std::string& lab = "");

// Where client commands find ibfabricd when neither --url, --lab nor $IBFABRIC_URL says.
inline constexpr const char* kDefaultDaemonUrl = "http://127.0.0.1:8639";

// The daemon a client command asks (daemon_url.cpp): `url` (--url), else the daemon of the lab in
// `lab` (--lab DIR), else $IBFABRIC_URL, else kDefaultDaemonUrl. Labs are never looked for unless
// --lab names one, and then only one whose directory and state file are this user's and writable
// by nobody else, with a daemon of this user alive. InputError (exit 2) naming the directory when not.
//   daemon_url("", "")                  -> "http://127.0.0.1:8639"
//   daemon_url("", "/tmp/mylab")        -> "http://127.0.0.1:41234"  (its state's api_port)
std::string daemon_url(const std::string& url, const std::string& lab);

// Adds --url URL and --lab DIR (mutually exclusive) to `sub`; `what` names the server in the help
// ("daemon", "HA agent").
// The token file of the lab in `lab` (its api.token) when that lab's state is this user's own and
// the file is this user's and readable by no one else; "" otherwise. For --lab without --token-file
// or $IBFABRIC_TOKEN: the lab's own daemons were started with it.
std::string lab_token_file(const std::string& lab);
void add_daemon_options(CLI::App* sub, std::string& url, std::string& lab, const std::string& what = "daemon");

// GET `path` from the daemon at `url` with the bearer token of `token_file` (daemon_get.cpp): 0
// and `r` whatever its status (`token_out`: the token sent, "" none), or the exit code with the
// reason printed: 2 bad URL or token file, 3 unreachable.
int daemon_get(const std::string& url, const std::string& token_file, const std::string& path, HttpResult& r,
               std::string* token_out = nullptr);
// GET `path` from the daemon at `url` (daemon_get.cpp) with the bearer token of `token_file`
// (bearer_token) and parse its JSON into `out`. 0, or the exit code with the reason printed:
// 2 bad URL or token file, or the daemon answered 400 (what the command was given), 3 unreachable,
// any other status, or not JSON.
int fetch_daemon_json(const std::string& url, const std::string& token_file, const std::string& path, nlohmann::json& out);
// Percent-encodes a query value ("leaf03/19" stays, "a b" -> "a%20b").
std::string url_escape(const std::string& s);

void register_check(CLI::App& app, Runner& run);     // cmd_check.cpp   (issue: foundation)
void register_daemon_queries(CLI::App& app, Runner& run);  // cmd_query.cpp  (status, findings)
void register_lab(CLI::App& app, Runner& run);       // cmd_lab.cpp     (lab up/down/fault)
void register_analyze(CLI::App& app, Runner& run);   // cmd_analyze.cpp (analyze, plan from-dump, routing files)
void register_doctor(CLI::App& app, Runner& run);   // cmd_doctor.cpp  (doctor: is this SM node wired up?)
void register_sm(CLI::App& app, Runner& run);        // cmd_sm.cpp      (sm status|switchover, ha check|notify)
void register_draw(CLI::App& app, Runner& run);      // cmd_draw.cpp    (draw: SVG/HTML picture of the fabric)
void register_history(CLI::App& app, Runner& run);   // cmd_history.cpp (history, diff, accept)
void register_route(CLI::App& app, Runner& run);     // cmd_route.cpp   (route SRC DST from a dump + LFTs)
void register_topology(CLI::App& app, Runner& run);  // cmd_topology.cpp (topology slurm)
void register_impact(CLI::App& app, Runner& run);    // cmd_impact.cpp  (impact NODE[/PORT]...)
void register_hosts(CLI::App& app, Runner& run);     // cmd_hosts.cpp   (hosts HOSTLIST: a job's cables)
void register_maintenance(CLI::App& app, Runner& run);  // cmd_maintenance.cpp (maintenance add|list|remove)

}  // namespace ibf::cli
