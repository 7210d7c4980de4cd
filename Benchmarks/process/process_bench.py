#!/usr/bin/env python3
"""Whole-process figures for apphostd, measured side by side in one run.

Usage: python3 Benchmarks/process/process_bench.py [--binary PATH] [--quick]

Listens on its own NOTIFY_SOCKET (an AF_UNIX datagram socket) the way systemd does, starts
the programs under test with it, and reports medians and ratios:
  readiness      exec → READY=1 for apphostd (shipped config), a C and a Swift sd_notify floor
  fan-out        kill -USR1 → the STATUS= datagram that reports the new state, 4/100/1000 services
  idle           CPU time and context switches over an idle window, watchdog off; peak RSS
  storm          10,000 SIGUSR1 plus queued SIGRTMIN+1/+2 within a second: survival, final STATUS
  memory warning write into the MEMORY_PRESSURE_WATCH FIFO → the last service's hook
"""
import argparse, json, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIGRTMIN = signal.SIGRTMIN


def median(values):
    return statistics.median(values) if values else float("nan")


class Notify:
    """A NOTIFY_SOCKET listener that timestamps every datagram."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)

    def wait_for(self, predicate, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no matching notification")
            self.sock.settimeout(remaining)
            data = self.sock.recv(65536).decode(errors="replace")
            now = time.monotonic()
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


def write_config(directory, services, state, extra_settings=None, record_last=None):
    lines = ["host:", f"  state-directory: {state}", "  log-level: warning", "services:"]
    for index in range(services):
        lines.append(f"  - name: probe{index}")
        lines.append("    type: probe")
        if record_last and index == services - 1:
            lines.append("    settings:")
            lines.append(f"      record-to: {record_last}")
    path = os.path.join(directory, f"bench-{services}.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def start(argv, notify, env_extra=None):
    env = dict(os.environ)
    env["NOTIFY_SOCKET"] = notify.path
    env.pop("WATCHDOG_USEC", None)
    env.pop("MEMORY_PRESSURE_WATCH", None)
    if env_extra:
        env.update(env_extra)
    started = time.monotonic()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return started, process


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def build_floors(directory):
    c_source = os.path.join(directory, "ready.c")
    with open(c_source, "w") as f:
        f.write('#include <systemd/sd-daemon.h>\nint main(void){sd_notify(0,"READY=1");return 0;}\n')
    c_binary = os.path.join(directory, "ready-c")
    subprocess.run(["cc", "-O2", "-o", c_binary, c_source, "-lsystemd"], check=True)
    swift_source = os.path.join(directory, "ready.swift")
    with open(swift_source, "w") as f:
        f.write('@_silgen_name("sd_notify") func sd_notify(_ unset: Int32, _ state: UnsafePointer<CChar>) -> Int32\n'
                '_ = sd_notify(0, "READY=1")\n')
    swift_binary = os.path.join(directory, "ready-swift")
    subprocess.run(["swiftc", "-O", "-o", swift_binary, swift_source, "-lsystemd"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return c_binary, swift_binary


def readiness(argv, notify, runs, keep_running=False):
    times = []
    for _ in range(runs):
        notify.drain()
        started, process = start(argv, notify)
        ready, _ = notify.wait_for(lambda f: f.get("READY") == "1")
        times.append((ready - started) * 1000)
        if keep_running:
            stop(process)
        else:
            process.wait(timeout=10)
    return times


def fan_out(binary, notify, directory, services, rounds):
    state = tempfile.mkdtemp(dir=directory)
    config = write_config(directory, services, state)
    notify.drain()
    _, process = start([binary, "run", "--config", config], notify)
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
    latencies = []
    expected = "background"
    for _ in range(rounds):
        sent = time.monotonic()
        os.kill(process.pid, signal.SIGUSR1)
        arrived, _ = notify.wait_for(lambda f, e=expected: f.get("STATUS", "").startswith(e))
        latencies.append((arrived - sent) * 1000)
        expected = "active" if expected == "background" else "background"
    stop(process)
    return latencies


def proc_totals(pid):
    ticks = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    switches = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/status") as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches += int(line.split()[1])
    with open(f"/proc/{pid}/status") as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
    return cpu, switches, hwm


def idle(binary, notify, directory, seconds):
    state = tempfile.mkdtemp(dir=directory)
    config_path = os.path.join(ROOT, "config", "apphostd.yaml")
    notify.drain()
    _, process = start([binary, "run", "--config", config_path], notify, {"STATE_DIRECTORY": state})
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
    time.sleep(1.0)  # let launch-time work settle before the window opens
    cpu0, sw0, _ = proc_totals(process.pid)
    time.sleep(seconds)
    cpu1, sw1, hwm = proc_totals(process.pid)
    stop(process)
    return cpu1 - cpu0, sw1 - sw0, hwm


def storm(binary, notify, directory, count):
    state = tempfile.mkdtemp(dir=directory)
    config = write_config(directory, 4, state)
    notify.drain()
    _, process = start([binary, "run", "--config", config], notify)
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
    began = time.monotonic()
    for i in range(count):
        os.kill(process.pid, signal.SIGUSR1)
        if i % 100 == 0:
            os.kill(process.pid, SIGRTMIN + 1 + (i // 100) % 2)
    os.kill(process.pid, SIGRTMIN + 1)  # the last explicit request: background
    sent_in = time.monotonic() - began
    alive = process.poll() is None
    last = {}
    settle = time.monotonic() + 15
    while time.monotonic() < settle:
        try:
            _, fields = notify.wait_for(lambda f: "STATUS" in f, timeout=2)
            last = fields
        except TimeoutError:
            break
    final = last.get("STATUS", "")
    stop(process)
    return sent_in, alive, final, process.returncode


def memory_warning(binary, notify, directory, services, rounds):
    state = tempfile.mkdtemp(dir=directory)
    record = os.path.join(directory, f"mw-{services}.log")
    config = write_config(directory, services, state, record_last=record)
    fifo = os.path.join(directory, f"pressure-{services}.fifo")
    os.mkfifo(fifo)
    notify.drain()
    _, process = start([binary, "run", "--config", config], notify, {"MEMORY_PRESSURE_WATCH": fifo})
    notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
    writer = os.open(fifo, os.O_WRONLY)
    latencies = []
    for _ in range(rounds):
        before = open(record).read().count("didReceiveMemoryWarning")
        sent = time.monotonic()
        os.write(writer, b"x")
        while open(record).read().count("didReceiveMemoryWarning") == before:
            time.sleep(0.0002)
        latencies.append((time.monotonic() - sent) * 1000)
        time.sleep(0.05)
    os.close(writer)
    stop(process)
    return latencies


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "apphostd"))
    parser.add_argument("--quick", action="store_true", help="fewer rounds, 5 s idle window")
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"{args.binary} is missing: build it with `swift build -c release --product apphostd`")
    runs = 10 if args.quick else 30
    directory = tempfile.mkdtemp(prefix="apphostd-bench-")
    notify = Notify(directory)
    results = {}
    try:
        c_binary, swift_binary = build_floors(directory)
        shipped = os.path.join(ROOT, "config", "apphostd.yaml")
        state = tempfile.mkdtemp(dir=directory)
        os.environ["STATE_DIRECTORY"] = state
        r_c = readiness([c_binary], notify, runs)
        r_swift = readiness([swift_binary], notify, runs)
        r_apphostd = readiness([args.binary, "run", "--config", shipped], notify, runs, keep_running=True)
        results["readiness_ms"] = {"c": median(r_c), "swift": median(r_swift), "apphostd": median(r_apphostd),
                                   "apphostd_over_swift": median(r_apphostd) / median(r_swift)}
        del os.environ["STATE_DIRECTORY"]
        results["fan_out_ms"] = {}
        for n in (4, 100, 1000):
            lat = fan_out(args.binary, notify, directory, n, 20 if args.quick else 60)
            results["fan_out_ms"][n] = {"p50": median(lat), "per_service_us": median(lat) * 1000 / n}
        cpu, switches, hwm = idle(args.binary, notify, directory, 5 if args.quick else 30)
        results["idle"] = {"seconds": 5 if args.quick else 30, "cpu_s": cpu, "context_switches": switches, "peak_rss_kib": hwm}
        sent_in, alive, final, code = storm(args.binary, notify, directory, 10_000)
        results["storm"] = {"signals": 10_000, "sent_in_s": sent_in, "alive_after": alive, "final_status": final,
                            "final_state_is_background": final.startswith("background"), "exit_code": code}
        results["memory_warning_ms"] = {}
        for n in (4, 100):
            lat = memory_warning(args.binary, notify, directory, n, 10 if args.quick else 30)
            results["memory_warning_ms"][n] = {"p50": median(lat)}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
