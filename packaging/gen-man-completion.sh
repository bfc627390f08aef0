#!/usr/bin/env bash
# Generates the man pages and the bash completion from the programs' own --help text, so they
# never drift from it: ibfabric.1 (every subcommand's help, found by walking `--help`),
# ibfabricd.8, and bash-completion/ibfabric (subcommands and options per level).
# Usage: gen-man-completion.sh BIN_DIR OUT_DIR VERSION       (run at build time; packaging/CMakeLists.txt)
set -euo pipefail
bin=$1 out=$2 version=$3
mkdir -p "$out/man1" "$out/man8" "$out/completion"
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)

subcommands() {  # help text on stdin -> the names under "Subcommands:"
  awk '/^(Subcommands|SUBCOMMANDS):$/ {s=1; next} s && (/^$/ || /^[^ ]/) {s=0} s && /^  [^ ]/ {print $1}'
}
options() {  # help text on stdin -> the option names under "Options:"
  awk '/^(Options|OPTIONS):$/ {s=1; next} s && (/^$/ || /^[^ ]/) {s=0}
       s && /^  -/ {split($1, a, ","); for (i in a) if (a[i] ~ /^-/) print a[i]}'
}
roff_escape() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/" -e 's/^-/\\-/'; }

# Walks the subcommand tree: prints "path" lines (space-separated words), depth first.
walk() {
  local path=("$@") h sub
  h=$("$bin/ibfabric" "${path[@]}" --help)
  echo "${path[*]}"
  for sub in $(subcommands <<<"$h"); do walk "${path[@]}" "$sub"; done
}
mapfile -t paths < <(walk | sed '1{/^$/d}')

# ibfabric.1
{
  echo ".TH IBFABRIC 1 \"$date\" \"ibfabric $version\" \"User Commands\""
  echo ".SH NAME"
  echo "ibfabric \\- compare an InfiniBand fabric with its plan, port by port"
  echo ".SH SYNOPSIS"
  echo ".B ibfabric"
  echo "\\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]"
  echo ".SH DESCRIPTION"
  echo ".nf"
  "$bin/ibfabric" --help | roff_escape
  echo ".fi"
  for p in "${paths[@]}"; do
    echo ".SH \"ibfabric $p\""
    echo ".nf"
    # shellcheck disable=SC2086
    "$bin/ibfabric" $p --help | roff_escape
    echo ".fi"
  done
  echo ".SH SEE ALSO"
  echo "ibfabricd(8), opensm(8), ibnetdiscover(8); /usr/share/doc/ibfabric/docs/"
} >"$out/man1/ibfabric.1"

# ibfabricd.8
{
  echo ".TH IBFABRICD 8 \"$date\" \"ibfabric $version\" \"System Administration\""
  echo ".SH NAME"
  echo "ibfabricd \\- live InfiniBand fabric checks from OpenSM plugin snapshots, served over HTTP"
  echo ".SH SYNOPSIS"
  echo ".B ibfabricd"
  echo "[\\fIOPTIONS\\fR]"
  echo ".SH DESCRIPTION"
  echo ".nf"
  "$bin/ibfabricd" --help | roff_escape
  echo ".fi"
  echo ".SH FILES"
  echo "/etc/ibfabric/ibfabricd.yaml, /run/ibfabric/osm.sock, /var/lib/ibfabric/"
  echo ".SH SEE ALSO"
  echo "ibfabric(1), opensm(8)"
} >"$out/man8/ibfabricd.8"

# bash completion: one case per subcommand path, completing its subcommands and options.
{
  echo "# bash completion for ibfabric $version (generated from --help by gen-man-completion.sh)"
  echo "_ibfabric() {"
  echo "  local cur=\${COMP_WORDS[COMP_CWORD]} path= w i"
  echo "  for ((i = 1; i < COMP_CWORD; i++)); do w=\${COMP_WORDS[i]}; [[ \$w == -* ]] && continue"
  echo "    case \"\$path \$w\" in"
  for p in "${paths[@]}"; do
    [ -n "$p" ] && echo "      \" $p\") path=\" $p\" ;;"
  done
  echo "    esac; done"
  echo "  local words"
  echo "  case \"\$path\" in"
  for p in "" "${paths[@]}"; do
    # shellcheck disable=SC2086
    h=$("$bin/ibfabric" $p --help)
    words=$( (subcommands <<<"$h"; options <<<"$h") | tr '\n' ' ')
    echo "    \"${p:+ $p}\") words=\"$words\" ;;"
  done
  echo "  esac"
  echo "  COMPREPLY=(\$(compgen -W \"\$words\" -- \"\$cur\"))"
  echo "  [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=(\$(compgen -f -- \"\$cur\"))"
  echo "}"
  echo "complete -F _ibfabric ibfabric"
} >"$out/completion/ibfabric"
echo "gen-man-completion: ${#paths[@]} subcommands -> $out/man1/ibfabric.1, $out/man8/ibfabricd.8, $out/completion/ibfabric"
