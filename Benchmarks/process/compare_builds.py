#!/usr/bin/env python3
"""Two or more apphostd builds and the ServiceGroup floor, measured in one run, interleaved.

Usage: python3 Benchmarks/process/compare_builds.py --build LABEL=PATH [--build LABEL=PATH ...]
           --servicegroup-floor PATH [--runs N] [--rounds N] [--idle-seconds S] [--json FILE]

For each build (and the floor where it applies), on the shipped config/apphostd.yaml with a
state directory and a session secret of its own:

  readiness       exec -> READY=1, `--runs` starts of each, interleaved in a fresh random order
                  every round.
  memory          Private_Clean + Private_Dirty (/proc/PID/smaps_rollup) of three instances
                  running side by side, settled 3 s after READY=1.
  fan-out         kill -USR1 -> STATUS= at 4, 100 and 1000 probe services, and at 100 keeping
                  64 bytes of restorable state each (an fd-store push per request); builds
                  alternate round by round. The last row again with an abstract NOTIFY_SOCKET,
                  where a build with its own fd-store socket (846ea53) pushes through it anyway
                  and this one through sd_pid_notify_with_fds, as every push now.
  idle            wake-ups (context switches of every thread) and CPU over `--idle-seconds`.
  storm           10,000 SIGUSR1 and 101 queued SIGRTMIN+1/+2: consistent afterwards.
"""
import argparse, json, os, random, shutil, signal, socket, sys, tempfile, time

sys.path.insert(0, os.path.dirname(__file__))
import process_bench as bench  # noqa: E402


class AbstractNotify(bench.Notify):
    """A NOTIFY_SOCKET in the abstract namespace (`@name`), which FileDescriptorStore leaves to
    libsystemd."""

    def __init__(self):
        self.name = f"apphostd-bench-{os.getpid()}-{random.randrange(1 << 30)}"
        self.path = "@" + self.name
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, bench.SO_TIMESTAMPNS, 1)
        self.sock.bind("\0" + self.name)
        self.kernel_arrival = None


def private_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return int(fields["Private_Clean"].split()[0]) + int(fields["Private_Dirty"].split()[0])


def shipped_environment(directory, credentials):
    return {"STATE_DIRECTORY": tempfile.mkdtemp(dir=directory), "CREDENTIALS_DIRECTORY": credentials}


def memory(argv_for, labels, notify, directory, credentials, count=3):
    """Private memory of `count` instances of each label, running side by side."""
    result = {}
    for label in labels:
        processes = []
        for _ in range(count):
            notify.drain()
            _, process = bench.start(argv_for(label), notify, shipped_environment(directory, credentials))
            notify.wait_for(lambda f: f.get("READY") == "1", timeout=60)
            processes.append(process)
        time.sleep(3.0)
        result[label] = sorted(private_kib(p.pid) for p in processes)
        for process in processes:
            bench.stop(process)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", required=True, help="LABEL=PATH of an apphostd binary")
    parser.add_argument("--servicegroup-floor", required=True)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--json")
    args = parser.parse_args()
    bench.write_back_binaries()
    builds = dict(entry.split("=", 1) for entry in args.build)
    shipped = os.path.join(bench.ROOT, "config", "apphostd.yaml")
    directory = tempfile.mkdtemp(prefix="apphostd-compare-")
    notify = bench.Notify(directory)
    results = {"machine": bench.machine(), "load_average_at_start": os.getloadavg()[0], "builds": builds}
    try:
        credentials = bench.bench_credentials(directory)

        def argv_for(label):
            return [args.servicegroup_floor] if label == "floor" else [builds[label], "run", "--config", shipped]

        labels = list(builds) + ["floor"]
        environments = {label: shipped_environment(directory, credentials) for label in labels}
        times = {label: [] for label in labels}
        for _ in range(args.runs):
            order = labels[:]
            random.shuffle(order)
            for label in order:
                times[label] += bench.readiness([(label, argv_for(label), environments[label])], notify, 1)[label]
        floor = bench.median(times["floor"])
        results["readiness_ms"] = {label: {"p50": bench.median(v), "p90": bench.percentile(v, 90),
                                           "over_floor": bench.median(v) / floor} for label, v in times.items()}

        results["private_kib"] = memory(argv_for, labels, notify, directory, credentials)

        results["fan_out_ms"] = {}
        for services, keep in ((4, 0), (100, 0), (1000, 0), (100, 64)):
            row = f"{services}" + (" with state" if keep else "")
            latencies = {label: [] for label in builds}
            for _ in range(5):
                for label in builds:
                    latencies[label] += bench.fan_out(builds[label], notify, directory, services, max(1, args.rounds // 5), keep_state=keep)
            results["fan_out_ms"][row] = {label: {"p50": bench.median(v), "p90": bench.percentile(v, 90)} for label, v in latencies.items()}
        abstract = AbstractNotify()
        latencies = {label: [] for label in builds}
        for _ in range(5):
            for label in builds:
                latencies[label] += bench.fan_out(builds[label], abstract, directory, 100, max(1, args.rounds // 5), keep_state=64)
        results["fan_out_ms"]["100 with state, abstract NOTIFY_SOCKET (sd_pid_notify_with_fds)"] = {
            label: {"p50": bench.median(v), "p90": bench.percentile(v, 90)} for label, v in latencies.items()}

        results["idle"] = {label: bench.idle(argv_for(label), notify, args.idle_seconds,
                                             None if label == "floor" else environments[label]) for label in labels}
        results["storm"] = {label: bench.storm(builds[label], notify, directory, 10_000)["consistent"] for label in builds}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
