#!/usr/bin/env bash
# Installs the Debian 12 packages one job needs, and nothing more. Idempotent: when everything is
# present it only says so. Each role includes the ones before it where the job needs them:
#   scripts/install-deps.sh runtime   an SM node running the packages: shared libraries, opensm,
#                                     infiniband-diags (ibnetdiscover, iblinkinfo), systemd
#   scripts/install-deps.sh build     compilers, CMake, headers, GoogleTest, dpkg-dev (the .deb)
#   scripts/install-deps.sh lab       build + ibsim, opensm, the diags and python3 (scripts/demo.sh)
#   scripts/test.sh's own role: test  lab + what only tests use: keepalived and iproute2 (VIP tests
#                                     in namespaces), prometheus and python3-prometheus-client
#                                     (promtool, the text parser), chromium (the page in a browser),
#                                     rpm (the RPM packages' test)
#   scripts/install-deps.sh --list ROLE   prints the role's packages, installs nothing
# No role given: test (everything), as before roles existed.
set -euo pipefail

RUNTIME=(
  libyaml-cpp0.7 libspdlog1.10 libfmt9 libsqlite3-0 libssl3 zlib1g libibumad3 libibmad5 libstdc++6
  opensm infiniband-diags systemd
)
BUILD=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev libboost-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev
  libsqlite3-dev libgtest-dev libgmock-dev libssl-dev
  zlib1g-dev                             # gzip of /metrics and the API (api/); not in a minimal Debian 12
  libopensm-dev libibumad-dev libibmad-dev
  dpkg-dev                               # dpkg-shlibdeps for the .deb's Depends (cmake --build build --target package)
)
LAB=(opensm infiniband-diags ibsim-utils python3 curl procps)
TEST=(
  keepalived iproute2                    # the VIP follows the InfiniBand master (network namespaces)
  prometheus python3-prometheus-client   # promtool check metrics/rules, the Python text parser
  chromium                               # the daemon's page in a headless browser (draw_chromium_test)
  rpm                                    # rpmbuild for CPack's RPM generator, rpm -qp/--root in packaging_rpm_test
  systemd                                # systemd-analyze verify, systemd-sysusers in the package tests
  systemd-container                      # systemd-nspawn: the installed units under the real systemd (packaging_nspawn_test)
)

list=false
if [ "${1:-}" = --list ]; then list=true; shift; fi
role=${1:-test}
case $role in
  runtime) PKGS=("${RUNTIME[@]}") ;;
  build) PKGS=("${BUILD[@]}") ;;
  lab) PKGS=("${BUILD[@]}" "${LAB[@]}") ;;
  test) PKGS=("${BUILD[@]}" "${LAB[@]}" "${TEST[@]}") ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps: unknown role '$role' (runtime, build, lab or test)" >&2; exit 2 ;;
esac
mapfile -t PKGS < <(printf '%s\n' "${PKGS[@]}" | awk '!seen[$0]++')
if $list; then printf '%s\n' "${PKGS[@]}"; exit 0; fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages of role $role present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: role $role: installing ${missing[*]}"
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
