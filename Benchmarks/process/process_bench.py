#!/usr/bin/env python3
"""Whole-process figures for apphostd, measured side by side in one run.

Usage: bash Benchmarks/process/run.sh [--quick]        (builds a release apphostd first)
       python3 Benchmarks/process/process_bench.py --binary PATH [--quick] [--json FILE]
       bash Benchmarks/process/run.sh --soak [--soak-steps N] [--soak-every K]

Listens on its own NOTIFY_SOCKET (an AF_UNIX datagram socket, as systemd does), starts the
programs under test with it, and prints a Markdown table of medians and ratios:

  readiness       exec -> READY=1: apphostd on the shipped config, a C and a Swift program
                  that call sd_notify(0, "READY=1") at once (the floors). Interleaved runs.
                  Also apphostd ended by SIGKILL each time (every start a recovery, its
                  analytics log never compacted: a crash loop's starts).
  fan-out         kill -USR1 -> the STATUS= datagram reporting the new state, 4/100/1000
                  no-op (probe) services; and 100 probes that each keep 64 bytes of restorable
                  state that changes at every hook (keep-state: 64), so every request also
                  pushes a sealed memfd to the fd store (FDSTOREREMOVE, FDSTORE) before STATUS=.
  idle            CPU time and wake-ups (context switches, all threads) over an idle window
                  with the watchdog off, for apphostd and for an idle C and Swift floor; peak RSS.
  storm           10,000 SIGUSR1 plus 100 queued SIGRTMIN+1/+2 within a second, then one
                  SIGRTMIN+1: alive, no lifecycle bug logged, final STATUS= says background and
                  the services' last hook agrees, SIGTERM afterwards exits 0.
  memory warning  one write into the MEMORY_PRESSURE_WATCH FIFO -> the last service's
                  applicationDidReceiveMemoryWarning starts (4/100/1000 services).

--supervision runs only these (issue 39; not part of the default run), interleaved:

  supervision     the idle measure (wake-ups, CPU over the idle window, watchdog off) for the
                  shipped config as is; the same with `restart: transient` on every service (no
                  timer while no restart waits: the same wake-ups); and the same plus a `probe`
                  whose run loop throws 5 s after each start (`restart: transient`,
                  `restart-delay: 1s`, optional): its extra wake-ups against the restarts, counted
                  from the STATUS= datagrams that arrive in the window.

--soak runs only this (it is not part of the default run), on the shipped config:

  soak            resident set (VmRSS, VmHWM) every K steps (default 10,000) over N steps
                  (default 100,000), in a fresh daemon each: N reloads (SIGHUP with the analytics
                  flush-interval alternating 60s / 30s, a live settings update; each waits for
                  its READY=1), then N transitions (SIGRTMIN+1 / SIGRTMIN+2 alternating, each
                  waiting for its STATUS=). Each sample follows a SIGRTMIN+18 (a critical memory
                  warning: analytics flushes the records it buffers between flushes, one per
                  reload, and the heap is trimmed). Memory that keeps growing with the steps is
                  a leak; flat, or growth that levels off, is not.
"""
import argparse, json, os, platform, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIGRTMIN = signal.SIGRTMIN


def median(values):
    return statistics.median(values) if values else float("nan")


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


SO_TIMESTAMPNS = 35  # Linux; the kernel stamps each datagram (CLOCK_REALTIME) as it arrives


class Notify:
    """A NOTIFY_SOCKET listener; every datagram is timestamped on arrival, by this process and by
    the kernel (`kernel_arrival`, CLOCK_REALTIME): the fan-out measures with the kernel's stamp,
    so the time this script takes to read the datagrams before a STATUS= (the fd-store pushes
    that carry an fd) does not count as the daemon's."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.bind(self.path)
        self.kernel_arrival = None

    def wait_for(self, predicate, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no matching notification")
            self.sock.settimeout(remaining)
            try:
                raw, ancillary, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16))
            except socket.timeout:
                raise TimeoutError("no matching notification")
            now = time.monotonic()
            data = raw.decode(errors="replace")
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
                    seconds, nanoseconds = int.from_bytes(payload[0:8], "little"), int.from_bytes(payload[8:16], "little")
                    self.kernel_arrival = seconds + nanoseconds / 1e9
            fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
            if predicate(fields):
                return now, fields

    def drain(self):
        self.sock.settimeout(0)
        try:
            while True:
                self.sock.recv(65536)
        except (BlockingIOError, socket.timeout):
            pass


def write_config(directory, name, services, state, record_last=None, keep_state=0, metrics=None, groups=0):
    """`groups` > 0 puts the probes into that many `group:` composites, so the same probes run
    one level down, named by their path (composite0/probe0)."""
    lines = ["host:", f"  state-directory: {state}", "  log-level: warning"]
    if metrics:
        lines += ["  metrics:", f"    textfile: {metrics}"]
    lines.append("services:")
    per_group = services // groups if groups else 0
    indent = "  "
    for index in range(services):
        if groups and index % per_group == 0:
            lines += [f"  - name: composite{index // per_group}", "    group:"]
            indent = "      "
        lines.append(f"{indent}- name: probe{index}")
        lines.append(f"{indent}  type: probe")
        settings = []
        if record_last and index == services - 1:
            settings.append(f"{indent}    record-to: {record_last}")
        if keep_state:
            settings.append(f"{indent}    keep-state: {keep_state}")
        if settings:
            lines.append(f"{indent}  settings:")
            lines += settings
    path = os.path.join(directory, f"{name}.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def write_back_binaries():
    """Writes dirty page-cache pages back before memory is measured. A binary built or copied
    less than about 30 s before (the kernel's dirty_expire) still has dirty pages in the page
    cache, and smaps counts each page of them that the process maps as Private_Dirty: several
    MiB that are no process's memory (issue 54's "transient")."""
    os.sync()


# What systemd would set for a unit: a benchmark's program starts without the caller's.
SYSTEMD_VARIABLES = ("WATCHDOG_USEC", "WATCHDOG_PID", "MEMORY_PRESSURE_WATCH", "MEMORY_PRESSURE_WRITE", "JOURNAL_STREAM")


def bench_credentials(directory):
    """A new $CREDENTIALS_DIRECTORY under `directory` holding the session lock's secret."""
    credentials = tempfile.mkdtemp(dir=directory)
    with open(os.path.join(credentials, "session-secret"), "w") as f:
        f.write("bench-secret\n")
    os.chmod(os.path.join(credentials, "session-secret"), 0o600)
    return credentials


def start(argv, notify, env_extra=None, stderr=subprocess.DEVNULL):
    env = dict(os.environ)
    env["NOTIFY_SOCKET"] = notify.path
    for name in SYSTEMD_VARIABLES:
        env.pop(name, None)
    if env_extra:
        env.update(env_extra)
    started = time.monotonic()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    return started, process


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


FLOORS = {
    "ready.c": '#include <systemd/sd-daemon.h>\nint main(void){sd_notify(0,"READY=1");return 0;}\n',
    "idle.c": '#include <systemd/sd-daemon.h>\n#include <unistd.h>\n'
              'int main(void){sd_notify(0,"READY=1");for(;;)pause();}\n',
    "ready.swift": '@_silgen_name("sd_notify") func sd_notify(_ unset: Int32, _ state: UnsafePointer<CChar>) -> Int32\n'
                   '_ = sd_notify(0, "READY=1")\n',
    # An idle Swift Concurrency program: one task ran on the global executor (libdispatch's worker
    # pool, as every task of apphostd does; a plain `Task {}` here would run on the main actor)
    # and now waits forever.
    "idle.swift": '@_silgen_name("sd_notify") func sd_notify(_ unset: Int32, _ state: UnsafePointer<CChar>) -> Int32\n'
                  'let task = Task.detached { _ = sd_notify(0, "READY=1"); await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in } }\n'
                  'await task.value\n',
}


def build_floors(directory):
    binaries = {}
    for name, source in FLOORS.items():
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(source)
        binary = os.path.join(directory, name.replace(".", "-"))
        if name.endswith(".c"):
            command = ["cc", "-O2", "-o", binary, path, "-lsystemd"]
        else:
            command = ["swiftc", "-O", "-o", binary, path, "-lsystemd"]
            # The same program with the Swift runtime linked in, as apphostd is built for install.
            subprocess.run(["swiftc", "-O", "-static-stdlib", "-o", binary + "-static", path, "-lsystemd"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            binaries[name + " static"] = binary + "-static"
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        binaries[name] = binary
    return binaries


def image(binary, static_floor, dynamic_binary):
    """Sizes of the static binaries as built and stripped (as deploy/INSTALL.md installs apphostd),
    their protocol conformance records (the runtime scans them all on every first lookup), and
    the Foundation or ICU libraries the dynamically linked build loads."""
    def sizes(path):
        stripped = path + ".stripped"
        subprocess.run(["strip", "-o", stripped, path], check=True)
        size = os.path.getsize(stripped)
        os.unlink(stripped)
        sections = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
        conformances = next((int(line.split()[5], 16) // 4 for line in sections.splitlines()
                             if "swift5_protocol_conformances" in line), 0)
        return {"bytes": os.path.getsize(path), "stripped_bytes": size, "conformances": conformances}
    result = {"apphostd": sizes(binary), "floor": sizes(static_floor)}
    if dynamic_binary and os.path.exists(dynamic_binary):
        libraries = subprocess.run(["ldd", dynamic_binary], capture_output=True, text=True).stdout.split()
        result["ldd_foundation"] = sorted({name for name in libraries
                                          if name.startswith(("libFoundation", "lib_Foundation", "libicu"))})
    return result


def readiness(programs, notify, runs, killed=()):
    """Runs each program `runs` times, interleaved; returns {label: [ms]}. The programs labelled
    in `killed` end with SIGKILL instead of SIGTERM, so each of their starts follows an unclean
    exit."""
    times = {label: [] for label, _, _ in programs}
    for _ in range(runs):
        for label, argv, env in programs:
            notify.drain()
            started, process = start(argv, notify, env)
            ready, _ = notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
            times[label].append((ready - started) * 1000)
            if label in killed:
                process.kill()
                process.wait()
            else:
                stop(process)
    return times


def fan_out(binary, notify, directory, services, rounds, keep_state=0, metrics=False, groups=0):
    state = tempfile.mkdtemp(dir=directory)
    textfile = os.path.join(state, "apphostd.prom") if metrics else None
    config = write_config(directory, f"fanout-{services}-{keep_state}-{int(metrics)}-{groups}", services, state, keep_state=keep_state, metrics=textfile, groups=groups)
    notify.drain()
    _, process = start([binary, "run", "--config", config], notify)
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=120)
    latencies = []
    expected = "background"
    for _ in range(rounds + 2):
        time.sleep(0.01)  # between rounds, so each signal finds an idle host
        sent = time.time()
        os.kill(process.pid, signal.SIGUSR1)
        notify.wait_for(lambda f, e=expected: f.get("STATUS", "").startswith(e))
        latencies.append((notify.kernel_arrival - sent) * 1000)
        expected = "active" if expected == "background" else "background"
    stop(process)
    return latencies[2:]  # the first round trip warms caches


def proc_totals(pid):
    """CPU seconds, context switches by thread id, and peak RSS (KiB) of a process."""
    ticks = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    switches = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                switches[task] = sum(int(line.split()[1]) for line in f
                                     if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except FileNotFoundError:
            pass  # a thread that ended
    with open(f"/proc/{pid}/status") as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
    return cpu, switches, hwm


def idle(argv, notify, seconds, env=None):
    notify.drain()
    _, process = start(argv, notify, env)
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
    # Let launch-time work settle: first flushes, and libdispatch retiring the worker threads the
    # launch started (after 5 s idle); the window then sees the steady state.
    time.sleep(8.0)
    cpu0, sw0, _ = proc_totals(process.pid)
    time.sleep(seconds)
    cpu1, sw1, hwm = proc_totals(process.pid)
    stop(process)
    # A thread that ended inside the window takes its count with it; one that began counts whole.
    wakeups = sum(count - sw0.get(tid, 0) for tid, count in sw1.items())
    return {"cpu_ms": (cpu1 - cpu0) * 1000, "wakeups": wakeups, "wakeups_per_s": wakeups / seconds,
            "threads_before": len(sw0), "threads_after": len(sw1), "peak_rss_kib": hwm}


def supervised_config(text, every=False, flaky=False):
    """The shipped config (`text`) with `restart: transient` on every service (`every`), and with
    a `flaky` probe whose run loop throws 5 s after each start, restarted after 1 s, 2 s, 4 s..."""
    if every:
        lines = []
        for line in text.splitlines():
            lines.append(line)
            if line.startswith("    type: "):
                lines.append("    restart: transient")
        text = "\n".join(lines) + "\n"
    if flaky:
        text += ("  - name: flaky\n    type: probe\n    required: false\n    restart: transient\n"
                 "    restart-delay: 1s\n    settings:\n      faults:\n"
                 "        - { hook: run, action: throw, after: 5s }\n")
    return text


def idle_with_status(argv, notify, seconds, env=None):
    """`idle`, and the STATUS= lines that arrived during the window (each restart, and each
    restart that starts waiting, changes the status)."""
    notify.drain()
    _, process = start(argv, notify, env)
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
    time.sleep(8.0)
    notify.drain()
    cpu0, sw0, _ = proc_totals(process.pid)
    time.sleep(seconds)
    cpu1, sw1, hwm = proc_totals(process.pid)
    statuses = []
    notify.sock.settimeout(0)
    try:
        while True:
            data = notify.sock.recv(65536).decode(errors="replace")
            statuses += [line[len("STATUS="):] for line in data.splitlines() if line.startswith("STATUS=")]
    except (BlockingIOError, socket.timeout):
        pass
    code = stop(process)
    wakeups = sum(count - sw0.get(tid, 0) for tid, count in sw1.items())
    return {"cpu_ms": (cpu1 - cpu0) * 1000, "wakeups": wakeups, "wakeups_per_s": wakeups / seconds,
            "threads_before": len(sw0), "threads_after": len(sw1), "peak_rss_kib": hwm,
            "statuses": statuses, "exit": code}


def run_supervision(args, directory, notify):
    """The idle daemon with and without restart policies, `args.supervision_rounds` interleaved
    rounds of `args.idle_seconds` each."""
    with open(os.path.join(ROOT, "config", "apphostd.yaml")) as f:
        shipped = f.read()
    credentials = bench_credentials(directory)
    cases = {"plain": shipped, "transient": supervised_config(shipped, every=True),
             "flaky": supervised_config(shipped, every=True, flaky=True)}
    results = {"machine": machine(), "load_average_at_start": os.getloadavg()[0],
               "seconds": args.idle_seconds, "runs": {name: [] for name in cases}}
    for round_ in range(args.supervision_rounds):
        for name, text in cases.items():
            config = os.path.join(directory, f"{name}.yaml")
            with open(config, "w") as f:
                f.write(text)
            env = {"STATE_DIRECTORY": tempfile.mkdtemp(dir=directory), "CREDENTIALS_DIRECTORY": credentials}
            result = idle_with_status([args.binary, "run", "--config", config], notify, args.idle_seconds, env)
            result["load_average"] = os.getloadavg()[0]
            results["runs"][name].append(result)
            print(f"round {round_ + 1} {name}: {result['wakeups']} wake-ups, {result['cpu_ms']:.0f} ms CPU, "
                  f"threads {result['threads_before']}->{result['threads_after']}, load {result['load_average']:.2f}, "
                  f"STATUS= {result['statuses']}", flush=True)
    return results


def last_hook(record):
    try:
        with open(record) as f:
            lines = [l.split()[-1] for l in f.read().splitlines() if l.strip()]
    except FileNotFoundError:
        return None
    for event in reversed(lines):
        if event in ("didEnterBackground", "didBecomeActive", "willResignActive", "willEnterForeground"):
            return event
    return None


def storm(binary, notify, directory, count):
    state = tempfile.mkdtemp(dir=directory)
    record = os.path.join(directory, "storm.log")
    config = write_config(directory, "storm", 4, state, record_last=record)
    stderr_path = os.path.join(directory, "storm.stderr")
    notify.drain()

    def quiet_status():
        """Reads STATUS= datagrams until none came for 2 s: the host handled every signal."""
        count, last = 0, ""
        while True:
            try:
                _, fields = notify.wait_for(lambda f: "STATUS" in f, timeout=2)
                count, last = count + 1, fields["STATUS"]
            except TimeoutError:
                return count, last

    with open(stderr_path, "w") as stderr:
        _, process = start([binary, "run", "--config", config], notify, stderr=stderr)
        notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
        began = time.monotonic()
        for i in range(count):
            os.kill(process.pid, signal.SIGUSR1)
            if i % 100 == 0:
                os.kill(process.pid, SIGRTMIN + 1 + (i // 100) % 2)
        sent_in = time.monotonic() - began
        statuses, last = quiet_status()
        settled_in = time.monotonic() - began
        alive = process.poll() is None
        hook = last_hook(record)
        # The kernel hands pending signals over lowest number first, not in sending order, so the
        # state a storm ends in is not predictable; what must hold is that STATUS= and the
        # services agree on it, and that an explicit request afterwards is honoured.
        agreed = (last.startswith("background") and hook == "didEnterBackground") or \
                 (last.startswith("active") and hook == "didBecomeActive")
        target, expected_hook = ("active", "didBecomeActive") if last.startswith("background") else ("background", "didEnterBackground")
        os.kill(process.pid, SIGRTMIN + (2 if target == "active" else 1))
        try:
            notify.wait_for(lambda f: f.get("STATUS", "").startswith(target), timeout=10)
            honoured = last_hook(record) == expected_hook
        except TimeoutError:
            honoured = False
        code = stop(process)
    with open(stderr_path, errors="replace") as f:
        log = f.read()
    bugs = sum(1 for line in log.splitlines() if "lifecycle bug" in line or "illegal" in line.lower())
    return {"signals": count + (count + 99) // 100, "sent_in_s": sent_in, "settled_in_s": settled_in,
            "status_datagrams": statuses, "alive_after": alive, "final_status": last,
            "services_last_hook": hook, "status_agrees_with_services": agreed, "explicit_request_after_storm": target,
            "explicit_request_honoured": honoured, "lifecycle_bugs_logged": bugs, "exit_code": code,
            "consistent": alive and agreed and honoured and bugs == 0 and code == 0}


def memory_warning(binary, notify, directory, services, rounds):
    state = tempfile.mkdtemp(dir=directory)
    record = os.path.join(directory, f"mw-{services}.log")
    config = write_config(directory, f"mw-{services}", services, state, record_last=record)
    fifo = os.path.join(directory, f"pressure-{services}.fifo")
    os.mkfifo(fifo)
    notify.drain()
    _, process = start([binary, "run", "--config", config], notify, {"MEMORY_PRESSURE_WATCH": fifo})
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=120)
    writer = os.open(fifo, os.O_WRONLY)
    latencies = []
    seen = 0
    for _ in range(rounds):
        time.sleep(0.05)  # one event per write: let the previous burst end
        sent = time.monotonic()
        os.write(writer, b"x")
        while True:
            with open(record) as f:
                count = f.read().count("didReceiveMemoryWarning")
            if count > seen:
                break
            time.sleep(0.0001)
        latencies.append((time.monotonic() - sent) * 1000)
        seen = count
    os.close(writer)
    stop(process)
    return latencies


def memory_kib(pid):
    """VmRSS and VmHWM of a process, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def shipped_config(state, flush_interval):
    """config/apphostd.yaml with its own state directory, quieter logging and the analytics
    flush-interval set to `flush_interval`."""
    with open(os.path.join(ROOT, "config", "apphostd.yaml")) as f:
        text = f.read()
    for old, new in (("\nhost:\n", f"\nhost:\n  state-directory: {state}\n"),
                     ("\n  log-level: info\n", "\n  log-level: warning\n"),
                     ("flush-interval: 60s", f"flush-interval: {flush_interval}")):
        if old not in text:
            sys.exit(f"soak: config/apphostd.yaml no longer contains {old.strip()!r}; adjust shipped_config()")
        text = text.replace(old, new, 1)
    return text


def write_atomically(path, text):
    temporary = path + ".new"
    with open(temporary, "w") as f:
        f.write(text)
    os.replace(temporary, path)


def soak(binary, notify, directory, env, kind, steps, every):
    """`steps` reloads or transitions in one fresh daemon; memory every `every` steps.
    Returns rows of (step, VmRSS KiB, VmHWM KiB, seconds since the first step)."""
    state = tempfile.mkdtemp(dir=directory)
    config = os.path.join(directory, f"soak-{kind}.yaml")
    texts = [shipped_config(state, "60s"), shipped_config(state, "30s")]
    write_atomically(config, texts[0])
    notify.drain()
    _, process = start([binary, "run", "--config", config], notify, env)
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
    if kind == "transitions":
        # Each waits for its own STATUS=, so the two never queue against each other (the kernel
        # hands pending real-time signals over lowest number first).
        requests = [(SIGRTMIN + 1, "background"), (SIGRTMIN + 2, "active")]
    def one_step(step):
        if kind == "reloads":
            write_atomically(config, texts[step % 2])
            os.kill(process.pid, signal.SIGHUP)
            notify.wait_for(lambda f: f.get("READY") == "1", timeout=30)
        else:
            number, word = requests[(step - 1) % 2]
            os.kill(process.pid, number)
            notify.wait_for(lambda f, w=word: f.get("STATUS", "").startswith(w), timeout=30)

    def trimmed_memory(step):
        # SIGRTMIN+18 is a critical memory warning: analytics flushes the records it buffers
        # between flushes (one per reload) and the heap is trimmed. The step repeated after it
        # is handled after it (requests keep their order), so the sample follows the trim.
        os.kill(process.pid, SIGRTMIN + 18)
        one_step(step + 1)
        one_step(step + 2)
        return memory_kib(process.pid)

    began = time.monotonic()
    rows = [(0, *trimmed_memory(0), 0.0)]
    try:
        for step in range(1, steps + 1):
            one_step(step)
            if step % every == 0:
                rows.append((step, *trimmed_memory(step), time.monotonic() - began))
                print(f"  soak {kind}: {step} steps, VmRSS {rows[-1][1]} KiB, {rows[-1][3]:.0f} s", file=sys.stderr, flush=True)
    finally:
        code = stop(process)
    return {"rows": rows, "exit_code": code}


def exit_text(code):
    """`exit 0`, or `killed by SIGSEGV` for a negative Popen return code."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def soak_table(kind, result):
    rows = result["rows"]
    lines = [f"{kind}: VmRSS and VmHWM every {rows[1][0] - rows[0][0] if len(rows) > 1 else 0} steps; "
             f"SIGTERM afterwards: {exit_text(result['exit_code'])}", "",
             "| step | VmRSS KiB | Δ since previous | Δ since step 0 | VmHWM KiB | elapsed s |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    previous = rows[0][1]
    for step, rss, hwm, elapsed in rows:
        lines.append(f"| {step} | {rss} | {rss - previous:+d} | {rss - rows[0][1]:+d} | {hwm} | {elapsed:.1f} |")
        previous = rss
    if len(rows) > 2:
        # The second half's growth per step: a leak keeps it steady, a warm-up lets it go to ~0.
        middle = rows[len(rows) // 2]
        last = rows[-1]
        per_step = (last[1] - middle[1]) * 1024 / max(1, last[0] - middle[0])
        first_half = (middle[1] - rows[0][1]) * 1024 / max(1, middle[0])
        lines.append("")
        lines.append(f"growth per step: first half {first_half:.1f} B, second half {per_step:.1f} B "
                     f"({'levels off' if per_step < max(16.0, first_half / 4) else 'keeps growing'})")
    return "\n".join(lines)


def run_soak(args, directory, notify):
    credentials = bench_credentials(directory)
    env = {"CREDENTIALS_DIRECTORY": credentials, "MEMORY_PRESSURE_WATCH": "/dev/null"}
    results = {"machine": machine(), "load_average_at_start": os.getloadavg()[0], "steps": args.soak_steps}
    for kind in ("reloads", "transitions"):
        results[kind] = soak(args.binary, notify, directory, env, kind, args.soak_steps, args.soak_every)
    print(f"Machine: {results['machine']}; load average at start {results['load_average_at_start']:.2f}")
    for kind, title in (("reloads", f"{args.soak_steps} reloads (analytics flush-interval 60s / 30s, each waits for READY=1)"),
                        ("transitions", f"{args.soak_steps} transitions (SIGRTMIN+1 / SIGRTMIN+2, each waits for its STATUS=)")):
        print()
        print(soak_table(title, results[kind]))
    return results


def machine():
    cores = os.cpu_count()
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) // (1024 * 1024)
    swift = subprocess.run(["swiftc", "--version"], capture_output=True, text=True).stdout.splitlines()
    return f"{cores} cores, {memory} GiB, {platform.platform()}, {swift[0] if swift else 'swift ?'}"


def table(results, args):
    r = results["readiness_ms"]
    f = results["fan_out_ms"]
    i = results["idle"]
    s = results["storm"]
    m = results["memory_warning_ms"]
    # One SIGUSR1 toggle is two hook events per service (willResignActive + didEnterBackground,
    # or willEnterForeground + didBecomeActive).
    per_service = (f["1000"]["p50"] - f["100"]["p50"]) * 1000 / 900 / 2
    rows = [
        "| measure | result | goal |",
        "| --- | --- | --- |",
        f"| readiness, exec → READY=1, p50 | C floor {r['c']['p50']:.2f} ms · Swift floor {r['swift']['p50']:.2f} ms "
        f"(static stdlib {r['swift_static']['p50']:.2f} ms) · apphostd (shipped config) {r['apphostd']['p50']:.2f} ms | |",
        f"| readiness ratio apphostd ÷ Swift floor | **{r['apphostd_over_swift']:.2f}×** (÷ static Swift floor "
        f"{r['apphostd_over_swift_static']:.2f}×, ÷ C floor {r['apphostd_over_c']:.2f}×) | ≤ 1.5× |",
    ]
    for n in ("4", "100", "1000"):
        rows.append(f"| fan-out, kill -USR1 → STATUS=, {n} services | p50 {f[n]['p50']:.3f} ms · p90 {f[n]['p90']:.3f} ms | "
                    + ("p50 < 1 ms" if n == "100" else "linear") + " |")
    rows.append(f"| fan-out, kill -USR1 → STATUS=, 100 services keeping 64 bytes of state each | p50 {f['100 with state']['p50']:.3f} ms · "
                f"p90 {f['100 with state']['p90']:.3f} ms | p50 ≤ 1 ms |")
    rows.append(f"| the same, with the metrics textfile on (host.metrics.textfile) | p50 {f['100 with state and metrics']['p50']:.3f} ms · "
                f"p90 {f['100 with state and metrics']['p90']:.3f} ms | p50 ≤ 1 ms |")
    rows.append(f"| fan-out, kill -USR1 → STATUS=, 100 services in 10 composites (group:) | p50 {f['100 in composites']['p50']:.3f} ms · "
                f"p90 {f['100 in composites']['p90']:.3f} ms | p50 ≤ 1 ms |")
    rows.append(f"| fan-out marginal cost (100 → 1000 services) | {per_service:.2f} µs per service per event | linear, small |")
    for label in ("apphostd", "servicegroup", "swift", "swift_static", "c"):
        if label not in i:
            continue
        name = {"apphostd": "apphostd (shipped config)", "servicegroup": "ServiceGroup floor (five no-op services)",
                "swift": "idle Swift Concurrency floor",
                "swift_static": "idle Swift Concurrency floor, static stdlib", "c": "idle C floor"}[label]
        rows.append(f"| idle {i['seconds']} s, watchdog off: {name} | {i[label]['wakeups']} wake-ups "
                    f"({i[label]['wakeups_per_s']:.2f}/s) · {i[label]['cpu_ms']:.0f} ms CPU · peak RSS {i[label]['peak_rss_kib'] / 1024:.1f} MiB | "
                    + ("none of its own" if label == "apphostd" else "baseline") + " |")
    rows.append(f"| storm: {s['signals']} signals sent in {s['sent_in_s']:.3f} s, settled in {s['settled_in_s'] - 2:.2f} s | "
                f"alive: {s['alive_after']} · lifecycle bugs logged: {s['lifecycle_bugs_logged']} · final STATUS=`{s['final_status']}`, "
                f"services' last hook {s['services_last_hook']} (agree: {s['status_agrees_with_services']}) · "
                f"then SIGRTMIN to {s['explicit_request_after_storm']} honoured: {s['explicit_request_honoured']} · "
                f"SIGTERM exit {s['exit_code']} | consistent: **{s['consistent']}** |")
    for n in ("4", "100", "1000"):
        rows.append(f"| memory warning, FIFO write → last service's hook, {n} services | p50 {m[n]['p50']:.3f} ms · p90 {m[n]['p90']:.3f} ms | |")
    g = results["image"]
    mb = 1_000_000
    rows.append(f"| static binary, as built · stripped (installed) | apphostd {g['apphostd']['bytes'] / mb:.1f} MB · "
                f"**{g['apphostd']['stripped_bytes'] / mb:.1f} MB** · floor {g['floor']['bytes'] / mb:.1f} MB · "
                f"{g['floor']['stripped_bytes'] / mb:.1f} MB | ≤ 16 MB |")
    rows.append(f"| protocol conformances in the image | apphostd {g['apphostd']['conformances']} · floor {g['floor']['conformances']} | |")
    rows.append(f"| readiness ratio apphostd ÷ static Swift floor | **{r['apphostd_over_swift_static']:.2f}×** | ≤ 2× |")
    if "servicegroup" in r:
        rows.append(f"| readiness ratio apphostd ÷ ServiceGroup floor (issue 25) | **{r['apphostd_over_servicegroup']:.2f}×** "
                    f"({r['apphostd']['p50']:.2f} ÷ {r['servicegroup']['p50']:.2f} ms) | ≤ 1.5× |")
        if "apphostd_after_kill" in r:
            rows.append(f"| the same, every start after a SIGKILL (a crash loop: recovery, nothing compacted) | "
                        f"{r['apphostd_after_kill']['p50'] / r['servicegroup']['p50']:.2f}× ({r['apphostd_after_kill']['p50']:.2f} ms) | |")
        rows.append(f"| readiness ServiceGroup floor ÷ static Swift floor | {r['servicegroup']['p50']:.2f} ms: "
                    f"{r['servicegroup_over_swift_static']:.2f}× | (the design's floor) |")
    rows.append(f"| peak RSS idle, apphostd ÷ static Swift floor | {i['apphostd']['peak_rss_kib'] / 1024:.1f} MiB ÷ "
                f"{i['swift_static']['peak_rss_kib'] / 1024:.1f} MiB | ≤ 8 MiB |")
    if "servicegroup" in i:
        rows.append(f"| peak RSS idle, ServiceGroup floor | {i['servicegroup']['peak_rss_kib'] / 1024:.1f} MiB | (the design's floor) |")
    if "ldd_foundation" in g:
        rows.append(f"| Foundation or ICU in `ldd` of the dynamic build | {', '.join(g['ldd_foundation']) or 'none'} | none |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "apphostd"))
    parser.add_argument("--servicegroup-floor", help="ServiceGroupFloor (a ServiceGroup of five no-op services that sends READY=1), "
                        "built by Benchmarks/process/run.sh: the design's floor")
    parser.add_argument("--dynamic-binary", help="a dynamically linked apphostd (the debug build) whose ldd is checked for Foundation and ICU")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, 5 s idle windows")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--soak", action="store_true", help="only the soak: memory over many reloads and transitions")
    parser.add_argument("--soak-steps", type=int, default=100_000, help="reloads, and transitions, per soak (default 100000)")
    parser.add_argument("--soak-every", type=int, help="sample memory every this many steps (default a tenth of --soak-steps)")
    parser.add_argument("--supervision", action="store_true", help="only the idle daemon with and without restart policies (issue 39)")
    parser.add_argument("--supervision-rounds", type=int, default=2, help="interleaved rounds of --supervision (default 2)")
    parser.add_argument("--idle-seconds", type=int, help="the idle window (default 30; 5 with --quick)")
    args = parser.parse_args()
    write_back_binaries()
    if not os.path.exists(args.binary):
        sys.exit(f"{args.binary} is missing: build it with `swift build -c release --product apphostd`")
    if args.idle_seconds is None:
        args.idle_seconds = 5 if args.quick else 30
    if args.supervision:
        directory = tempfile.mkdtemp(prefix="apphostd-supervision-")
        try:
            results = run_supervision(args, directory, Notify(directory))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
        return
    if args.soak:
        args.soak_every = args.soak_every or max(1, args.soak_steps // 10)
        directory = tempfile.mkdtemp(prefix="apphostd-soak-")
        try:
            results = run_soak(args, directory, Notify(directory))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
        return
    runs = 10 if args.quick else 30
    rounds = 20 if args.quick else 100
    idle_seconds = args.idle_seconds
    directory = tempfile.mkdtemp(prefix="apphostd-bench-")
    notify = Notify(directory)
    results = {"machine": machine(), "load_average_at_start": os.getloadavg()[0]}
    try:
        floors = build_floors(directory)
        results["image"] = image(args.binary, floors["ready.swift static"], args.dynamic_binary)
        shipped = os.path.join(ROOT, "config", "apphostd.yaml")
        state = tempfile.mkdtemp(dir=directory)
        credentials = bench_credentials(directory)
        shipped_env = {"STATE_DIRECTORY": state, "CREDENTIALS_DIRECTORY": credentials}
        programs = [("c", [floors["ready.c"]], None), ("swift", [floors["ready.swift"]], None),
                    ("swift_static", [floors["ready.swift static"]], None), ("apphostd", [args.binary, "run", "--config", shipped], shipped_env)]
        if args.servicegroup_floor:
            programs.append(("servicegroup", [args.servicegroup_floor], None))
        # The same config on a state directory of its own, each run ended by SIGKILL: every start
        # is a recovery (previous run unclean), and nothing is compacted, as in a crash loop.
        crashing = {"STATE_DIRECTORY": tempfile.mkdtemp(dir=directory), "CREDENTIALS_DIRECTORY": credentials}
        programs.append(("apphostd_after_kill", [args.binary, "run", "--config", shipped], crashing))
        times = readiness(programs, notify, runs, killed={"apphostd_after_kill"})
        results["readiness_ms"] = {label: {"p50": median(v), "p90": percentile(v, 90)} for label, v in times.items()}
        results["readiness_ms"]["apphostd_over_swift"] = median(times["apphostd"]) / median(times["swift"])
        results["readiness_ms"]["apphostd_over_c"] = median(times["apphostd"]) / median(times["c"])
        results["readiness_ms"]["apphostd_over_swift_static"] = median(times["apphostd"]) / median(times["swift_static"])
        if args.servicegroup_floor:
            results["readiness_ms"]["servicegroup_over_swift_static"] = median(times["servicegroup"]) / median(times["swift_static"])
            results["readiness_ms"]["apphostd_over_servicegroup"] = median(times["apphostd"]) / median(times["servicegroup"])
        results["fan_out_ms"] = {}
        for n in (4, 100, 1000):
            lat = fan_out(args.binary, notify, directory, n, rounds)
            results["fan_out_ms"][str(n)] = {"p50": median(lat), "p90": percentile(lat, 90)}
        lat = fan_out(args.binary, notify, directory, 100, rounds, keep_state=64)
        results["fan_out_ms"]["100 with state"] = {"p50": median(lat), "p90": percentile(lat, 90)}
        lat = fan_out(args.binary, notify, directory, 100, rounds, keep_state=64, metrics=True)
        results["fan_out_ms"]["100 with state and metrics"] = {"p50": median(lat), "p90": percentile(lat, 90)}
        lat = fan_out(args.binary, notify, directory, 100, rounds, groups=10)
        results["fan_out_ms"]["100 in composites"] = {"p50": median(lat), "p90": percentile(lat, 90)}
        results["idle"] = {"seconds": idle_seconds,
                           "apphostd": idle([args.binary, "run", "--config", shipped], notify, idle_seconds, shipped_env),
                           "swift": idle([floors["idle.swift"]], notify, idle_seconds),
                           "swift_static": idle([floors["idle.swift static"]], notify, idle_seconds),
                           "c": idle([floors["idle.c"]], notify, idle_seconds)}
        if args.servicegroup_floor:
            results["idle"]["servicegroup"] = idle([args.servicegroup_floor], notify, idle_seconds)
        results["storm"] = storm(args.binary, notify, directory, 10_000)
        results["memory_warning_ms"] = {}
        for n in (4, 100, 1000):
            lat = memory_warning(args.binary, notify, directory, n, 10 if args.quick else 30)
            results["memory_warning_ms"][str(n)] = {"p50": median(lat), "p90": percentile(lat, 90)}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(f"Machine: {results['machine']}; load average at start {results['load_average_at_start']:.2f}")
    print()
    print(table(results, args))
    failed = [goal for goal, met in (
        ("readiness ≤ 1.5× the Swift floor", results["readiness_ms"]["apphostd_over_swift"] <= 1.5),
        ("readiness ≤ 2× the static Swift floor", results["readiness_ms"]["apphostd_over_swift_static"] <= 2.0),
        ("readiness ≤ 1.5× the ServiceGroup floor", results["readiness_ms"].get("apphostd_over_servicegroup", 0) <= 1.5),
        ("stripped static binary ≤ 16 MB", results["image"]["apphostd"]["stripped_bytes"] <= 16_000_000),
        ("peak RSS idle ≤ 8 MiB", results["idle"]["apphostd"]["peak_rss_kib"] <= 8 * 1024),
        ("fan-out p50 < 1 ms at 100 services", results["fan_out_ms"]["100"]["p50"] < 1.0),
        ("fan-out p50 ≤ 1 ms at 100 services holding state", results["fan_out_ms"]["100 with state"]["p50"] <= 1.0),
        ("fan-out p50 ≤ 1 ms at 100 services holding state, metrics on", results["fan_out_ms"]["100 with state and metrics"]["p50"] <= 1.0),
        ("fan-out p50 ≤ 1 ms at 100 services in composites", results["fan_out_ms"]["100 in composites"]["p50"] <= 1.0),
        ("storm consistent", results["storm"]["consistent"]),
    ) if not met]
    print()
    print("goals missed: " + ", ".join(failed) if failed else "all goals met")


if __name__ == "__main__":
    main()
