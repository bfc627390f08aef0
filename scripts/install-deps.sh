#!/usr/bin/env bash
# Installs every Debian 12 package ibfabric needs to build, test and run its lab.
# Idempotent: re-running it only checks that everything is present.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev libboost-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev
  libsqlite3-dev libgtest-dev libgmock-dev libssl-dev
  opensm libopensm-dev libibumad-dev libibmad-dev infiniband-diags ibsim-utils
  curl procps
  keepalived iproute2                    # tests: the VIP follows the InfiniBand master (network namespaces)
  dpkg-dev systemd
  prometheus python3-prometheus-client   # tests: promtool check metrics/rules, the Python text parser
  chromium                               # tests: the daemon's page in a headless browser (draw_chromium_test)
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
