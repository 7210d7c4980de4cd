#!/usr/bin/env python3
"""A fleet of apphostd daemons on one machine, watched by one node_exporter and one Prometheus.

Usage: bash Benchmarks/fleet/run.sh [--instances N] [--quick] [--json FILE]   (builds first)
       python3 Benchmarks/fleet/fleet_bench.py --binary PATH --servicegroup-floor PATH [--instances N]

N instances (default 200) of apphostd, each with its own state directory, session secret and
config: the shipped services (the `services:` of config/apphostd.yaml, copied as they are), memory
pressure off (N daemons watching PSI would measure the kernel's triggers, not the daemon), logind
off (each daemon would hold one of dbus-daemon's 256 connections per user), and
`host.metrics.textfile:` in ONE shared textfile directory (i-0001.prom, ...; the `daemon` label
is the file's base name). Beside them, started the same way and interleaved with them so both see
the same machine: N instances of process/ServiceGroupFloor (a ServiceGroup of five no-op
services that sends READY=1 through libsystemd: the design's floor), and min(N, 50)
apphostd instances without the metrics textfile (what the metrics add).

All of them share one NOTIFY_SOCKET (an AF_UNIX datagram socket, as systemd's); datagrams are
told apart by their sender's pid (SO_PASSCRED) and timed by the kernel's arrival stamp
(SO_TIMESTAMPNS). Each instance is started only after the previous one sent READY=1.

Then one node_exporter (textfile collector only) and one Prometheus on free loopback ports
(scraping every second while node_exporter answers a scrape by hand within 300 ms, else three
times that, rounded up to seconds: about 4 s at 1,000 instances on 2 cores; --scrape-interval
sets it), and PromQL over Prometheus' HTTP API:

  count(apphost_info) == N, count(apphost_state{state="active"} == 1) == N;
  SIGUSR1 to every second instance (N/2): sum by (state) (apphost_state) must follow
  (background N/2, active N - N/2, nothing else) -- how long until Prometheus shows it, and
  how long until the daemons' own STATUS= said it; sum(apphost_session_locked) follows too;
  max(node_textfile_scrape_error) == 0; up == 1.

Once everything settled: idle wake-ups (context switches of all threads over a window that
starts 12 s or more after the kills and, unless --quick, 65 s or more after the sampled
instances' launch, past the one-shot timers a launch leaves) of a few instances of each group, then private memory (Private_Clean + Private_Dirty), PSS and RSS of
every instance from /proc/PID/smaps_rollup. At the end SIGTERM to all: how many exited 0, and
Prometheus must show every daemon notRunning (the textfile's last write).

Each instance's stderr is kept in its directory; distinct lines (numbers and paths folded) are
summarised. Prints a Markdown table; --json FILE writes the raw figures.
"""
import argparse, collections, json, os, re, resource, shutil, signal, socket, struct, subprocess, sys, tempfile
import threading, time, urllib.parse, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "process"))
sys.dont_write_bytecode = True  # no __pycache__ left in process/
import process_bench as pb  # noqa: E402  (median, percentile, proc_totals, machine, exit_text)

# scripts/deps.sh unpacks Debian's programs into .build-tools/ (not installed: their units would
# listen on the network); an installed one on PATH does too.
TOOLS = os.path.join(ROOT, ".build-tools", "root", "usr", "bin")
NODE_EXPORTER = shutil.which("prometheus-node-exporter", path=TOOLS + os.pathsep + os.environ.get("PATH", "")) or "/usr/bin/prometheus-node-exporter"
PROMETHEUS = shutil.which("prometheus", path=TOOLS + os.pathsep + os.environ.get("PATH", "")) or "/usr/bin/prometheus"
MIB = 1024  # smaps figures are KiB

# The shipped services, should config/apphostd.yaml be missing (it is read when present).
FALLBACK_SERVICES = """services:
  - name: logger
    type: logger
    required: true
    settings:
      level: info
  - name: analytics
    type: analytics
    settings:
      flush-interval: 60s
      compact-after: 64KiB
  - name: session-lock
    type: session-lock
    settings:
      grace-period: 0s
      credential: session-secret
  - name: notification
    type: notification
    settings:
      on: [didEnterBackground, didReceiveMemoryWarning.critical, reloadFailed, overran]
      sinks: [journal]
      coalesce-window: 10s
      app-name: apphostd
"""

# The environment a daemon must not inherit from whoever runs the benchmark.
SCRUBBED = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "MEMORY_PRESSURE_WATCH", "MEMORY_PRESSURE_WRITE",
            "JOURNAL_STREAM", "CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "LISTEN_FDS", "LISTEN_PID",
            "LISTEN_FDNAMES", "FDSTORE", "INVOCATION_ID")


def shipped_services():
    """The `services:` block of config/apphostd.yaml, comments and all, to its end."""
    path = os.path.join(ROOT, "config", "apphostd.yaml")
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return FALLBACK_SERVICES, "built-in copy"
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "services:"), None)
    if start is None:
        return FALLBACK_SERVICES, "built-in copy"
    return "\n".join(lines[start:]) + "\n", os.path.relpath(path, ROOT)


class NotifyHub:
    """One NOTIFY_SOCKET for every instance. A thread reads it all the time (the kernel queues
    only net.unix.max_dgram_qlen datagrams, 10 by default, before senders block) and files each
    datagram under its sender's pid (SCM_CREDENTIALS) with the kernel's arrival stamp
    (SO_TIMESTAMPNS, CLOCK_REALTIME, so comparable with time.time())."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, pb.SO_TIMESTAMPNS, 1)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.events = collections.defaultdict(list)  # pid -> [(kernel arrival, fields)]
        self.datagrams = 0
        self.fds_closed = 0
        self.cond = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(target=self._read, name="notify", daemon=True)
        self.thread.start()

    def _read(self):
        ancillary = socket.CMSG_SPACE(16) + socket.CMSG_SPACE(12) + socket.CMSG_SPACE(4 * 16)
        while not self.stopping:
            try:
                raw, cmsgs, _, _ = self.sock.recvmsg(65536, ancillary)
            except (socket.timeout, BlockingIOError, InterruptedError):
                continue
            except OSError:
                if self.stopping:
                    return
                raise
            arrival, pid = time.time(), None
            for level, kind, payload in cmsgs:
                if level != socket.SOL_SOCKET:
                    continue
                if kind == pb.SO_TIMESTAMPNS and len(payload) >= 16:
                    arrival = int.from_bytes(payload[0:8], "little") + int.from_bytes(payload[8:16], "little") / 1e9
                elif kind == socket.SCM_CREDENTIALS and len(payload) >= 12:
                    pid = struct.unpack("iII", payload[:12])[0]
                elif kind == socket.SCM_RIGHTS:
                    # An fd-store push (FDSTORE=1): nobody keeps it here.
                    for fd in struct.unpack(f"{len(payload) // 4}i", payload[:len(payload) - len(payload) % 4]):
                        try:
                            os.close(fd)
                            self.fds_closed += 1
                        except OSError:
                            pass
            fields = dict(line.split("=", 1) for line in raw.decode(errors="replace").splitlines() if "=" in line)
            with self.cond:
                self.events[pid].append((arrival, fields))
                self.datagrams += 1
                self.cond.notify_all()

    def find(self, pid, predicate, after=0.0):
        """The first datagram of `pid` that arrived after `after` and matches, or None."""
        for arrival, fields in self.events.get(pid, ()):
            if arrival >= after and predicate(fields):
                return arrival, fields
        return None

    def wait(self, pid, predicate, timeout, after=0.0, alive=None):
        """Waits for such a datagram; None on timeout or once `alive()` says the sender died."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = self.find(pid, predicate, after)
                if found:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (alive is not None and not alive()):
                    return None
                self.cond.wait(min(remaining, 0.1))

    def close(self):
        self.stopping = True
        self.thread.join(timeout=2)
        self.sock.close()


class Instance:
    def __init__(self, group, label, directory, argv, env):
        self.group, self.label, self.directory, self.argv, self.env = group, label, directory, argv, env
        self.stderr_path = os.path.join(directory, "stderr.log")
        self.process = None
        self.started = None  # time.time() just before the exec
        self.ready_ms = None
        self.failure = None
        self.exit_code = None
        self.memory = None
        self.signalled_at = None
        self.status_ms = None

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def alive(self):
        return self.process is not None and self.process.poll() is None


def start(instance, hub, timeout=60):
    with open(instance.stderr_path, "wb") as stderr:
        instance.started = time.time()
        instance.process = subprocess.Popen(instance.argv, env=instance.env, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=stderr)
    found = hub.wait(instance.pid, lambda f: f.get("READY") == "1", timeout, alive=instance.alive)
    if found is None:
        # A last look: READY=1 may have come just before the process ended.
        found = hub.find(instance.pid, lambda f: f.get("READY") == "1")
    if found is None:
        code = instance.process.poll()
        instance.failure = f"no READY=1 within {timeout} s" if code is None else f"ended before READY=1 ({pb.exit_text(code)})"
        return False
    instance.ready_ms = (found[0] - instance.started) * 1000
    return True


def smaps(pid):
    """Rss, Pss, Private_Clean + Private_Dirty in KiB, from /proc/PID/smaps_rollup."""
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[0].endswith(":") and parts[2] == "kB":
                values[parts[0][:-1]] = int(parts[1])
    return {"rss": values.get("Rss", 0), "pss": values.get("Pss", 0),
            "private": values.get("Private_Clean", 0) + values.get("Private_Dirty", 0),
            "private_dirty": values.get("Private_Dirty", 0), "anon": values.get("Anonymous", 0)}


def threads(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except FileNotFoundError:
        return 0


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusStack:
    """node_exporter (textfile collector only, reading one directory) and Prometheus scraping it.
    node_exporter starts first and is scraped twice by hand: with `interval` "auto", Prometheus'
    scrape interval (and timeout) is 1 s while one scrape takes under 300 ms, else three times
    the slower of the two, rounded up to whole seconds: node_exporter reads every textfile on
    every scrape, a scrape slower than its timeout counts as down, and with Prometheus ingesting
    beside it a scrape takes about twice as long as by hand (measured: 145 ms by hand, 290 ms in
    Prometheus' scrape_duration_seconds, 200 instances, 2 cores)."""

    def __init__(self, textfile_directory, directory, interval):
        self.directory = directory
        self.exporter_port, self.port = free_port(), free_port()
        os.makedirs(os.path.join(directory, "tsdb"), exist_ok=True)
        self.processes = []
        self.logs = [os.path.join(directory, "node-exporter.log"), os.path.join(directory, "prometheus.log")]
        self.launch([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{self.exporter_port}", "--collector.disable-defaults",
                     "--collector.textfile", f"--collector.textfile.directory={textfile_directory}"], self.logs[0])
        self.manual_scrape_s = self.time_exporter()
        if interval == "auto":
            slowest = max(self.manual_scrape_s)
            interval = "1s" if slowest < 0.3 else f"{max(2, -(-int(slowest * 3 * 1000) // 1000))}s"
        self.interval = interval
        config = os.path.join(directory, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"global:\n  scrape_interval: {interval}\n  scrape_timeout: {interval}\n  evaluation_interval: {interval}\n"
                    f"scrape_configs:\n  - job_name: node\n    static_configs:\n"
                    f"      - targets: [\"127.0.0.1:{self.exporter_port}\"]\n")
        self.launch([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={directory}/tsdb",
                     f"--web.listen-address=127.0.0.1:{self.port}"], self.logs[1])

    def launch(self, argv, log):
        with open(log, "wb") as out:
            self.processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out))

    def time_exporter(self, timeout=30):
        """Seconds of two scrapes of node_exporter's /metrics, once it answers."""
        url = f"http://127.0.0.1:{self.exporter_port}/metrics"
        deadline = time.monotonic() + timeout
        while True:
            if self.processes[0].poll() is not None:
                raise RuntimeError(f"node_exporter ended ({pb.exit_text(self.processes[0].returncode)}):\n{self.tail()}")
            try:
                self.get(url, timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node_exporter does not answer within {timeout} s:\n{self.tail()}")
                time.sleep(0.1)
        times = []
        for _ in range(2):
            began = time.monotonic()
            # As Prometheus asks: node_exporter then gzips, which is part of its time.
            self.get(url, timeout=60, headers={"Accept-Encoding": "gzip"})
            times.append(time.monotonic() - began)
        return times

    def get(self, url, timeout=5, headers=None):
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=timeout) as response:
            return response.status, response.read()

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"{process.args[0]} ended ({pb.exit_text(process.returncode)}):\n{self.tail()}")
            try:
                if self.get(f"http://127.0.0.1:{self.port}/-/ready", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"Prometheus not ready within {timeout} s:\n{self.tail()}")

    def query(self, promql):
        """The samples of an instant query, [(labels, value)]; [] while it has none or on an error."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        try:
            _, body = self.get(url, timeout=10)
            answer = json.loads(body)
        except (OSError, ValueError):
            return []
        if answer.get("status") != "success":
            return []
        return [(item["metric"], float(item["value"][1])) for item in answer["data"]["result"]]

    def value(self, promql):
        samples = self.query(promql)
        return samples[0][1] if len(samples) == 1 else None

    def tail(self):
        parts = []
        for log in self.logs:
            try:
                with open(log, errors="replace") as f:
                    parts.append(f"--- {os.path.basename(log)}\n" + f.read()[-3000:])
            except FileNotFoundError:
                pass
        return "\n".join(parts)

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def poll(check, timeout, every=0.2):
    """Calls check() until it returns (True, value) or timeout; returns (ok, seconds, last value)."""
    began = time.monotonic()
    value = None
    while True:
        ok, value = check()
        elapsed = time.monotonic() - began
        if ok or elapsed >= timeout:
            return ok, elapsed, value
        time.sleep(every)


def summary(values):
    return {"p50": pb.median(values), "p90": pb.percentile(values, 90), "min": min(values) if values else None,
            "max": max(values) if values else None, "n": len(values)}


NUMBER = re.compile(r"(?<![A-Za-z0-9_])[-+]?\d+(?:\.\d+)?(?![A-Za-z0-9_])")


def stderr_summary(instances, base):
    """Distinct lines of all the instances' stderr, numbers, paths and labels folded, with how
    many lines and how many instances said each."""
    lines, owners = collections.Counter(), collections.defaultdict(set)
    for instance in instances:
        try:
            with open(instance.stderr_path, errors="replace") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        for line in text.splitlines():
            line = line.replace(base, "$DIR")
            line = re.sub(r"\b[inf]-\d{4,}\b", "<label>", line)
            line = NUMBER.sub("#", line)
            lines[line] += 1
            owners[line].add(instance.label)
    return [{"line": line, "lines": count, "instances": len(owners[line])} for line, count in lines.most_common()]


def mib(kib):
    return f"{kib / MIB:.2f} MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build-release", "release", "apphostd"))
    parser.add_argument("--servicegroup-floor", required=True, help="ServiceGroupFloor, built by Benchmarks/fleet/run.sh")
    parser.add_argument("--instances", type=int, help="apphostd instances (and as many floors); default 200, 50 with --quick")
    parser.add_argument("--without-metrics", type=int, help="apphostd instances without the textfile; default min(N, 50)")
    parser.add_argument("--quick", action="store_true", help="50 instances by default, shorter settling, no wait for --after-launch")
    parser.add_argument("--idle-seconds", type=float, default=5.0, help="the idle window (default 5)")
    parser.add_argument("--idle-sample", type=int, default=5, help="instances per group whose wake-ups are counted (default 5)")
    parser.add_argument("--after-launch", type=float, default=65.0,
                        help="the idle window starts at least this long after the sampled instances' launch (default 65; not with --quick)")
    parser.add_argument("--scrape-interval", default="auto",
                        help="Prometheus' scrape interval and timeout, like 1s; default auto: 1s while node_exporter "
                             "answers within 300 ms, else three times its time rounded up to seconds")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (printed on stderr)")
    args = parser.parse_args()
    pb.write_back_binaries()
    n = args.instances or (50 if args.quick else 200)
    m = min(n, 50) if args.without_metrics is None else args.without_metrics
    settle = 6.0 if args.quick else 8.0
    for path in (args.binary, args.servicegroup_floor, NODE_EXPORTER, PROMETHEUS):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path} is missing (build apphostd and the floor with run.sh; Debian packages prometheus, prometheus-node-exporter)")
    if n < 2:
        sys.exit("--instances must be at least 2")

    # Descriptors: the harness holds a few per instance only while starting it, but let the
    # children inherit a roomy limit; processes: each Swift daemon has a handful of threads.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NPROC, (hard, hard))

    began = time.monotonic()
    base = tempfile.mkdtemp(prefix="apphostd-fleet-")
    textfiles = os.path.join(base, "textfile")
    os.makedirs(textfiles)
    hub = NotifyHub(base)
    services, services_from = shipped_services()
    width = max(4, len(str(n)))
    groups = {"apphostd": [], "plain": [], "floor": []}
    everyone = []
    stack = None
    checks = {}
    results = {"machine": pb.machine(), "load_average_at_start": os.getloadavg()[0], "instances": n, "without_metrics": m,
               "services_from": services_from, "scrape_interval": args.scrape_interval, "idle_seconds": args.idle_seconds}
    failed = False

    def env_for(credentials=None):
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        env["NOTIFY_SOCKET"] = hub.path
        if credentials:
            env["CREDENTIALS_DIRECTORY"] = credentials
        return env

    def daemon(group, index, metrics):
        label = f"{'i' if metrics else 'n'}-{index + 1:0{width}d}"
        directory = os.path.join(base, label)
        state, credentials = os.path.join(directory, "state"), os.path.join(directory, "credentials")
        os.makedirs(state)
        os.makedirs(credentials)
        secret = os.path.join(credentials, "session-secret")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
            f.write(f"fleet-secret-{label}\n")
        # logind off: each daemon would hold a system-bus connection, and dbus-daemon allows 256
        # per user (a fleet of one user's daemons on one machine).
        host = ["host:", f"  state-directory: {state}", "  logind: false", "  memory-pressure:", "    enabled: false"]
        if metrics:
            host += ["  metrics:", f"    textfile: {os.path.join(textfiles, label + '.prom')}"]
        config = os.path.join(directory, "apphostd.yaml")
        with open(config, "w") as f:
            f.write("\n".join(host) + "\n" + services)
        return Instance(group, label, directory, [args.binary, "run", "--config", config], env_for(credentials))

    def floor(index):
        label = f"f-{index + 1:0{width}d}"
        directory = os.path.join(base, label)
        os.makedirs(directory)
        return Instance("floor", label, directory, [args.servicegroup_floor], env_for())

    try:
        # The config is checked once before a thousand daemons try it.
        probe = daemon("check", -1, True)
        check = subprocess.run([args.binary, "check", "--config", probe.argv[-1]], capture_output=True, text=True, env=probe.env)
        if check.returncode != 0:
            raise RuntimeError(f"apphostd check refused the instance config:\n{check.stdout}{check.stderr}")
        shutil.rmtree(probe.directory)

        # Starts, one at a time, each after the previous one's READY=1; the groups interleaved
        # (the order rotating) so all see the same machine.
        print(f"starting {n} apphostd with metrics, {n} ServiceGroup floors, {m} apphostd without metrics ...", file=sys.stderr, flush=True)
        failures = 0
        for index in range(n):
            batch = [("floor", floor), ("apphostd", lambda i: daemon("apphostd", i, True))]
            if index < m:
                batch.append(("plain", lambda i: daemon("plain", i, False)))
            shift = index % len(batch)
            for group, make in batch[shift:] + batch[:shift]:
                instance = make(index)
                groups[group].append(instance)
                everyone.append(instance)
                if not start(instance, hub):
                    failures += 1
                    print(f"  {instance.label}: {instance.failure}", file=sys.stderr, flush=True)
                    if failures > max(3, n // 100):
                        raise RuntimeError(f"{failures} instances failed to start; last: {instance.label}: {instance.failure}")
            if (index + 1) % 100 == 0:
                print(f"  {index + 1}/{n} started, {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
        results["start_phase_s"] = time.monotonic() - began
        results["threads_after_start"] = {g: summary([threads(i.pid) for i in v if i.alive()]) for g, v in groups.items()}
        ready = {g: [i.ready_ms for i in v if i.ready_ms is not None] for g, v in groups.items()}
        results["ready_ms"] = {g: summary(v) for g, v in ready.items()}
        results["ready_ms"]["apphostd_over_floor"] = pb.median(ready["apphostd"]) / pb.median(ready["floor"])
        # The instances without the textfile start in the first m batches only, on a machine
        # with fewer daemons running: they compare with the first m of the other groups.
        early = {g: [i.ready_ms for i in v[:m] if i.ready_ms is not None] for g, v in groups.items()}
        results["ready_ms"]["early"] = {g: summary(v) for g, v in early.items()}
        results["ready_ms"]["plain_over_floor"] = pb.median(early["plain"]) / pb.median(early["floor"]) if early["plain"] else None
        results["ready_ms"]["early_apphostd_over_floor"] = pb.median(early["apphostd"]) / pb.median(early["floor"]) if early["plain"] else None
        results["start_failures"] = {g: [(i.label, i.failure) for i in v if i.failure] for g, v in groups.items()}
        metered = [i for i in groups["apphostd"] if i.ready_ms is not None]
        expected = len(metered)

        # One node_exporter, one Prometheus.
        print("starting node_exporter and Prometheus ...", file=sys.stderr, flush=True)
        stack = PrometheusStack(textfiles, os.path.join(base, "prometheus"), args.scrape_interval)
        stack.wait_ready()
        results["scrape_interval"] = stack.interval
        results["manual_scrape_s"] = stack.manual_scrape_s
        ok, seconds, value = poll(lambda: ((v := stack.value("count(apphost_info)")) == expected, v), 180)
        checks["count_info"] = {"ok": ok, "value": value, "want": expected, "seconds_after_ready": seconds}
        # Without every daemon in Prometheus the other questions would only wait out their timeouts.
        patience = (lambda seconds: seconds) if ok else (lambda seconds: 3)
        if not ok:
            print(f"count(apphost_info) is {value}, not {expected}: up={stack.value('up')}, "
                  f"scrape_duration_seconds={stack.value('scrape_duration_seconds')}", file=sys.stderr, flush=True)
        ok, seconds, value = poll(lambda: ((v := stack.value('count(apphost_state{state="active"} == 1)')) == expected, v), patience(60))
        checks["count_active"] = {"ok": ok, "value": value, "want": expected, "seconds": seconds}

        # SIGUSR1 to every second instance: each goes to the background.
        signalled = metered[1::2]
        half = len(signalled)
        want = {"background": half, "active": expected - half}
        time.sleep(1.5)  # past the textfile writer's one-second spacing after the launch
        first_kill = time.time()
        for instance in signalled:
            instance.signalled_at = time.time()
            os.kill(instance.pid, signal.SIGUSR1)
        last_kill = time.time()

        def states():
            samples = stack.query("sum by (state) (apphost_state)")
            got = {labels.get("state"): value for labels, value in samples}
            others = sum(v for s, v in got.items() if s not in want)
            return (samples != [] and all(got.get(s) == v for s, v in want.items()) and others == 0), got
        ok, seconds, value = poll(states, patience(120), every=0.1)
        checks["sum_by_state"] = {"ok": ok, "value": value, "want": want, "seconds_after_last_kill": seconds,
                                  "kill_spread_s": last_kill - first_kill}
        for instance in signalled:
            found = hub.wait(instance.pid, lambda f: f.get("STATUS", "").startswith("background"), 30, after=instance.signalled_at)
            instance.status_ms = (found[0] - instance.signalled_at) * 1000 if found else None
        status = [i.status_ms for i in signalled if i.status_ms is not None]
        results["kill_to_status_ms"] = summary(status)
        results["status_all_in_s_after_first_kill"] = (max(i.signalled_at + i.status_ms / 1000 for i in signalled if i.status_ms is not None)
                                                      - first_kill) if status else None
        results["status_missing"] = half - len(status)
        ok, seconds, value = poll(lambda: ((v := stack.value("sum(apphost_session_locked)")) == half, v), patience(30))
        checks["session_locked"] = {"ok": ok, "value": value, "want": half, "seconds": seconds}
        value = stack.value("max(node_textfile_scrape_error)")
        checks["scrape_error"] = {"ok": value == 0, "value": value, "want": 0}
        value = stack.value('min(up{job="node"})')
        checks["up"] = {"ok": value == 1, "value": value, "want": 1}
        results["scrape"] = {"duration_s_max_over_1m": stack.value('max_over_time(scrape_duration_seconds{job="node"}[1m])'),
                             "duration_s_last": stack.value('scrape_duration_seconds{job="node"}'),
                             "samples": stack.value('scrape_samples_scraped{job="node"}'),
                             "textfile_bytes_total": sum(os.path.getsize(os.path.join(textfiles, f)) for f in os.listdir(textfiles)),
                             "series_apphost": stack.value('count({__name__=~"apphost_.*"})')}

        # Settled: launch-time worker threads retired (libdispatch, after 5 s idle), the textfiles
        # written, and the one-shot timers past: the notification service's coalesce window (10 s
        # after the background notification) and, unless --quick, those a launch leaves (a daemon
        # wakes once about 30 s and once about 60 s after its launch, then only for the Swift
        # runtime's ~1/s). Wake-ups of a few of each group over one shared window.
        def spread(items, count):
            items = [i for i in items if i.alive()]
            if len(items) <= count:
                return items
            return [items[round(k * (len(items) - 1) / (count - 1))] for k in range(count)] if count > 1 else items[:1]
        signalled_set = set(signalled)
        sample = {"apphostd background": spread(signalled, args.idle_sample),
                  "apphostd active": spread([i for i in metered if i not in signalled_set], args.idle_sample),
                  "plain": spread(groups["plain"], args.idle_sample),
                  "floor": spread(groups["floor"], args.idle_sample)}
        window_start = max(time.time() + settle, last_kill + 12)
        if not args.quick:
            window_start = max(window_start, max(i.started for v in sample.values() for i in v) + args.after_launch)
        print(f"settling {window_start - time.time():.0f} s, then an idle window of {args.idle_seconds:g} s ...", file=sys.stderr, flush=True)
        time.sleep(max(0.0, window_start - time.time()))
        results["idle_window"] = {"after_last_kill_s": time.time() - last_kill,
                                  "after_latest_sampled_launch_s": time.time() - max(i.started for v in sample.values() for i in v),
                                  "after_earliest_sampled_launch_s": time.time() - min(i.started for v in sample.values() for i in v)}
        before = {k: [pb.proc_totals(i.pid) for i in v] for k, v in sample.items()}
        time.sleep(args.idle_seconds)
        after = {k: [pb.proc_totals(i.pid) for i in v] for k, v in sample.items()}
        idle = {}
        for key in sample:
            rates, cpu = [], []
            for (c0, s0, _), (c1, s1, _) in zip(before[key], after[key]):
                rates.append(sum(count - s0.get(tid, 0) for tid, count in s1.items()) / args.idle_seconds)
                cpu.append((c1 - c0) * 1000)
            idle[key] = {"wakeups_per_s": rates, "cpu_ms": cpu, "labels": [i.label for i in sample[key]],
                         "p50": pb.median(rates), "max": max(rates) if rates else None}
        results["idle"] = idle
        results["threads_idle"] = {g: summary([threads(i.pid) for i in v if i.alive()]) for g, v in groups.items()}

        # Memory of every instance, settled.
        for instance in everyone:
            if instance.alive():
                try:
                    instance.memory = smaps(instance.pid)
                except (FileNotFoundError, ProcessLookupError):
                    pass
        memory = {}
        for group, members in groups.items():
            figures = [i.memory for i in members if i.memory]
            memory[group] = {key: summary([f[key] for f in figures]) for key in ("private", "private_dirty", "pss", "rss")}
            memory[group]["total"] = {key: sum(f[key] for f in figures) for key in ("private", "pss", "rss")}
        results["memory_kib"] = memory
        results["alive_before_stop"] = {g: sum(1 for i in v if i.alive()) for g, v in groups.items()}

        # SIGTERM to all at once; each must exit 0, and Prometheus must see every file say notRunning.
        print("stopping ...", file=sys.stderr, flush=True)
        stop_began = time.monotonic()
        for instance in everyone:
            if instance.alive():
                instance.process.send_signal(signal.SIGTERM)
        for instance in everyone:
            if instance.process is None:
                continue
            try:
                instance.exit_code = instance.process.wait(timeout=max(1.0, 60 - (time.monotonic() - stop_began)))
            except subprocess.TimeoutExpired:
                instance.process.kill()
                instance.exit_code = instance.process.wait()
        results["stop_s"] = time.monotonic() - stop_began
        results["exit_codes"] = {g: dict(collections.Counter(pb.exit_text(i.exit_code) for i in v if i.process)) for g, v in groups.items()}
        results["exited_0"] = {g: sum(1 for i in v if i.exit_code == 0) for g, v in groups.items()}
        ok, seconds, value = poll(lambda: ((v := stack.value('count(apphost_state{state="notRunning"} == 1)')) == expected, v), patience(30))
        checks["not_running_after_stop"] = {"ok": ok, "value": value, "want": expected, "seconds": seconds}
    except BaseException as error:
        failed = True
        print(f"fleet benchmark failed: {error!r}", file=sys.stderr)
        if stack:
            print(stack.tail(), file=sys.stderr)
        if not isinstance(error, Exception):
            raise
    finally:
        for instance in everyone:
            if instance.alive():
                instance.process.kill()
                instance.process.wait()
        if stack:
            stack.stop()
        hub.close()
        results["checks"] = checks
        results["stderr"] = {g: stderr_summary(v, base) for g, v in groups.items()}
        results["notify"] = {"datagrams": hub.datagrams, "fds_closed": hub.fds_closed}
        results["wall_s"] = time.monotonic() - began
        results["load_average_at_end"] = os.getloadavg()[0]
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)

    results["ready_ms_raw"] = {g: {i.label: i.ready_ms for i in v} for g, v in groups.items()}
    results["memory_kib_raw"] = {g: {i.label: i.memory for i in v} for g, v in groups.items()}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    if failed:
        print_stderr_summary(results)
        sys.exit(1)
    print(f"Machine: {results['machine']}; load average at start {results['load_average_at_start']:.2f}, "
          f"at end {results['load_average_at_end']:.2f}; "
          f"services from {services_from}; scrape interval {results['scrape_interval']}; wall time {results['wall_s']:.0f} s")
    print()
    print(table(results, n, m))
    print()
    print_stderr_summary(results)
    missed = [goal for goal, met in (
        ("private memory ≤ 1.0 MiB per instance", results["memory_kib"]["apphostd"]["private"]["p50"] <= 1024),
        ("READY=1 ≤ 1.5× the floor", results["ready_ms"]["apphostd_over_floor"] <= 1.5),
        ("idle: no wake-ups of its own", idle_met(results)),
    ) if not met]
    wrong = [name for name, check in checks.items() if not check["ok"]]
    wrong += [f"{g}: {n_ok} of {len(v)} exited 0" for g, v in groups.items() if (n_ok := results["exited_0"][g]) != len(v)]
    print()
    print("checks failed: " + ", ".join(wrong) if wrong else "all checks passed")
    print("goals missed: " + ", ".join(missed) if missed else "all goals met")
    if wrong:
        sys.exit(1)


def idle_met(results):
    """apphostd's wake-ups are the floor's (the Swift runtime's ~1/s), within 0.5 per second."""
    i = results["idle"]
    floor = i["floor"]["p50"]
    return all(i[k]["p50"] <= floor + 0.5 for k in ("apphostd background", "apphostd active", "plain") if i[k]["wakeups_per_s"])


def table(r, n, m):
    ready, mem, idle, c = r["ready_ms"], r["memory_kib"], r["idle"], r["checks"]
    a, f, p = mem["apphostd"], mem["floor"], mem["plain"]

    def pair(s, fmt):
        return f"{fmt(s['p50'])} · {fmt(s['p90'])}"
    ms = lambda v: f"{v:.2f} ms"  # noqa: E731
    kib = lambda v: mib(v)  # noqa: E731
    half = c["sum_by_state"]["want"]["background"]
    got = c["sum_by_state"]["value"] or {}
    shown = ", ".join(f"{s} {v:g}" for s, v in sorted(got.items()) if v) or "nothing"
    rows = [
        "| measure | apphostd | floor | goal |",
        "| --- | --- | --- | --- |",
        f"| instances (each its own state directory, secret, config; one textfile directory) | {n} with metrics "
        f"(+ {m} without) | {n} ServiceGroupFloor | |",
        f"| exec → READY=1, p50 · p90 (one at a time) | {pair(ready['apphostd'], ms)} | {pair(ready['floor'], ms)} | |",
        f"| READY=1 ratio apphostd ÷ floor, p50 | **{ready['apphostd_over_floor']:.2f}×** | 1 | ≤ 1.5× |",
        f"| private memory (Private_Clean + Private_Dirty) per instance, p50 · p90 | **{pair(a['private'], kib)}** | "
        f"{pair(f['private'], kib)} | ≤ 1.0 MiB |",
        f"| of which Private_Dirty, p50 | {kib(a['private_dirty']['p50'])} | {kib(f['private_dirty']['p50'])} | |",
        f"| PSS per instance, p50 · p90 | {pair(a['pss'], kib)} | {pair(f['pss'], kib)} | |",
        f"| RSS per instance, p50 · p90 | {pair(a['rss'], kib)} | {pair(f['rss'], kib)} | |",
        f"| total over the {n} instances: private · PSS · RSS | {kib(a['total']['private'])} · {kib(a['total']['pss'])} · "
        f"{kib(a['total']['rss'])} | {kib(f['total']['private'])} · {kib(f['total']['pss'])} · {kib(f['total']['rss'])} | |",
    ]
    if r["ready_ms"]["plain"]["n"]:
        early = ready["early"]
        rows.append(f"| without the metrics textfile ({m} instances): private · PSS p50, READY=1 p50 | "
                    f"{kib(p['private']['p50'])} · {kib(p['pss']['p50'])}, {ms(early['plain']['p50'])} "
                    f"({ready['plain_over_floor']:.2f}× the floor's {ms(early['floor']['p50'])} in the same first {m} batches; "
                    f"with the textfile there {ms(early['apphostd']['p50'])}, {ready['early_apphostd_over_floor']:.2f}×) | | |")
        rows.append(f"| what the metrics add, p50 (the first {m} batches): private · READY=1 | {(a['private']['p50'] - p['private']['p50']):+.0f} KiB · "
                    f"{(early['apphostd']['p50'] - early['plain']['p50']):+.2f} ms | | |")
    t = r["threads_idle"]
    rows.append(f"| threads per process once idle, p50 (max) | {t['apphostd']['p50']:g} ({t['apphostd']['max']}) | "
                f"{t['floor']['p50']:g} ({t['floor']['max']}) | |")
    w = lambda k: (f"{idle[k]['p50']:.2f}/s (max {idle[k]['max']:.2f})" if idle[k]["wakeups_per_s"] else "—")  # noqa: E731
    iw = r["idle_window"]
    rows.append(f"| idle wake-ups, all threads, {r['idle_seconds']:g} s window ({iw['after_latest_sampled_launch_s']:.0f} s or more after "
                f"launch, {iw['after_last_kill_s']:.0f} s after the kills), {len(idle['floor']['labels'])} instances each: "
                f"background · active · without metrics | {w('apphostd background')} · {w('apphostd active')} · {w('plain')} | "
                f"{w('floor')} | no wake-ups of its own |")
    rows.append(f"| `count(apphost_info)` | {c['count_info']['value']} (after {c['count_info']['seconds_after_ready']:.1f} s) | | = {c['count_info']['want']} |")
    rows.append(f"| `count(apphost_state{{state=\"active\"}} == 1)` | {c['count_active']['value']} | | = {c['count_active']['want']} |")
    rows.append(f"| SIGUSR1 to every second instance ({half}): `sum by (state) (apphost_state)` | {shown}; Prometheus shows it "
                f"**{c['sum_by_state']['seconds_after_last_kill']:.1f} s** after the last kill | | background {half}, "
                f"active {c['sum_by_state']['want']['active']} |")
    k = r["kill_to_status_ms"]
    if k["n"]:
        rows.append(f"| the same, daemons' own STATUS=background: kill → datagram p50 · max | {ms(k['p50'])} · {ms(k['max'])}; "
                    f"all {k['n']} within {r['status_all_in_s_after_first_kill'] * 1000:.0f} ms of the first kill | | |")
    rows.append(f"| `sum(apphost_session_locked)` | {c['session_locked']['value']} | | = {c['session_locked']['want']} |")
    rows.append(f"| `max(node_textfile_scrape_error)` · `up` | {c['scrape_error']['value']} · {c['up']['value']} | | 0 · 1 |")
    s = r["scrape"]
    rows.append(f"| node_exporter scrape (Prometheus every {r['scrape_interval']}): duration last · max over 1 min "
                f"(by hand before: {' · '.join(f'{t * 1000:.0f}' for t in r['manual_scrape_s'])} ms), samples, textfiles | "
                f"{(s['duration_s_last'] or 0) * 1000:.0f} ms · {(s['duration_s_max_over_1m'] or 0) * 1000:.0f} ms, "
                f"{s['samples'] or 0:.0f} samples, {s['textfile_bytes_total'] / 1e6:.1f} MB | | < scrape interval |")
    rows.append(f"| SIGTERM to all: exited 0 | {r['exited_0']['apphostd']}/{len(r['ready_ms_raw']['apphostd'])} "
                f"(+ {r['exited_0']['plain']}/{len(r['ready_ms_raw']['plain'])} without metrics) in {r['stop_s']:.2f} s | "
                f"{r['exited_0']['floor']}/{len(r['ready_ms_raw']['floor'])} | all |")
    rows.append(f"| then `count(apphost_state{{state=\"notRunning\"}} == 1)` | {c['not_running_after_stop']['value']} | | = "
                f"{c['not_running_after_stop']['want']} |")
    return "\n".join(rows)


def print_stderr_summary(results):
    print("Daemons' stderr, distinct lines (numbers as #, paths as $DIR, labels as <label>): lines · instances · text")
    for group, lines in results.get("stderr", {}).items():
        print(f"- {group}: {sum(l['lines'] for l in lines)} lines, {len(lines)} distinct")
        for entry in lines[:40]:
            text = entry["line"] if len(entry["line"]) <= 220 else entry["line"][:217] + "..."
            print(f"    {entry['lines']:6d} · {entry['instances']:5d} · {text}")
        if len(lines) > 40:
            print(f"    ... {len(lines) - 40} more distinct lines (--json has them all)")


if __name__ == "__main__":
    main()
