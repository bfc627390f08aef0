"""docs/ha-facts.md section 5, "Graceful switchover": two OpenSMs on a 4-host net, A (priority 15,
the lower GUID) master, B (14) standby. Usage: switchover.py raise|demote [RUNS]
  raise:  the old mechanism: lower A to 14, raise B to 15 (SIGHUP each); then back, raise A to 15.
  demote: ibfabric's: lower the master below the target (SIGHUP; it hands over by itself), raise the new
          master back to 15 (SIGHUP; a MASTER sends no trap), then restore the old master to 14 while it is
          NOT_ACTIVE: SubnSet(SMInfo) DISABLE, SIGHUP, SubnSet(SMInfo) STANDBY. There and back.
Prints, per direction: SIGHUP -> new master's "Entering MASTER state" and -> its "SUBNET UP", the SMInfo
states/priorities seen from a third node afterwards, and the LIDs of all four hosts."""
import json, os, re, signal, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from halab import Lab, wait_text, log_events

NET = "".join(['Switch 8 "sw1"\n'] + ['[%d] "node%03d"[1]\n' % (i, i) for i in range(1, 5)] +
              ['\nHca 1 "node%03d"\n[1] "sw1"[%d]\n' % (i, i) for i in range(1, 5)])
HANDOVER, DISABLE, STANDBY = 1, 3, 4


def set_prio(p, prio):
    path = os.path.join(p.dir, "opensm.conf")
    text = re.sub(r"^sm_priority \d+$", "sm_priority %d" % prio, open(path).read(), flags=re.M)
    open(path, "w").write(text)
    os.kill(p.pid, signal.SIGHUP)


def sminfo(lab, lids):
    return [(x["state"], x["priority"]) for x in lab.probe("node003", ["get:%d" % l for l in lids])]


def host_lids(lab):
    return [lab.probe("node%03d" % i, ["local"])[0]["lid"] for i in range(1, 5)]


def wait_sminfo(lab, lid, state, prio, timeout):
    end = time.time() + timeout
    while time.time() < end:
        r = lab.probe("node003", ["get:%d" % lid])[0]
        if r["state"] == state and (prio is None or r["priority"] == prio):
            return True
        time.sleep(0.02)
    return False


def switch(lab, mech, old, new, lid_old, lid_new, host_old, p_old, p_new, low):
    sampler = lab.armed_probe("node004", ["get:%d" % l for _ in range(300) for l in (lid_new, lid_old)])
    sampler.stdin.write("\n")
    sampler.stdin.flush()
    t0 = time.time()
    before = os.path.getsize(new.log)
    if mech == "raise":  # the first design: the old master to the target's priority, the target above it
        set_prio(old, p_new)
        time.sleep(0.5)
        set_prio(new, p_old)
    else:
        set_prio(old, low)
    ok_m = wait_text(new.log, "Entering MASTER state", 10, after=before)
    if not ok_m:
        print("no handover; logs kept in", lab.dir, flush=True)
        os.environ["IBF_KEEP_TMP"] = "1"
    ok_u = wait_text(new.log, "SUBNET UP", 10, after=before)
    m = [t for t in log_events(new.log, "Entering MASTER state") if t >= t0 - 0.01]
    u = [t for t in log_events(new.log, "SUBNET UP") if t >= t0 - 0.01]
    res = {"master_ms": round((m[0] - t0) * 1000, 1) if m else None,
           "subnet_up_ms": round((u[0] - t0) * 1000, 1) if u else None}
    if mech == "demote" and ok_m:
        set_prio(new, p_old)                       # the new master back to the top: no trap from a MASTER
        assert wait_sminfo(lab, lid_new, "MASTER", p_old, 5)
        lab.probe(host_old, ["set:%d:%d:3" % (lid_old, DISABLE)])
        assert wait_sminfo(lab, lid_old, "NOTACTIVE", None, 5)
        set_prio(old, p_new)                       # while NOT_ACTIVE: no trap either
        assert wait_sminfo(lab, lid_old, "NOTACTIVE", p_new, 5)
        lab.probe(host_old, ["set:%d:%d:3" % (lid_old, STANDBY)])
        assert wait_sminfo(lab, lid_old, "STANDBY", p_new, 5)
    res["done_ms"] = round((time.time() - t0) * 1000, 1)
    out = [json.loads(l) for l in sampler.stdout.read().splitlines() if l.startswith("{")]
    # (new, old) queried in that order: both MASTER means the new one was master before the old one stopped
    pairs = [(out[i]["state"], out[i + 1]["state"]) for i in range(0, len(out) - 1, 2)
             if out[i]["status"] == "ok" and out[i + 1]["status"] == "ok"]
    res["samples"] = len(pairs)
    res["sampled_ms"] = round(sum(x["rtt_ms"] for x in out), 1)
    res["double_master_samples"] = sum(1 for p in pairs if p == ("MASTER", "MASTER"))
    res["no_master_samples"] = sum(1 for p in pairs if "MASTER" not in p)
    return res


def run(mech):
    lab = Lab(NET)
    try:
        a = lab.opensm("A", "node001", 15)
        assert wait_text(a.log, "SUBNET UP", 30)
        b = lab.opensm("B", "node002", 14)
        assert wait_text(b.log, "Entering STANDBY state", 30)
        # A's SMInfo query may have raced B's start: B answers only once it knows its own port, ibsim
        # never times the query out, and A's sweeps wait for it forever. Such a start is not measured.
        before = os.path.getsize(a.log)
        os.kill(a.pid, signal.SIGHUP)
        if not wait_text(a.log, "SUBNET UP", 3, after=before):
            print("start: A wedged by its SMInfo query to the starting B; run skipped", flush=True)
            return
        la, lb = lab.probe("node001", ["local"])[0]["lid"], lab.probe("node002", ["local"])[0]["lid"]
        lids0 = host_lids(lab)
        there = switch(lab, mech, a, b, la, lb, "node001", 15, 14, 13)
        time.sleep(0.5)
        there.update(sminfo=sminfo(lab, [la, lb]), lids_same=host_lids(lab) == lids0)
        print("there", there, flush=True)
        back = switch(lab, mech, b, a, lb, la, "node002", 15, 14, 14 if mech == "demote" else 13)
        time.sleep(0.5)
        back.update(sminfo=sminfo(lab, [la, lb]), lids_same=host_lids(lab) == lids0)
        print("back ", back, flush=True)
    finally:
        lab.close()


if __name__ == "__main__":
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
        run(sys.argv[1])
