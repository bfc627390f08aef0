"""docs/ha-facts.md, "HANDOVER or DISCOVER": kill -9 of the master on the 324-host example fabric,
then SubnSet(SMInfo) <modifier> to the standby from a second umad2sim client on the standby's own CA
(already attached, as ibfabricd would be). Measures kill -> "Entering MASTER state" and
kill -> "SUBNET UP" in the standby's log. Usage: promote.py NET RUNS [alive]
("alive": the master is NOT killed; shows what the Set does while the master outranks the standby)."""
import json, os, signal, statistics, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from halab import Lab, wait_text, log_events

MASTER_HOST, STANDBY_HOST, OTHER = "node001 mlx5_0", "node002 mlx5_0", "node003 mlx5_0"


def run_one(net, mod, kill=True):
    lab = Lab(net)
    try:
        a = lab.opensm("A", MASTER_HOST, 10)
        assert wait_text(a.log, "SUBNET UP", 60), "master never up"
        b = lab.opensm("B", STANDBY_HOST, 1)
        assert wait_text(b.log, "Entering STANDBY state", 60), "standby never standby"
        la = lab.probe(MASTER_HOST, ["local"])[0]
        lb = lab.probe(STANDBY_HOST, ["local"])[0]
        armed = lab.armed_probe(STANDBY_HOST, ["set:%d:%d" % (lb["lid"], mod)])
        before = os.path.getsize(b.log)
        t0 = time.time()
        if kill:
            os.kill(a.pid, signal.SIGKILL)
        armed.stdin.write("\n")
        armed.stdin.flush()
        set_reply = json.loads(armed.stdout.readline())
        t_set = time.time() - t0
        res = {"mod": mod, "set": set_reply["status"], "set_rtt_ms": set_reply["rtt_ms"], "set_done_s": t_set}
        if kill:
            wait_text(b.log, "SUBNET UP", 20, after=before)
            m = [t for t in log_events(b.log, "Entering MASTER state") if t >= t0 - 0.01]
            u = [t for t in log_events(b.log, "SUBNET UP") if t >= t0 - 0.01]
            res["master_s"] = m[0] - t0 if m else None
            res["up_s"] = u[0] - t0 if u else None
        else:
            time.sleep(3)
            res["A"] = lab.probe(OTHER, ["get:%d" % la["lid"]])[0]["state"]
            res["B"] = lab.probe(OTHER, ["get:%d" % lb["lid"]])[0]["state"]
            bm = [t for t in log_events(b.log, "Entering MASTER state") if t >= t0 - 0.01]
            bs = [t for t in log_events(b.log, "Entering STANDBY state") if t >= t0 - 0.01]
            bd = [t for t in log_events(b.log, "Entering DISCOVERING state") if t >= t0 - 0.01]
            res["B_master_window_ms"] = (bs[0] - bm[0]) * 1000 if bm and bs else None
            res["B_discovering_window_ms"] = (bs[0] - bd[0]) * 1000 if bd and bs else None
            res["A_heavy_sweeps_after_set"] = len([t for t in log_events(a.log, "SUBNET UP") if t >= t0])
            # Which SM LID do the hosts' ports point at after settling?
            hosts = ["node%03d mlx5_0" % i for i in range(3, 324, 40)]
            lids = [lab.probe(h, ["local"])[0]["lid"] for h in hosts]
            pis = lab.probe(OTHER, ["portinfo:%d" % l for l in lids])
            res["hosts_master_sm_lid"] = sorted(set(p["master_sm_lid"] for p in pis))
            res["A_lid"], res["B_lid"] = la["lid"], lb["lid"]
            res["B_log"] = [l.split("-> ", 1)[1].strip() for l in open(b.log, errors="replace")
                            if "Entering" in l or "ERR" in l or "SUBNET UP" in l or "andover" in l][-8:]
            res["A_log"] = [l.split("-> ", 1)[1].strip() for l in open(a.log, errors="replace").read()[0:].splitlines()
                            if ("Entering" in l or "andover" in l or "SUBNET UP" in l)][-6:]
        return res
    finally:
        lab.close()


if __name__ == "__main__":
    net = open(sys.argv[1]).read()
    runs = int(sys.argv[2])
    alive = len(sys.argv) > 3 and sys.argv[3] == "alive"
    for mod, name in ((1, "HANDOVER"), (5, "DISCOVER")):
        rs = [run_one(net, mod, kill=not alive) for _ in range(runs)]
        for r in rs:
            print(name, json.dumps(r))
        if not alive:
            for k in ("master_s", "up_s"):
                v = sorted(x[k] * 1000 for x in rs if x.get(k) is not None)
                if v:
                    print("%s %s ms: median %.0f min %.0f max %.0f (n=%d)" % (name, k, statistics.median(v), v[0], v[-1], len(v)))
        sys.stdout.flush()
