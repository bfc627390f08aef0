"""Helpers for the SM-HA experiments in docs/ha-facts.md (not run by ctest): ibsim + two OpenSMs
under umad2sim, and ibf_smp_probe (tests/ha) as the MAD client. Every process is started here and
killed by its pid; each scenario gets its own IBSIM_SOCKNAME and temp dir."""
import datetime, json, os, random, re, shutil, signal, subprocess, tempfile, time

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
PROBE = os.environ.get("IBF_SMP_PROBE", os.path.join(ROOT, "build/bin/ibf_smp_probe"))

CONF = """log_flags {flags}
force_log_flush TRUE
accum_log_file FALSE
log_max_size 0
sweep_interval 2
sweep_on_trap TRUE
reassign_lids FALSE
max_wire_smps 64
max_wire_smps2 64
transaction_timeout 200
transaction_retries 3
sm_priority {prio}
sminfo_polling_timeout 10000
polling_retry_number 4
daemon FALSE
console off
sa_db_dump FALSE
perfmgr FALSE
qos FALSE
honor_guid2lid_file {honor}
"""


class Lab:
    def __init__(self, net_text, prefix="ibfhaexp"):
        self.dir = tempfile.mkdtemp(prefix=prefix + "-")
        self.sock = "%s%d_%06d" % (prefix, os.getpid(), random.randrange(10**6))
        self.procs = []
        net = os.path.join(self.dir, "net")
        open(net, "w").write(net_text)
        self.console_path = os.path.join(self.dir, "console")
        os.mkfifo(self.console_path)
        self.console_fd = os.open(self.console_path, os.O_RDWR)
        out = open(os.path.join(self.dir, "ibsim.out"), "w")
        self.ibsim = subprocess.Popen(["ibsim", "-s", net], stdin=self.console_fd, stdout=out,
                                      stderr=subprocess.STDOUT, env=self.env(), cwd=self.dir)
        self.procs.append(self.ibsim)
        wait_text(os.path.join(self.dir, "ibsim.out"), "Network simulator ready", 30)

    def env(self, host=None, extra=None):
        e = dict(os.environ, IBSIM_SOCKNAME=self.sock)
        if host:
            e.update(SIM_HOST=host, LD_PRELOAD=UMAD2SIM)
        e.update(extra or {})
        return e

    def console(self, line):
        os.write(self.console_fd, (line + "\n").encode())

    def opensm(self, name, host, prio, honor="FALSE", guid2lid=None):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "opensm.conf"), "w").write(CONF.format(prio=prio, honor=honor, flags=os.environ.get("IBF_LOG_FLAGS", "0x03")))
        if guid2lid is not None:
            open(os.path.join(d, "guid2lid"), "w").write(guid2lid)
        out = open(os.path.join(d, "opensm.out"), "w")
        p = subprocess.Popen(["opensm", "-F", "opensm.conf", "-f", os.path.join(d, "osm.log"), "-e"],
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=d,
                             env=self.env(host, {"OSM_TMP_DIR": d, "OSM_CACHE_DIR": d}))
        self.procs.append(p)
        p.log = os.path.join(d, "osm.log")
        p.dir = d
        return p

    def probe(self, host, cmds, timeout_ms=100, timeout_s=20):
        d = tempfile.mkdtemp(dir=self.dir, prefix="probe-")
        r = subprocess.run([PROBE, "--timeout-ms", str(timeout_ms)] + cmds, capture_output=True, text=True,
                           cwd=d, env=self.env(host), timeout=timeout_s)
        return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]

    def armed_probe(self, host, cmds, timeout_ms=100):
        """A probe already attached and waiting for a newline before it sends `cmds`."""
        d = tempfile.mkdtemp(dir=self.dir, prefix="probe-")
        p = subprocess.Popen([PROBE, "--go-on-stdin", "--timeout-ms", str(timeout_ms)] + cmds,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=d, env=self.env(host))
        self.procs.append(p)
        line = p.stdout.readline()
        assert '"ready"' in line, line
        return p

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
                p.wait()
        os.close(self.console_fd)
        if not os.environ.get("IBF_KEEP_TMP"):  # keep the logs with IBF_KEEP_TMP=1
            shutil.rmtree(self.dir, ignore_errors=True)


def wait_text(path, needle, timeout, after=0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if needle in open(path, errors="replace").read()[after:]:
                return True
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    return False


LOGTS = re.compile(r"^(\w{3} \d{2} \d{2}:\d{2}:\d{2}) (\d{6})")


def log_events(path, needle):
    """Wall-clock times (epoch s) of the log lines containing needle."""
    year = datetime.datetime.now().year
    out = []
    for line in open(path, errors="replace"):
        if needle in line:
            m = LOGTS.match(line)
            if m:
                t = datetime.datetime.strptime("%d %s" % (year, m.group(1)), "%Y %b %d %H:%M:%S")
                out.append(t.timestamp() + int(m.group(2)) / 1e6)
    return out


def parse_guid2lid(text):
    m = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].startswith("0x"):
            m[int(f[0], 16)] = (int(f[1], 16), int(f[2], 16))
    return m
