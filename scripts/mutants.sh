#!/usr/bin/env bash
# Mutation run over the core logic (not part of CI). Applies each mutant listed below, one at a
# time, to a scratch clone of the committed HEAD, builds only the test targets that mutant names
# (incrementally, with ccache), runs those unit-test binaries, and prints killed/survived per mutant
# and the ratio. A mutant is killed when a test binary fails (a failed assertion, a crash or the
# timeout); a mutant that does not compile is reported apart and counted in neither. Results and
# what each survivor means: docs/testing.md.
#
#   scripts/mutants.sh                  # every mutant (about an hour on this 2-core machine under load)
#   scripts/mutants.sh --only wire      # mutants whose id contains "wire" (regex on the id)
#   scripts/mutants.sh --list           # ids, files and targets, nothing built
#   scripts/mutants.sh --check          # each search text occurs exactly once in HEAD; nothing built
# Environment: JOBS (2), MUTANTS_DIR (scratch; default a new /tmp/ibf-mutants-XXXXXX, removed at the
# end unless KEEP=1), MUTANT_TIMEOUT (seconds per test binary, 300).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JOBS=${JOBS:-2}
TIMEOUT=${MUTANT_TIMEOUT:-300}
only=""
mode=run
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only=$2; shift 2 ;;
    --list) mode=list; shift ;;
    --check) mode=check; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "mutants.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# id ::: file ::: text to find (exactly once) ::: replacement ::: test targets (space separated)
MUTANTS=$(cat <<'EOF'
checks-intruder-guard ::: checks/src/check.cpp ::: if (match_.claimed[m] >= plan_.nodes.size()) return false;  // the far node ::: if (false) return false;  // the far node ::: checks_test
checks-below-by-halves ::: checks/src/check.cpp ::: if (plan.known() && act.known()) return act.gbps() + 1e-9 < plan.gbps(); ::: if (false) return false; ::: checks_test
checks-below-speed-le ::: checks/src/check.cpp ::: act.speed != Speed::Unknown && act.speed < plan.speed) return true; ::: act.speed != Speed::Unknown && act.speed <= plan.speed) return true; ::: checks_test
checks-below-gbps-le ::: checks/src/check.cpp ::: return act.gbps() + 1e-9 < plan.gbps(); ::: return act.gbps() - 1e-9 < plan.gbps(); ::: checks_test
checks-disagree-speed ::: checks/src/check.cpp ::: x.speed != y.speed) return true; ::: x.speed != y.speed) return false; ::: checks_test
checks-endpoint-port-order ::: checks/src/check.cpp ::: if (x.port != y.port) return x.port < y.port ? -1 : 1; ::: if (x.port != y.port) return x.port < y.port ? 1 : -1; ::: checks_test
checks-kind-order ::: checks/src/check.cpp ::: if (x.kind != y.kind) return report_rank(x.kind) < report_rank(y.kind); ::: if (x.kind != y.kind) return report_rank(x.kind) > report_rank(y.kind); ::: checks_test
checks-width-low-message ::: checks/src/check.cpp ::: lanes(act.width) < lanes(l.rate->width); ::: lanes(act.width) > lanes(l.rate->width); ::: checks_test
checks-host-round-first ::: checks/src/check.cpp ::: if (round == 0 && (use_a ? a_sw : b_sw)) continue; ::: if (false) continue; ::: checks_test
checks-mtu-below-plan ::: checks/src/check.cpp ::: ((ma && ma < *l.mtu) || (mb && mb < *l.mtu)) ::: ((ma && ma < *l.mtu)) ::: checks_test
model-fdr-data-rate ::: model/src/rate.cpp ::: {Speed::FDR, "FDR", 14.0625 * 64 / 66, 14.0625}, ::: {Speed::FDR, "FDR", 14.0, 14.0625}, ::: model_test checks_test
model-fdr10-data-rate ::: model/src/rate.cpp ::: {Speed::FDR10, "FDR10", 10.0, 10.3125}, ::: {Speed::FDR10, "FDR10", 10.3125, 10.3125}, ::: model_test checks_test
model-edr-signal ::: model/src/rate.cpp ::: {Speed::EDR, "EDR", 25.0, 25.78125}, ::: {Speed::EDR, "EDR", 25.0, 25.0}, ::: model_test
model-fdr-nominal ::: model/src/rate.cpp ::: {14, Speed::FDR} ::: {13.64, Speed::FDR} ::: model_test
model-x2-lanes ::: model/src/rate.cpp ::: case Width::X2: return 2; ::: case Width::X2: return 4; ::: model_test checks_test
model-x12-parse ::: model/src/rate.cpp ::: if (n == "12") return Width::X12; ::: if (n == "12") return Width::X8; ::: model_test
model-mtu-code-range ::: model/src/rate.cpp ::: code >= 1 && code <= 5 ? 128 << code : 0; ::: code >= 1 && code <= 6 ? 128 << code : 0; ::: model_test
model-max-speed-first ::: model/src/rate.cpp ::: if (m & speed_bit(i.speed)) best = i.speed; ::: if ((m & speed_bit(i.speed)) && best == Speed::Unknown) best = i.speed; ::: model_test
model-lane-rate-tolerance ::: model/src/rate.cpp ::: if (std::fabs(*v - i.signal) < 1e-3) return i.speed; ::: if (std::fabs(*v - i.signal) < 0.5) return i.speed; ::: model_test
model-name-mf0 ::: model/src/fabric.cpp ::: if (!name.empty()) return std::string(name); ::: if (false) return std::string(name); ::: model_test
dumps-port-zero ::: dumps/src/ibnetdiscover.cpp ::: if (port < 1 || port > node.num_ports()) ::: if (port < 0 || port > node.num_ports()) ::: dumps_test
dumps-remote-port-zero ::: dumps/src/ibnetdiscover.cpp ::: if (l.rport < 1 || l.rport > rn.num_ports()) ::: if (l.rport > rn.num_ports()) ::: dumps_test
dumps-iblinkinfo-port-zero ::: dumps/src/iblinkinfo.cpp ::: if (port < 1) c.fail_at(c.pos() - 1, "port 0 ::: if (port < 0) c.fail_at(c.pos() - 1, "port 0 ::: dumps_test
dumps-duplicate-port ::: dumps/src/ibnetdiscover.cpp ::: if (seen_ports_[static_cast<size_t>(port)]) ::: if (false) ::: dumps_test
dumps-ends-disagree-port ::: dumps/src/ibnetdiscover.cpp ::: if (lp.peer != *rid || lp.peer_port != l.rport) ::: if (lp.peer != *rid) ::: dumps_test
dumps-ends-disagree-rate ::: dumps/src/ibnetdiscover.cpp ::: if (l.rate.known() && lp.rate().known() && !(l.rate == lp.rate())) ::: if (false) ::: dumps_test
dumps-self-link ::: dumps/src/ibnetdiscover.cpp ::: if (*rid == l.local && l.rport == l.port) ::: if (false) ::: dumps_test
routing-half-uplinks-gate ::: routing/src/analysis.cpp ::: bool gated = s.up_links * 2 < expected_total ::: bool gated = s.up_links * 2 <= expected_total ::: routing_test
routing-tier-tie ::: routing/src/analysis.cpp ::: if (same > down) ++tier_[s], changed = true; ::: if (same >= down) ++tier_[s], changed = true; ::: routing_test
routing-mode-tie ::: routing/src/analysis.cpp ::: if (j - i >= best_n) best = s[i], best_n = j - i; ::: if (j - i > best_n) best = s[i], best_n = j - i; ::: routing_test
routing-larger-bundles-design ::: routing/src/analysis.cpp ::: if (d.actual == 0) continue;  // fewer, larger bundles ::: if (false) continue;  // fewer, larger bundles ::: routing_test
routing-design-group-size ::: routing/src/analysis.cpp ::: bool design_group = same_count >= 3 && ::: bool design_group = same_count >= 2 && ::: routing_test
routing-upper-majority ::: routing/src/analysis.cpp ::: if (c * 2 > static_cast<int>(peers.size()) || bundle_to(s, u) > 0) ::: if (c * 2 > static_cast<int>(peers.size())) ::: routing_test
routing-free-port-named ::: routing/src/analysis.cpp ::: int pa = free_low.size() == 1 && missing == 1 ? free_low[0] : 0; ::: int pa = !free_low.empty() ? free_low[0] : 0; ::: routing_test
routing-uplink-port-two-thirds ::: routing/src/analysis.cpp ::: if (up_use[p] * 3 < static_cast<int>(group.size()) * 2) return; ::: if (up_use[p] * 3 < static_cast<int>(group.size())) return; ::: routing_test
wire-far-port-linked ::: wire/src/wire.cpp ::: if (p->linked() || q->linked()) return "port already linked"; ::: if (p->linked()) return "port already linked"; ::: wire_test
wire-near-node-bound ::: wire/src/wire.cpp ::: if (a >= f.size() || b >= f.size()) ::: if (a > f.size() || b >= f.size()) ::: wire_test
wire-far-node-bound ::: wire/src/wire.cpp ::: if (a >= f.size() || b >= f.size()) ::: if (a >= f.size() || b > f.size()) ::: wire_test
wire-links-multiple-of-4 ::: wire/src/wire.cpp ::: if (links_.size() % 4 != 0) ::: if (links_.size() % 2 != 0) ::: wire_test
wire-lft-port-bound ::: wire/src/wire.cpp ::: if (port != kLftNoPath && port > sw.num_ports()) ::: if (port != kLftNoPath && port > sw.num_ports() + 1) ::: wire_test
wire-second-lft ::: wire/src/wire.cpp ::: if (seen[*id]++) return ::: if (seen[*id]++ > 1) return ::: wire_test
wire-range-max ::: wire/src/wire.cpp ::: if (v.u > max) fail(where, ::: if (v.u > max + 1) fail(where, ::: wire_test
controller-latest-master ::: state/src/state.cpp ::: if (!b || r.state_changed_ms > b->state_changed_ms) { ::: if (!b || r.state_changed_ms < b->state_changed_ms) { ::: state_test api_test
controller-master-tie ::: state/src/state.cpp ::: if (!b || r.state_changed_ms > b->state_changed_ms) { ::: if (!b || r.state_changed_ms >= b->state_changed_ms) { ::: state_test api_test
controller-master-connected ::: state/src/state.cpp ::: if (r.info.state != SmState::Master || !r.connected()) continue; ::: if (r.info.state != SmState::Master) continue; ::: state_test api_test
controller-second-hello-guid ::: state/src/state.cpp ::: if (conn_sm_[c] != h.sm.port_guid) return false; ::: if (conn_sm_[c] != h.sm.port_guid) conn_sm_[c] = h.sm.port_guid; ::: state_test api_test
controller-state-change-time ::: state/src/state.cpp ::: if (r.info.state != s || r.state_changed_ms == 0) r.state_changed_ms = now_ms; ::: r.state_changed_ms = now_ms; ::: state_test api_test
controller-publish-older ::: state/src/state.cpp ::: if (r.generation <= published_generation_) return false; ::: if (r.generation < published_generation_) return false; ::: state_test api_test
controller-nonmaster-ignored ::: state/src/state.cpp ::: if (m && !from_master) { ::: if (!from_master) { ::: state_test api_test
controller-queue-bound ::: state/include/ibf/check_queue.h ::: if (q.size() >= max) { ::: if (q.size() > max) { ::: state_test api_test
controller-queue-drops-newest ::: state/include/ibf/check_queue.h ::: dropped = std::move(q.front());\n        q.pop_front(); ::: dropped = std::move(q.back());\n        q.pop_back(); ::: state_test api_test
plugin-superseded-after-send ::: sm-plugin/src/sender.cpp ::: if (latest_ && picked_gen_ != latest_gen_) ++c_.snapshots_superseded; ::: if (latest_) ++c_.snapshots_superseded; ::: sm_plugin_test
plugin-trap-before-snapshot ::: sm-plugin/src/sender.cpp ::: if (!resync) send_snap(); ::: if (!resync) {} ::: sm_plugin_test
plugin-snapshot-first-on-connect ::: sm-plugin/src/sender.cpp ::: if (resync) send_snap(); ::: if (false) send_snap(); ::: sm_plugin_test
plugin-event-queue-bound ::: sm-plugin/src/sender.cpp ::: if (events_.size() >= opts_.queue) { ::: if (events_.size() > opts_.queue) { ::: sm_plugin_test
plugin-queue-depth ::: sm-plugin/src/sender.cpp ::: c.queue_depth = events_.size() + (latest_ && picked_gen_ != latest_gen_ ? 1 : 0); ::: c.queue_depth = events_.size() + (latest_ ? 1 : 0); ::: sm_plugin_test
plugin-first-connect-not-reconnect ::: sm-plugin/src/sender.cpp ::: if (ever_connected) ++c_.reconnects; ::: if (ever_connected || !ever_connected) ++c_.reconnects; ::: sm_plugin_test
plugin-option-port-range ::: sm-plugin/src/options.cpp ::: if (!port || *port < 1 || *port > 65535) ::: if (!port || *port < 0 || *port > 65535) ::: sm_plugin_test
ha-fast-needs-plugin-silent-throughout ::: ha/src/decide.cpp ::: const bool silent_throughout = m.plugin_ms < m.first_failure_ms; ::: const bool silent_throughout = true; ::: ha_engine_test
ha-step-aside-only-port-down ::: ha/src/decide.cpp ::: if (local_port_.ok && local_port_.state == 4 && !sm_gone) return reclaim_priority(me, now_ms); ::: if (false) return reclaim_priority(me, now_ms); ::: ha_engine_test
ha-step-aside-tie-by-guid ::: ha/src/decide.cpp ::: const int prio = m->info.port_guid < local_ ? m->info.priority : m->info.priority - 1; ::: const int prio = m->info.priority - 1; ::: ha_engine_test
ha-step-aside-only-below-master ::: ha/src/decide.cpp ::: sm_outranks(me.info.priority, local_, v.info.priority, g)) ::: true) ::: ha_engine_test
ha-reclaim-after-a-sweep ::: ha/src/decide.cpp ::: me.info.state != SmState::Master || me.subnet_up_ms < me.master_since_ms) return {}; ::: me.info.state != SmState::Master) return {}; ::: ha_engine_test
ha-fast-failures-count ::: ha/src/decide.cpp ::: e.fast = gone && silent_throughout && m.probe_failures >= cfg_.fast_failures && witness; ::: e.fast = gone && silent_throughout && m.probe_failures > cfg_.fast_failures && witness; ::: ha_engine_test
ha-fast-needs-plugin-gone ::: ha/src/decide.cpp ::: e.fast = gone && silent_throughout && m.probe_failures >= cfg_.fast_failures && witness; ::: e.fast = silent_throughout && m.probe_failures >= cfg_.fast_failures && witness; ::: ha_engine_test
ha-fast-needs-independent-witness ::: ha/src/decide.cpp ::: e.fast = gone && silent_throughout && m.probe_failures >= cfg_.fast_failures && witness; ::: e.fast = gone && silent_throughout && m.probe_failures >= cfg_.fast_failures && (witness || true); ::: ha_engine_test
ha-flap-window-boundary ::: ha/src/decide.cpp ::: m.process_gone_ms || span >= cfg_.flap_window_ms; ::: m.process_gone_ms || span > cfg_.flap_window_ms; ::: ha_engine_test
ha-process-gone-witness ::: ha/src/decide.cpp ::: m.process_gone_ms || span >= cfg_.flap_window_ms; ::: span >= cfg_.flap_window_ms; ::: ha_engine_test
fabric-role-suspect-ignored ::: ha/src/fabric_role.cpp ::: if (v.local_is_master && !v.local_suspect) return ::: if (v.local_is_master) return ::: ha_engine_test
fabric-role-failing-master-keeps-copy ::: ha/src/fabric_role.cpp ::: if (v.successor && *v.successor != v.local_sm) return {standby, ::: if (false) return {standby, ::: ha_engine_test
fabric-role-no-live-sm-silent ::: ha/src/fabric_role.cpp ::: if (!v.successor) return {active, ::: if (!v.successor) return {standby, ::: ha_engine_test
fabric-role-successor-inverted ::: ha/src/fabric_role.cpp ::: if (*v.successor == v.local_sm) return ::: if (*v.successor != v.local_sm) return ::: ha_engine_test
fabric-role-view-no-suspect ::: ha/src/fabric_role.cpp ::: v.local_suspect = v.local_sm && e.suspect(v.local_sm, now_ms); ::: v.local_suspect = false; ::: ha_engine_test
ha-slow-span-boundary ::: ha/src/decide.cpp ::: m.probe_failures >= cfg_.slow_failures && span >= cfg_.slow_min_ms; ::: m.probe_failures >= cfg_.slow_failures && span > cfg_.slow_min_ms; ::: ha_engine_test
ha-slow-needs-count ::: ha/src/decide.cpp ::: m.probe_failures >= cfg_.slow_failures && span >= cfg_.slow_min_ms; ::: span >= cfg_.slow_min_ms; ::: ha_engine_test
ha-failures-current ::: ha/src/decide.cpp ::: m.probe_failures > 0 && now_ms - m.last_failure_ms <= probe_window(); ::: m.probe_failures > 0; ::: ha_engine_test
ha-failures-expire-on-next ::: ha/src/engine.cpp ::: if (v.probe_failures && now_ms - v.last_failure_ms > probe_window()) forget_failures(v); ::: if (false) forget_failures(v); ::: ha_engine_test
ha-answer-resets-failures ::: ha/src/engine.cpp ::: forget_failures(v);\n        v.answer_ms = now_ms; ::: v.answer_ms = now_ms; ::: ha_engine_test
ha-closed-is-plugin-gone ::: ha/src/engine.cpp ::: return v.plugin_seen && (!v.plugin_connected || now_ms - v.plugin_ms > cfg_.heartbeat_timeout_ms); ::: return v.plugin_seen && (now_ms - v.plugin_ms > cfg_.heartbeat_timeout_ms); ::: ha_engine_test
ha-port-down-not-counted ::: ha/src/engine.cpp ::: } else if (local_port_known_ && (!local_port_.ok || local_port_.state != 4)) { ::: } else if (false) { ::: ha_engine_test
ha-port-change-forgets ::: ha/src/engine.cpp ::: if (local_port_known_ && was_active != (p.ok && p.state == 4)) ::: if (local_port_known_ && was_active != (p.ok && p.state == 4) && false) ::: ha_engine_test
ha-thaw-forgets ::: ha/src/engine.cpp ::: now_ms - v.plugin_ms > cfg_.heartbeat_timeout_ms) forget_failures(v); ::: now_ms - v.plugin_ms > cfg_.heartbeat_timeout_ms) {} ::: ha_engine_test
ha-thaw-needs-open-connection ::: ha/src/engine.cpp ::: if (v.plugin_seen && v.plugin_connected && now_ms - v.plugin_ms ::: if (v.plugin_seen && now_ms - v.plugin_ms ::: ha_engine_test
ha-master-never-dead ::: ha/src/engine.cpp ::: if (v.info.state != SmState::Master || evidence(v, now_).dead) continue; ::: if (v.info.state != SmState::Master) continue; ::: ha_engine_test
ha-relearn-dates-mastership ::: ha/src/engine.cpp ::: evidence(v, now_ms).dead) return;  // still dead (a heartbeat alone)\n    v.master_since_ms = now_ms; ::: evidence(v, now_ms).dead) return;  // still dead (a heartbeat alone) ::: ha_engine_test
ha-relearn-only-when-alive ::: ha/src/engine.cpp ::: if (new_state != SmState::Master || evidence(v, now_ms).dead) return; ::: if (new_state != SmState::Master) return; ::: ha_engine_test
ha-snapshot-is-subnet-up ::: ha/src/engine.cpp ::: if (sms_.count(self)) on_sweep(self, SweepEvent::subnet_up, now_ms); ::: if (false) on_sweep(self, SweepEvent::subnet_up, now_ms); ::: ha_engine_test
ha-sweep-rule-precedes-actcount ::: ha/src/findings.cpp ::: if (v.info.state == SmState::Master && e.not_sweeping(v, now)) continue; ::: if (false) continue; ::: ha_engine_test
ha-only-successor ::: ha/src/decide.cpp :::     if (succ != local_) {\n        say("not successor " :::     if (false) {\n        say("not successor " ::: ha_engine_test
ha-own-port-active ::: ha/src/decide.cpp :::     if (!local_port_known_ || !local_port_.ok || local_port_.state != 4) {\n        say("port down " :::     if (false) {\n        say("port down " ::: ha_engine_test
ha-sweep-timeout-boundary ::: ha/src/decide.cpp ::: if (owed < cfg_.sweep_timeout_ms) return false; ::: if (owed <= cfg_.sweep_timeout_ms) return false; ::: ha_engine_test
ha-sweep-needs-plugin ::: ha/src/decide.cpp ::: !v.sweep_owed_ms || plugin_gone(v, now_ms) || !v.plugin_seen) return false; ::: !v.sweep_owed_ms || !v.plugin_seen) return false; ::: ha_engine_test
ha-subnet-up-pays ::: ha/src/engine.cpp :::         v.sweep_owed_ms = 0;\n        v.sweep_owed_why.clear(); :::         v.sweep_owed_why.clear(); ::: ha_engine_test
ha-unwedge-attempts ::: ha/src/decide.cpp ::: if (me.forced_sweeps >= cfg_.heal_attempts) { ::: if (me.forced_sweeps > cfg_.heal_attempts) { ::: ha_engine_test
ha-unwedge-rate ::: ha/src/decide.cpp :::     if (heal_ms_ && now_ms - heal_ms_ < cfg_.retry_after_ms) return {};\n    heal_ms_ = now_ms;\n    ++me.forced_sweeps; :::     heal_ms_ = now_ms;\n    ++me.forced_sweeps; ::: ha_engine_test
ha-wedge-grace ::: ha/src/decide.cpp ::: if (now_ms - v.sweep_owed_ms < cfg_.sweep_timeout_ms + grace) return {}; ::: if (now_ms - v.sweep_owed_ms < cfg_.sweep_timeout_ms + grace * 0) return {}; ::: ha_engine_test
ha-wedge-needs-fence ::: ha/src/decide.cpp :::     if (cfg_.fence.empty()) {\n        say("wedged no fence " :::     if (false) {\n        say("wedged no fence " ::: ha_engine_test
ha-heal-escalates ::: ha/src/decide.cpp ::: if (heal_count_ >= cfg_.heal_attempts) { ::: if (false) { ::: ha_engine_test
ha-heal-episode-resets ::: ha/src/decide.cpp :::         heal_count_ = 0;\n        split_brain_.reset(); :::         split_brain_.reset(); ::: ha_engine_test
ha-priorities-exchanged ::: ha/src/findings.cpp ::: v.info.priority != p->second && !exchanged) ::: v.info.priority != p->second && (!exchanged || true)) ::: ha_engine_test
ha-priorities-same-set ::: ha/src/findings.cpp :::     return want == have; :::     return true; ::: ha_engine_test
ha-not-sweeping-finding ::: ha/src/findings.cpp ::: if (!e.not_sweeping(v, now, &why)) continue; ::: if (!e.not_sweeping(v, now, &why) || true) continue; ::: ha_engine_test
ha-switchover-refuses-silent-target ::: ha/src/ops.cpp ::: if (!t.alive || t.state != SmState::Standby) ::: if (t.state != SmState::Standby) ::: ha_ops_test
ha-switchover-resend-rate ::: ha/src/switchover.cpp ::: if (sent_ms_ && s.text == sent_text_ && now_ms - sent_ms_ < t_.resend_ms) return todo; ::: if (false) return todo; ::: ha_ops_test
ha-switchover-step-timeout ::: ha/src/switchover.cpp ::: if (now_ms - step_since_ms_ > t_.step_timeout_ms) { ::: if (false) { ::: ha_ops_test
ha-switchover-silent-sm-aborts ::: ha/src/switchover.cpp :::         if (!v || !v->alive) { :::         if (!v) { ::: ha_ops_test
ha-rollback-priority-first ::: ha/src/switchover.cpp ::: if (!handed_over && m && m->alive && m->priority != master_priority_) ::: if (false) ::: ha_ops_test
ha-rollback-standby ::: ha/src/switchover.cpp ::: if (o && o->alive && o->state == SmState::NotActive) ::: if (false) ::: ha_ops_test
ha-rollback-settled ::: ha/src/switchover.cpp ::: settled = is(b, SmState::Master) && is(o, SmState::Standby); ::: settled = is(b, SmState::Master); ::: ha_ops_test
ha-rollback-timeout ::: ha/src/switchover.cpp ::: if (now_ms - rollback_since_ms_ > t_.rollback_timeout_ms) { ::: if (false) { ::: ha_ops_test
EOF
)

# Replaces the one occurrence of $FIND by $REPL in $1 (\n in either means a newline); fails unless
# there is exactly one occurrence.
apply() {
  FIND=$2 REPL=$3 python3 - "$1" <<'PY'
import os, sys
p = sys.argv[1]
find = os.environ["FIND"].replace("\\n", "\n")
repl = os.environ["REPL"].replace("\\n", "\n")
s = open(p).read()
n = s.count(find)
if n != 1:
    sys.exit(f"{p}: the text occurs {n} times, not once: {find!r}")
if os.environ.get("DRY") != "1":
    open(p, "w").write(s.replace(find, repl))
PY
}

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

ids=() files=() finds=() repls=() targets=()
while IFS= read -r line; do
  [ -z "$line" ] && continue
  f=()
  rest=$line
  while [[ $rest == *" ::: "* ]]; do f+=("${rest%% ::: *}"); rest=${rest#* ::: }; done
  f+=("$rest")
  [ ${#f[@]} -eq 5 ] || { echo "mutants.sh: bad mutant line: $line" >&2; exit 2; }
  id=$(trim "${f[0]}")
  if [ -n "$only" ] && ! [[ $id =~ $only ]]; then continue; fi
  ids+=("$id"); files+=("$(trim "${f[1]}")"); finds+=("${f[2]}"); repls+=("${f[3]}"); targets+=("$(trim "${f[4]}")")
done <<<"$MUTANTS"
[ ${#ids[@]} -gt 0 ] || { echo "mutants.sh: no mutant matches --only '$only'" >&2; exit 2; }

if [ "$mode" = list ]; then
  for i in "${!ids[@]}"; do printf '%-36s %-36s %s\n' "${ids[$i]}" "${files[$i]}" "${targets[$i]}"; done
  echo "${#ids[@]} mutants"
  exit 0
fi
if [ "$mode" = check ]; then
  bad=0
  for i in "${!ids[@]}"; do DRY=1 apply "$ROOT/${files[$i]}" "${finds[$i]}" "${repls[$i]}" || bad=1; done
  [ $bad -eq 0 ] && echo "${#ids[@]} mutants: every search text occurs exactly once"
  exit $bad
fi

SCRATCH=${MUTANTS_DIR:-$(mktemp -d /tmp/ibf-mutants-XXXXXX)}
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH"; }
trap cleanup EXIT
SRC=$SCRATCH/src
B=$SRC/build
if [ ! -d "$SRC/.git" ]; then
  git clone -q --shared "$ROOT" "$SRC"
fi
git -C "$SRC" checkout -q --detach "$(git -C "$ROOT" rev-parse HEAD)"
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ]; then
  echo "mutants.sh: note: uncommitted changes in $ROOT are not part of the run (it uses HEAD)" >&2
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # Same base dir layout as scripts/build.sh, so objects of unchanged files come from the cache.
  export CCACHE_BASEDIR=$SCRATCH CCACHE_NOHASHDIR=1
fi
cmake -S "$SRC" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBF_WERROR=ON "${launcher[@]}" >/dev/null

all_targets=$(printf '%s\n' "${targets[@]}" | tr ' ' '\n' | sort -u | tr '\n' ' ')
binary() { find "$B/bin" "$B/tests" -type f -name "$1" -perm -u+x 2>/dev/null | head -1; }
# Runs the test binaries of a target list; returns non-zero when one fails (or times out).
run_tests() {
  local t bin
  for t in $1; do
    bin=$(binary "$t")
    [ -n "$bin" ] || { echo "no binary for $t" >>"$2"; return 1; }
    (cd "$(dirname "$bin")" && timeout "$TIMEOUT" "$bin" --gtest_brief=1) >>"$2" 2>&1 || return 1
  done
}

echo "baseline: building and running $all_targets"
# shellcheck disable=SC2086
cmake --build "$B" -j"$JOBS" --target $all_targets >"$SCRATCH/baseline.log" 2>&1 ||
  { tail -30 "$SCRATCH/baseline.log"; echo "mutants.sh: the unmutated tree does not build" >&2; exit 1; }
run_tests "$all_targets" "$SCRATCH/baseline.log" ||
  { tail -30 "$SCRATCH/baseline.log"; echo "mutants.sh: the unmutated tests fail; fix them first" >&2; exit 1; }

killed=0 survived=0 broken=0
survivors=()
start=$(date +%s)
for i in "${!ids[@]}"; do
  id=${ids[$i]} file=${files[$i]} log=$SCRATCH/$id.log
  apply "$SRC/$file" "${finds[$i]}" "${repls[$i]}"
  t0=$(date +%s)
  # shellcheck disable=SC2086
  if ! cmake --build "$B" -j"$JOBS" --target ${targets[$i]} >"$log" 2>&1; then
    result="BUILD-ERROR"; broken=$((broken + 1))
  elif run_tests "${targets[$i]}" "$log"; then
    result="SURVIVED"; survived=$((survived + 1)); survivors+=("$id")
  else
    result="killed"; killed=$((killed + 1))
  fi
  git -C "$SRC" checkout -q -- "$file"
  printf '%-12s %-36s %-32s %4ss\n' "$result" "$id" "${targets[$i]}" "$(( $(date +%s) - t0 ))"
done
total=$((killed + survived))
echo "----"
printf 'killed %d of %d (%s%%), survived %d, did not build %d; %d s; commit %s\n' "$killed" "$total" \
  "$(awk -v k=$killed -v t=$total 'BEGIN { printf "%.1f", t ? 100 * k / t : 0 }')" "$survived" "$broken" \
  "$(( $(date +%s) - start ))" "$(git -C "$SRC" rev-parse --short HEAD)"
[ ${#survivors[@]} -eq 0 ] || echo "survivors: ${survivors[*]}"
if [ "${KEEP:-0}" = 1 ]; then  # a kept scratch tree is left built unmutated, ready for a re-run
  # shellcheck disable=SC2086
  cmake --build "$B" -j"$JOBS" --target $all_targets >/dev/null 2>&1 || true
fi
