// synth_dump: writes a synthetic fabric (bench/include/ibf/synth.h) as an ibnetdiscover dump, for
// `ibfabric analyze`/`draw` and test inputs (a program, not a test).
//
//   build/bin/synth_dump superpod --units 4 > superpod.txt      # rail-optimized DGX SuperPOD, with core
//   build/bin/synth_dump superpod --units 2 --no-core --no-sharp --service-slots 0
//   build/bin/synth_dump fat-tree --levels 3 --radix 40 --hosts 1600
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "ibf/dumps.h"
#include "ibf/synth.h"

namespace {

int usage() {
    std::fprintf(stderr,
                 "usage: synth_dump superpod [--units N] [--no-core] [--no-sharp] [--service-slots N]\n"
                 "       synth_dump fat-tree [--levels 2|3] [--radix K] [--hosts N]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string what = argv[1];
    ibf::SuperPodSpec pod;
    ibf::FatTreeSpec tree;
    try {
        for (int i = 2; i < argc; ++i) {
            const std::string a = argv[i];
            auto number = [&] {
                if (i + 1 >= argc) throw std::invalid_argument(a + " needs a number");
                return std::stoi(argv[++i]);
            };
            if (a == "--units") pod.units = number();
            else if (a == "--no-core") pod.core = false;
            else if (a == "--no-sharp") pod.sharp = false;
            else if (a == "--service-slots") pod.service_slots = number();
            else if (a == "--levels") tree.levels = number();
            else if (a == "--radix") tree.radix = number();
            else if (a == "--hosts") tree.hosts = number();
            else return usage();
        }
        if (what == "superpod") std::cout << ibf::write_ibnetdiscover(ibf::synth_superpod(pod));
        else if (what == "fat-tree") std::cout << ibf::write_ibnetdiscover(ibf::synth_fat_tree(tree));
        else return usage();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "synth_dump: %s\n", e.what());
        return 2;
    }
    return 0;
}
