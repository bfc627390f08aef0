#!/bin/bash
# unit_sandbox.sh: run a command in the sandbox a systemd unit file describes, without systemd
# (this CI has no systemd as PID 1 and no systemd-nspawn). The sandbox is generated from the
# unit's [Service] properties, so a test using it cannot drift from the shipped unit:
#   credentials    User= Group= SupplementaryGroups= (setpriv; the user's own groups as initgroups)
#   capabilities   CapabilityBoundingSet= AmbientCapabilities= NoNewPrivileges=
#   devices        PrivateDevices= (a fresh /dev with the pseudo devices only), DevicePolicy= and
#                  DeviceAllow= (a cgroup-v1 devices cgroup, systemd's "closed" list + the allowed)
#   file system    ProtectSystem= (strict/full/yes: read-only remounts) ReadWritePaths=
#                  ProtectHome= PrivateTmp= ProtectProc= (a procfs with hidepid=) UMask=
#                  RuntimeDirectory= StateDirectory= (+ ...Mode=): made, given to User=, writable
# Every other [Service] property is listed on stderr as not reproduced (seccomp filters,
# address families, the Protect* kernel knobs). Lists accumulate, an empty assignment resets
# them, a later single value wins: the merge systemd does for drop-ins.
#
#   unit_sandbox.sh [--set KEY=VALUE]... [--major NAME=NUM]... UNIT -- COMMAND [ARG]...
#     --set       one more assignment after the unit (a drop-in line), e.g. --set PrivateDevices=yes
#     --major     the major of a char-NAME DeviceAllow= group absent from /proc/devices (no module)
# Needs root, util-linux unshare/setpriv, and a writable /sys/fs/cgroup/devices when the unit
# restricts devices. Exit status: the command's; 70 when the sandbox could not be built.
set -euo pipefail

sets=() majors=()
while [ $# -gt 0 ]; do
  case $1 in
    --set) sets+=("$2"); shift 2 ;;
    --major) majors+=("$2"); shift 2 ;;
    *) break ;;
  esac
done
unit=$1; shift
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: unit_sandbox.sh [--set K=V]... [--major NAME=NUM]... UNIT -- COMMAND..." >&2; exit 64; }

declare -A one=()
declare -A list=([DeviceAllow]="" [ReadWritePaths]="" [SupplementaryGroups]="" [CapabilityBoundingSet]="" [AmbientCapabilities]="")
declare -A reproduced=([User]=1 [Group]=1 [SupplementaryGroups]=1 [CapabilityBoundingSet]=1 [AmbientCapabilities]=1
  [NoNewPrivileges]=1 [PrivateDevices]=1 [DevicePolicy]=1 [DeviceAllow]=1 [ProtectSystem]=1 [ReadWritePaths]=1
  [ProtectHome]=1 [PrivateTmp]=1 [ProtectProc]=1 [UMask]=1 [ExecStart]=1 [Type]=1 [ExecReload]=1
  [RuntimeDirectory]=1 [RuntimeDirectoryMode]=1 [RuntimeDirectoryPreserve]=1 [StateDirectory]=1 [StateDirectoryMode]=1
  [Restart]=1 [RestartSec]=1 [StandardInput]=1 [StandardOutput]=1 [StandardError]=1 [RuntimeMaxSec]=1)
skipped=()

assign() {  # KEY VALUE
  local k=$1 v=$2
  one["seen:$k"]=1
  if [ -n "${list[$k]+x}" ]; then
    if [ -z "$v" ]; then list[$k]=""
    elif [ "$k" = DeviceAllow ]; then list[$k]+="$v"$'\n'
    else list[$k]+=" $v"; fi
  else
    one[$k]=$v
  fi
  [ -n "${reproduced[$k]+x}" ] || [[ " ${skipped[*]} " == *" $k "* ]] || skipped+=("$k")
}

section=""
while IFS= read -r line || [ -n "$line" ]; do
  line=${line#"${line%%[![:space:]]*}"}
  case $line in ''|'#'*|';'*) continue ;; '['*) section=$line; continue ;; esac
  [ "$section" = "[Service]" ] && [[ $line == *=* ]] || continue
  assign "${line%%=*}" "${line#*=}"
done <"$unit"
for s in "${sets[@]}"; do assign "${s%%=*}" "${s#*=}"; done
yes_() { case ${1:-} in yes|true|1|on) return 0 ;; *) return 1 ;; esac; }
[ ${#skipped[@]} -eq 0 ] || echo "unit_sandbox: $(basename "$unit"): not reproduced: ${skipped[*]}" >&2

# --- the device cgroup (systemd's DevicePolicy=closed list, then DeviceAllow=) ---------------
major_of() {  # NAME: its char major from /proc/devices, else --major
  local m
  m=$(awk -v n="$1" '/^Character devices:/{c=1;next} /^$/{c=0} c && $2==n {print $1}' /proc/devices)
  if [ -z "$m" ]; then
    for e in "${majors[@]}"; do [ "${e%%=*}" = "$1" ] && m=${e#*=}; done
    [ -n "$m" ] && echo "unit_sandbox: char-$1 is not in /proc/devices (module not loaded): major $m from --major" >&2
  fi
  echo "$m"
}
cg=""
policy=${one[DevicePolicy]:-auto}
if yes_ "${one[PrivateDevices]:-no}" || [ "$policy" != auto ] || [ -n "${list[DeviceAllow]}" ]; then
  cg=/sys/fs/cgroup/devices/ibf-unit-sandbox-$$
  mkdir "$cg" || { echo "unit_sandbox: cannot create $cg (cgroup v1 devices needed)" >&2; exit 70; }
  trap 'rmdir "$cg" 2>/dev/null || true' EXIT
  if yes_ "${one[PrivateDevices]:-no}" || [ "$policy" != auto ]; then
    echo a >"$cg/devices.deny"
    if [ "$policy" != strict ]; then
      for d in "c 1:3 rwm" "c 1:5 rwm" "c 1:7 rwm" "c 1:8 rwm" "c 1:9 rwm" "c 5:0 rwm" "c 5:2 rwm" "c 136:* rwm"; do
        echo "$d" >"$cg/devices.allow"
      done
    fi
  fi
  while IFS= read -r entry; do
    [ -n "$entry" ] || continue
    spec=${entry%% *} perms=${entry#* }; [ "$perms" = "$entry" ] && perms=rwm
    case $spec in
      char-*) m=$(major_of "${spec#char-}"); [ -n "$m" ] && echo "c $m:* $perms" >"$cg/devices.allow" ;;
      /dev/*) [ -e "$spec" ] && echo "$(stat -c '%F' "$spec" | grep -q character && echo c || echo b) $((0x$(stat -c %t "$spec"))):$((0x$(stat -c %T "$spec"))) $perms" >"$cg/devices.allow" ;;
    esac
  done <<<"${list[DeviceAllow]}"
fi

# --- credentials ---------------------------------------------------------------------------
user=${one[User]:-root}
priv=(setpriv)
if [ "$user" != root ]; then
  uid=$(getent passwd "$user" | cut -d: -f3) || { echo "unit_sandbox: no user $user" >&2; exit 70; }
  group=${one[Group]:-$(id -gn "$user")}
  groups=$(id -Gn "$user" | tr ' ' '\n')
  for g in ${list[SupplementaryGroups]}; do
    getent group "$g" >/dev/null || { echo "unit_sandbox: SupplementaryGroups=$g: no such group (systemd refuses to start the unit)" >&2; exit 70; }
    groups+=$'\n'$g
  done
  priv+=(--reuid "$uid" --regid "$(getent group "$group" | cut -d: -f3)"
         --groups "$(sort -u <<<"$groups" | grep . | while read -r g; do getent group "$g" | cut -d: -f3; done | paste -sd,)")
fi
caps="-all"
for c in ${list[CapabilityBoundingSet]}; do c=${c#CAP_}; caps+=",+${c,,}"; done
if [ -n "${one[seen:CapabilityBoundingSet]+x}" ]; then
  priv+=(--bounding-set "$caps" --inh-caps -all)
fi
yes_ "${one[NoNewPrivileges]:-no}" && priv+=(--no-new-privs)

# --- RuntimeDirectory=, StateDirectory=: made for the unit's user, writable under ProtectSystem= ---
rw=""
for kind in Runtime:/run State:/var/lib; do
  for d in ${one[${kind%%:*}Directory]:-}; do
    mkdir -p "${kind#*:}/$d"
    chmod "${one[${kind%%:*}DirectoryMode]:-0755}" "${kind#*:}/$d"
    [ "$user" = root ] || chown "$user:$group" "${kind#*:}/$d"
    rw+=" ${kind#*:}/$d"
  done
done

# --- the mount namespace (a script run by unshare) ------------------------------------------
for p in ${list[ReadWritePaths]}; do p=${p#-}; rw+=" $p"; done
inner=$(cat <<EOF
set -e
cmd=("\$@")
mount --make-rprivate /
if [ "$(yes_ "${one[PrivateDevices]:-no}" && echo y)" = y ]; then
  mount -t tmpfs -o mode=0755,nosuid tmpfs /dev
  for d in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
    set -- \$d; mknod -m 0666 /dev/\$1 c \$2 \$3
  done
fi
case "${one[ProtectSystem]:-no}" in
  strict) ro=\$(awk '{print \$5}' /proc/self/mountinfo | grep -vE '^/(dev|proc|sys)(/|\$)' | sort -u) ;;
  full) ro="/usr /boot /efi /etc" ;;
  yes|true) ro="/usr /boot /efi" ;;
  *) ro="" ;;
esac
for m in \$ro; do
  [ -d "\$m" ] || continue
  mountpoint -q "\$m" || mount --bind "\$m" "\$m"
  mount -o remount,bind,ro "\$m" 2>/dev/null || true
done
for p in $rw; do
  [ -e "\$p" ] || continue
  mount --bind "\$p" "\$p"; mount -o remount,bind,rw "\$p"
done
if [ "$(yes_ "${one[ProtectHome]:-no}" && echo y)" = y ]; then
  for h in /home /root /run/user; do [ -d "\$h" ] && mount -t tmpfs -o mode=0755,ro tmpfs "\$h"; done
fi
if [ "$(yes_ "${one[PrivateTmp]:-no}" && echo y)" = y ]; then
  mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=1777 tmpfs /var/tmp
fi
case "${one[ProtectProc]:-default}" in
  invisible|noaccess|ptraceable) mount -t proc -o hidepid=${one[ProtectProc]:-default} proc /proc ;;
esac
umask ${one[UMask]:-0022}
exec "\${cmd[@]}"
EOF
)
set +e
# The command in the background (stdin kept: the helper's connection is its stdin) so that a
# SIGTERM to this script reaches it (its pid stays the command's through every exec) and the
# device cgroup is still removed afterwards.
(
  [ -z "$cg" ] || echo "$BASHPID" >"$cg/cgroup.procs"
  exec unshare --mount --propagation private -- bash -c "$inner" unit-sandbox "${priv[@]}" -- "$@"
) <&0 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
wait "$child"; rc=$?
while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done
exit $rc
