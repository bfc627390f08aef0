"""docs/ha-facts.md, "guid2lid": when does a running STANDBY read its guid2lid, and do LIDs survive a
failover during which two hosts reset. Usage: guid2lid_exp.py NET reread|swap honor(TRUE|FALSE) [modifier: 5 DISCOVER (default) | 1 HANDOVER]
  reread: while B is STANDBY, overwrite B's guid2lid with A's map except node010 -> LID 0x200;
          kill A, DISCOVER to B, report node010's LID afterwards.
  swap:   while B is STANDBY, copy A's guid2lid to B (honor TRUE) or leave B's alone; kill A,
          ibsim `Clear` node010 and node020, DISCOVER to B, ReLink node020 then node010; report LIDs."""
import json, os, shutil, signal, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from halab import Lab, wait_text, parse_guid2lid

A_HOST, B_HOST, OTHER = "node001 mlx5_0", "node002 mlx5_0", "node003 mlx5_0"
H1, H2 = "node010 mlx5_0", "node020 mlx5_0"


def g2l_text(m):
    return "".join("0x%016x 0x%04x 0x%04x\n\n" % (g, r[0], r[1]) for g, r in sorted(m.items()))


def main(net, mode, honor, mod):
    lab = Lab(net)
    out = {"mode": mode, "honor": honor, "modifier": mod}
    try:
        a = lab.opensm("A", A_HOST, 10)
        assert wait_text(a.log, "SUBNET UP", 60)
        b = lab.opensm("B", B_HOST, 1, honor=honor)
        assert wait_text(b.log, "Entering STANDBY state", 60)
        time.sleep(0.5)
        g_a = parse_guid2lid(open(os.path.join(a.dir, "guid2lid")).read())
        out["B_file_while_standby_bytes"] = os.path.getsize(os.path.join(b.dir, "guid2lid"))
        la, lb = lab.probe(A_HOST, ["local"])[0], lab.probe(B_HOST, ["local"])[0]
        h1, h2 = lab.probe(H1, ["local"])[0], lab.probe(H2, ["local"])[0]
        out["before"] = {"node010": h1["lid"], "node020": h2["lid"]}
        if mode == "reread":
            m = dict(g_a)
            m[h1["guid"]] = (0x200, 0x200)
            open(os.path.join(b.dir, "guid2lid"), "w").write(g2l_text(m))
        elif honor == "TRUE":
            shutil.copy(os.path.join(a.dir, "guid2lid"), os.path.join(b.dir, "guid2lid"))
        written = open(os.path.join(b.dir, "guid2lid")).read()
        os.kill(a.pid, signal.SIGKILL)
        if mode == "swap":
            lab.console('Clear "%s"' % H1)
            lab.console('Clear "%s"' % H2)
            time.sleep(0.2)
        out["B_file_untouched_until_promotion"] = open(os.path.join(b.dir, "guid2lid")).read() == written
        size0 = os.path.getsize(b.log)
        out["set"] = lab.probe(B_HOST, ["set:%d:%d" % (lb["lid"], mod)])[0]["status"]
        assert wait_text(b.log, "SUBNET UP", 20, after=size0)
        if mode == "swap":
            lab.console('ReLink "%s"' % H2)
            time.sleep(1.0)
            lab.console('ReLink "%s"' % H1)
            time.sleep(2.0)
        else:
            time.sleep(0.5)
        h1b, h2b = lab.probe(H1, ["local"])[0], lab.probe(H2, ["local"])[0]
        out["after"] = {"node010": h1b["lid"], "node020": h2b["lid"]}
        out["B_state"] = lab.probe(OTHER, ["get:%d" % lb["lid"]])[0]["state"]
        g_b = parse_guid2lid(open(os.path.join(b.dir, "guid2lid")).read())
        out["B_file_after"] = {"node010": g_b.get(h1["guid"]), "node020": g_b.get(h2["guid"])}
        moved = [hex(g) for g in g_a if g in g_b and g_a[g] != g_b[g]]
        out["ports_whose_lid_moved_in_guid2lid"] = moved
        out["dir"] = lab.dir if os.environ.get("IBF_KEEP_TMP") else "(removed; set IBF_KEEP_TMP=1 to keep)"
        print(json.dumps(out))
    finally:
        lab.close()


if __name__ == "__main__":
    main(open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 5)
