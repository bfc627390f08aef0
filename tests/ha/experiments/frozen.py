"""docs/ha-facts.md, "a frozen master": SIGSTOP the master, SubnSet(SMInfo) <mod> to the standby from
its own CA, SIGCONT the master 2 s later; who is MASTER afterwards? Usage: frozen.py NET [mod]"""
import json, os, signal, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from halab import Lab, wait_text, log_events

A_HOST, B_HOST, OTHER = "node001 mlx5_0", "node002 mlx5_0", "node003 mlx5_0"


def main(net, mod):
    lab = Lab(net)
    try:
        a = lab.opensm("A", A_HOST, 10)
        assert wait_text(a.log, "SUBNET UP", 60)
        b = lab.opensm("B", B_HOST, 1)
        assert wait_text(b.log, "Entering STANDBY state", 60)
        la, lb = lab.probe(A_HOST, ["local"])[0], lab.probe(B_HOST, ["local"])[0]
        t0 = time.time()
        os.kill(a.pid, signal.SIGSTOP)
        r = lab.probe(B_HOST, ["get:%d" % la["lid"], "set:%d:%d" % (lb["lid"], mod)])
        wait_text(b.log, "SUBNET UP", 10, after=0)
        time.sleep(2 - (time.time() - t0) if time.time() - t0 < 2 else 0)
        t_thaw = time.time()
        os.kill(a.pid, signal.SIGCONT)
        samples = []
        for _ in range(6):
            time.sleep(0.5)
            s = lab.probe(OTHER, ["get:%d" % la["lid"], "get:%d" % lb["lid"]])
            samples.append((round(time.time() - t_thaw, 1), s[0]["state"], s[1]["state"]))
        ev = lambda f, n: [round(t - t0, 3) for t in log_events(f, n) if t >= t0]
        print(json.dumps({"mod": mod, "get_frozen": r[0]["status"], "get_rtt_ms": r[0]["rtt_ms"], "set": r[1]["status"],
                          "B_master_s": ev(b.log, "Entering MASTER"), "B_up_s": ev(b.log, "SUBNET UP")[:2],
                          "thaw_s": round(t_thaw - t0, 3), "A_events_s": {n: ev(a.log, n) for n in ("Entering STANDBY", "Entering MASTER", "SUBNET UP")},
                          "B_standby_s": ev(b.log, "Entering STANDBY"), "after_thaw(A,B)": samples}))
    finally:
        lab.close()


if __name__ == "__main__":
    main(open(sys.argv[1]).read(), int(sys.argv[2]) if len(sys.argv) > 2 else 5)
