// ibf_priv_probe: what the daemon does with its HA privileges, run by sandbox_test.sh inside the
// sandbox generated from ibfabricd.service: open the MAD device read-write (as ha/src/smp_ibmad.cpp's
// libibumad does), then set sm_priority and replace guid2lid through the SM helper with the
// daemon's own client (ibf/sm_helper_client.h). One line per step; exit status: bit 1 MAD, bit 2
// priority, bit 4 guid2lid failed. The guid2lid text comes on stdin (the sandbox hides /tmp).
//   ibf_priv_probe /dev/infiniband/umad0 /run/ibfabric-sm-helper.sock 13 <guid2lid.txt
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

#include "ibf/sm_helper.h"
#include "ibf/sm_helper_client.h"

namespace {

// ENXIO: the open passed the path, the permissions and the device cgroup and reached the char
// device layer, which has no driver behind umad's major here (no HCA): access is allowed.
int open_mad(const char* dev) {
    const int fd = ::open(dev, O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
        ::close(fd);
        std::printf("mad: open %s: ok\n", dev);
        return 0;
    }
    const int e = errno;
    std::printf("mad: open %s: %s (%s)\n", dev, e == ENXIO ? "ENXIO" : e == ENOENT ? "ENOENT" : e == EACCES ? "EACCES" : e == EPERM ? "EPERM" : "other",
                std::strerror(e));
    return e == ENXIO ? 0 : 1;
}

int helper(const char* what, const std::string& sock, const std::string& request) {
    try {
        std::printf("%s: ok %s\n", what, ibf::call_sm_helper(sock, request).c_str());
        return 0;
    } catch (const std::exception& e) {
        std::printf("%s: error: %s\n", what, e.what());
        return 1;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: ibf_priv_probe MAD_DEVICE HELPER_SOCKET PRIORITY <GUID2LID_TEXT\n");
        return 64;
    }
    std::stringstream text;
    text << std::cin.rdbuf();
    int rc = open_mad(argv[1]);
    rc |= helper("priority", argv[2], ibf::priority_request(std::atoi(argv[3]))) << 1;
    rc |= helper("guid2lid", argv[2], ibf::guid2lid_request(text.str())) << 2;
    std::fflush(stdout);
    return rc;
}
