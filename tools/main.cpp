// ibfabric: offline checks of dumps, queries of the daemon, and the ibsim lab.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "commands.h"
#include "ibf/error.h"
#include "ibf/text.h"

#ifndef IBF_VERSION
#define IBF_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
    CLI::App app{
        "ibfabric: compare an InfiniBand fabric with its plan, port by port.\n"
        "Exit codes: 0 clean, 1 findings, 2 bad input or usage, 3 daemon/lab unavailable.",
        "ibfabric"};
    app.set_version_flag("--version", IBF_VERSION);
    app.require_subcommand(1);
    ibf::cli::Runner run;
    ibf::cli::register_check(app, run);
    ibf::cli::register_daemon_queries(app, run);
    ibf::cli::register_lab(app, run);
    ibf::cli::register_analyze(app, run);
    ibf::cli::register_doctor(app, run);
    ibf::cli::register_sm(app, run);
    ibf::cli::register_draw(app, run);
    ibf::cli::register_history(app, run);
    ibf::cli::register_route(app, run);
    ibf::cli::register_topology(app, run);
    ibf::cli::register_impact(app, run);
    ibf::cli::register_hosts(app, run);
    ibf::cli::register_maintenance(app, run);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return ibf::cli::kExitBadInput;
    }
    if (!run) return ibf::cli::kExitBadInput;
    // Messages quote the input (names, keys, values): terminal_safe keeps its escapes off the terminal.
    try {
        return run();
    } catch (const ibf::InputError& e) {
        std::fprintf(stderr, "ibfabric: %s\n", ibf::terminal_safe(e.what()).c_str());
        return ibf::cli::kExitBadInput;
    } catch (const std::bad_alloc&) {  // the readers name the file themselves; this is the last net
        std::string args;
        for (int i = 1; i < argc; ++i) args += std::string(" ") + argv[i];
        std::fprintf(stderr, "ibfabric: out of memory running `ibfabric%s`: an input it names is too large\n",
                     ibf::terminal_safe(args.substr(0, 300)).c_str());
        return ibf::cli::kExitBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ibfabric: error: %s\n", ibf::terminal_safe(e.what()).c_str());
        return ibf::cli::kExitBadInput;
    }
}
