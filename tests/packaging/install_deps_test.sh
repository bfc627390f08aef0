#!/usr/bin/env bash
# Every Debian package that a configure error names (ibf_require, ibf_require_library and the
# libibmad check in the CMakeLists.txt files) is installed by `scripts/install-deps.sh build`, so a
# fresh Debian 12 machine never stops at configure after install-deps said it was done (zlib1g-dev
# was missing: a minimal Debian 12 does not have it, this machine had it from another package).
set -euo pipefail
src=${1:?usage: install_deps_test.sh SOURCE_DIR}
cd "$src"
mapfile -t listed < <(bash scripts/install-deps.sh --list build)
mapfile -t files < <(find . -name CMakeLists.txt -not -path './build*' -not -path './tests/data/*')
needed=$(
  {
    # ibf_require(<Name> <package or "packages"> ...)
    sed -n -e 's/^ *ibf_require( *[^ ]\{1,\} \{1,\}"\([^"]*\)".*/\1/p' \
           -e 's/^ *ibf_require( *[^ ]\{1,\} \{1,\}\([^ ")]\{1,\}\).*/\1/p' "${files[@]}"
    # ibf_require_library(<var> <lib> <package>)
    sed -n 's/^ *ibf_require_library( *[^ ]\{1,\} \{1,\}[^ ]\{1,\} \{1,\}\([^ )]*\)).*/\1/p' "${files[@]}"
    # message(FATAL_ERROR "... install the Debian package(s) A B (bash scripts/install-deps.sh)")
    grep -ho 'install the Debian packages\{0,1\} [a-z0-9][a-z0-9.+ -]* (bash' "${files[@]}" |
      sed 's/install the Debian packages\{0,1\} //; s/ (bash$//'
  } | tr ' ' '\n' | grep -v '^\(\${deb}\|\)$' | sort -u
)
[ -n "$needed" ] || { echo "FAIL: no package found in the CMakeLists.txt files (has the wording changed?)"; exit 1; }
missing=0 count=0
for p in $needed; do
  count=$((count + 1))
  printf '%s\n' "${listed[@]}" | grep -qxF "$p" || { echo "FAIL: the configure step asks for $p, scripts/install-deps.sh build does not install it"; missing=1; }
done
[ "$missing" = 0 ] || exit 1
echo "ok: the $count packages the configure step names are all in scripts/install-deps.sh build"
