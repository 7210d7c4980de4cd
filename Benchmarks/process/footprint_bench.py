#!/usr/bin/env python3
"""The footprint against the floor (issue 54): exec -> READY=1 and private memory, interleaved.

Usage: python3 Benchmarks/process/footprint_bench.py --binary APPHOSTD --servicegroup-floor FLOOR
           [--config config/apphostd.yaml] [--runs 20] [--settle 3] [--breakdown] [--json FILE]

Runs, interleaved, `--runs` times each:
  apphostd          the shipped config, every default source on (logind, time changes, the
                    network path, the power state, the bus name);
  apphostd, another the shipped config again, started while the first still runs and owns the
                    bus name: an instance whose D-Bus server found the name taken and ended;
  apphostd, off     the same with host.logind, host.time-changes, host.network and host.power
                    false (the bus name stays): what the sources cost;
  apphostd, least   the daemon's least: one service (logger), every source and memory pressure
                    off (the bus name, the signals and the watchdog stay). What the binary, the
                    host and its edge cost before any service or source adds to them: the part
                    of the ratio no service or source can take back;
  floor             ServiceGroupFloor, five no-op services that send READY=1 through libsystemd.
Each start is timed from exec to READY=1 on a NOTIFY_SOCKET of the script's; then, `--settle`
seconds later (the sources attach after the launch), /proc/PID/smaps_rollup is read: Rss, Pss,
Private_Dirty (what each instance adds, however many run) and Private_Clean + Private_Dirty (the
fleet benchmark's figure; with one instance its clean part is the whole image's text, which a
fleet shares).
With --breakdown, a second table says where each program's Private_Dirty is, from
/proc/PID/smaps: the binary's relocated read-only data (RELRO: pointers the loader wrote), its
writable data, its .bss (with the Swift runtime's first metadata pool), the heap (malloc's
arenas: Swift objects, tasks' frames, runtime metadata), the threads' stacks, and the shared
libraries.
Run it where the libraries are the ones to measure: inside a booted Debian 12 or 13 root
(FootprintBenchmarkTests does), as the user apphostd (`runuser -u apphostd --`) with the
installed unit stopped, so the measured instance owns the bus name: the shipped D-Bus policy lets
only that user own it. The script says in how many runs it did.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from process_bench import Notify, bench_credentials, start, stop, write_back_binaries  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUS_NAME = "org.apphost.apphostd"
# The daemon's least: one service, no source; a config `apphostd check` accepts.
LEAST = """host:
  memory-pressure:
    enabled: false
  logind: false
  time-changes: false
  network: false
  power: false
services:
  - name: logger
    type: logger
"""
SOURCES_OFF = {"  logind: true": "  logind: false", "  time-changes: true": "  time-changes: false",
               "  network: auto": "  network: false", "  power: true": "  power: false"}


def smaps(pid):
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                values[parts[0][:-1]] = int(parts[1])
    return {"rss": values.get("Rss", 0), "pss": values.get("Pss", 0), "dirty": values.get("Private_Dirty", 0),
            "private": values.get("Private_Clean", 0) + values.get("Private_Dirty", 0)}


BREAKDOWN = ["binary RELRO", "binary data", "binary .bss", "heap", "stacks", "libraries", "other"]


def breakdown(pid):
    """Private_Dirty by where it is (BREAKDOWN), in KiB."""
    exe = os.path.realpath(f"/proc/{pid}/exe")
    mappings = []
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and not parts[0].endswith(":"):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                mappings.append({"start": start, "end": end, "perms": parts[1], "path": parts[5] if len(parts) > 5 else "", "dirty": 0})
            elif parts[0] == "Private_Dirty:":
                mappings[-1]["dirty"] = int(parts[1])
    binary_end = max((m["end"] for m in mappings if m["path"] == exe), default=None)
    kib = dict.fromkeys(BREAKDOWN, 0)
    for m in mappings:
        if m["path"] == exe:
            kind = "binary data" if m["perms"].startswith("rw") else "binary RELRO"
        elif m["path"] == "" and m["start"] == binary_end:
            kind = "binary .bss"
        elif m["path"] == "[stack]" or (m["path"] == "" and m["end"] - m["start"] == 8 << 20):
            kind = "stacks"
        elif m["path"] in ("", "[heap]"):
            kind = "heap"
        elif m["path"].startswith("/"):
            kind = "libraries"
        else:
            kind = "other"
        kib[kind] += m["dirty"]
    return kib


def bus_name_owner(name):
    """The PID owning `name` on the system bus, or busctl's answer when it says none."""
    if shutil.which("busctl") is None:
        return "busctl is missing"
    answer = subprocess.run(["busctl", "--system", "--no-pager", "status", name], capture_output=True, text=True)
    for line in answer.stdout.splitlines():
        if line.startswith("PID="):
            return int(line[4:])
    return (answer.stderr or answer.stdout).strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--servicegroup-floor", required=True)
    parser.add_argument("--config", default=os.path.join(ROOT, "config", "apphostd.yaml"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--breakdown", action="store_true", help="also say where Private_Dirty is")
    parser.add_argument("--json")
    args = parser.parse_args()
    write_back_binaries()
    directory = tempfile.mkdtemp(prefix="apphostd-footprint-")
    notify = Notify(directory)
    with open(args.config) as f:
        shipped = f.read()
    off = shipped
    for old, new in SOURCES_OFF.items():
        if old not in off:
            sys.exit(f"{args.config} has no line '{old}'")
        off = off.replace(old, new)
    off_path = os.path.join(directory, "sources-off.yaml")
    with open(off_path, "w") as f:
        f.write(off)
    least_path = os.path.join(directory, "least.yaml")
    with open(least_path, "w") as f:
        f.write(LEAST)
    credentials = bench_credentials(directory)

    def state():
        return {"STATE_DIRECTORY": tempfile.mkdtemp(dir=directory), "CREDENTIALS_DIRECTORY": credentials}

    programs = [
        ("apphostd", [args.binary, "run", "--config", args.config], state),
        ("apphostd, another instance", [args.binary, "run", "--config", args.config], state),
        ("apphostd, sources off", [args.binary, "run", "--config", off_path], state),
        ("apphostd, least: one service, no source", [args.binary, "run", "--config", least_path], state),
        ("floor", [args.servicegroup_floor], dict),
    ]
    samples = {label: {"ready_ms": [], "rss": [], "pss": [], "private": [], "dirty": []} for label, _, _ in programs}
    places = {label: {kind: [] for kind in BREAKDOWN} for label, _, _ in programs}
    owners = []
    first_log = os.path.join(directory, "first-apphostd.log")
    for run in range(args.runs):
        running = []
        for label, argv, env in programs:
            notify.drain()
            # The first instance's log says why, should it not own the bus name.
            with open(first_log if run == 0 and label == "apphostd" else os.devnull, "w") as log:
                started, process = start(argv, notify, env(), stderr=log)
            ready, _ = notify.wait_for(lambda fields: fields.get("READY") == "1", timeout=60)
            samples[label]["ready_ms"].append((ready - started) * 1000)
            time.sleep(args.settle)
            for key, value in smaps(process.pid).items():
                samples[label][key].append(value)
            if args.breakdown:
                for kind, value in breakdown(process.pid).items():
                    places[label][kind].append(value)
            running.append(process)
            if label == "apphostd":
                # Kept running through the next one's measurement, which finds the name taken.
                owner = bus_name_owner(BUS_NAME)
                owners.append(True if owner == process.pid else owner)
                continue
            for process in running:
                stop(process)
            running = []
    with open("/proc/1/comm") as f:
        init = f.read().strip()
    results = {label: {key: statistics.median(values) for key, values in figures.items()} for label, figures in samples.items()}
    floor = results["floor"]
    print(f"{args.runs} interleaved runs, settle {args.settle} s, PID 1 {init}, load {os.getloadavg()[0]:.2f}")
    owned = sum(1 for owner in owners if owner is True)
    print(f"{BUS_NAME} on the system bus: owned by the first apphostd in {owned} of {len(owners)} runs")
    if owned < len(owners):
        print(f"  busctl: {next(owner for owner in owners if owner is not True)}")
        with open(first_log) as log:
            print("".join(f"  its log: {line}" for line in log if "bus" in line))
    print("| program | READY=1 p50 | ÷ floor | Private_Dirty | ÷ floor | private (clean + dirty) | ÷ floor | Pss | Rss |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, figures in results.items():
        print(f"| {label} | {figures['ready_ms']:.2f} ms | {figures['ready_ms'] / floor['ready_ms']:.2f}× | "
              f"{figures['dirty']:.0f} KiB | {figures['dirty'] / floor['dirty']:.2f}× | "
              f"{figures['private']:.0f} KiB | {figures['private'] / floor['private']:.2f}× | {figures['pss']:.0f} KiB | {figures['rss']:.0f} KiB |")
    print()
    print(f"The goal, 1.5× the floor: READY=1 {1.5 * floor['ready_ms']:.2f} ms, Private_Dirty {1.5 * floor['dirty']:.0f} KiB")
    if args.breakdown:
        medians = {label: {kind: statistics.median(values) for kind, values in kinds.items()} for label, kinds in places.items()}
        print()
        print("Private_Dirty by place, KiB (medians):")
        print("| place | " + " | ".join(label for label, _, _ in programs) + " | apphostd − floor |")
        print("| --- |" + " ---: |" * (len(programs) + 1))
        for kind in BREAKDOWN:
            print(f"| {kind} | " + " | ".join(f"{medians[label][kind]:.0f}" for label, _, _ in programs)
                  + f" | {medians['apphostd'][kind] - medians['floor'][kind]:+.0f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"medians": results, "samples": samples}, f, indent=2)


if __name__ == "__main__":
    main()
