#!/usr/bin/env python3
"""Where the way to READY=1 goes (issue 54): instructions counted by callgrind from exec to READY=1.

Usage: python3 Benchmarks/process/ready_profile.py --binary APPHOSTD --servicegroup-floor FLOOR
           [--config config/apphostd.yaml]

Each program runs once under valgrind's callgrind (apt-get install valgrind), from a copy without
its DWARF (valgrind 3.19 cannot read Swift 6's), on a NOTIFY_SOCKET of the script's; callgrind
dumps its counts when READY=1 arrives, and the program is then stopped. Instructions are a count,
not a time: the same on every run, and the part of a start that a faster machine shortens alike.
The table gives each program's total and the inclusive counts of the places a start spends them
that callgrind can attribute: synchronous code. An async function's count is split among its
partial functions, so the launch's hooks have no row of their own.
With perf (apt-get install linux-perf), a second table counts each program's page faults from exec
to READY=1 by the mapping they fall in: anonymous memory, the binary's text, read-only data and
writable data, and the rest.
"""
import argparse, os, re, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import process_bench as bench  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# (row, a pattern of callgrind_annotate's inclusive lines); a row counts its first match.
PLACES = [
    ("the dynamic loader (relocations, symbol lookups)", r"\./elf/\./elf/rtld\.c:_dl_start "),
    ("Swift runtime: generic metadata by mangled name", r"\?\?\?:swift_getTypeByMangledName "),
    ("  of it, protocol conformance lookups", r"swift_conformsToProtocolMaybeInstantiateSuperclasses\(swift::TargetMetadata<swift::InProcess> const\*, swift::TargetProtocolDescriptor<swift::InProcess> const\*, bool\) "),
    ("Swift runtime: generic metadata through accessors", r"\?\?\?:swift_getGenericMetadata "),
    ("Swift runtime: prespecialized generic metadata, registered on first use", r"\?\?\?:swift_getCanonicalPrespecializedGenericMetadata "),
    ("the config file (read, parse, check)", r"ConfigurationLoaderV4load4path"),
    ("the log lines", r"JournalLogHandlerV3log5event"),
]


def start_until_ready(wrapper, argv, directory, label, timeout):
    """Starts `wrapper + argv` as process_bench starts a program (a notify socket, a state
    directory and a session secret of its own, without what a unit's start drops), and returns
    the wrapper's process once READY=1 arrived."""
    own = tempfile.mkdtemp(dir=directory, prefix=f"{label}-")
    notify = bench.Notify(own)
    _, process = bench.start(wrapper + argv, notify, {"STATE_DIRECTORY": tempfile.mkdtemp(dir=own), "CREDENTIALS_DIRECTORY": bench.bench_credentials(own)})
    notify.wait_for(lambda fields: fields.get("READY") == "1", timeout=timeout)
    return process


def profile(argv, directory, label):
    out = os.path.join(directory, f"callgrind-{label}")
    process = start_until_ready(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"], argv, directory, label, 300)
    subprocess.run(["callgrind_control", "--dump=ready", str(process.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    dump = out + ".1"
    deadline = time.monotonic() + 60
    while not os.path.exists(dump) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)
    process.terminate()
    process.wait()
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump], capture_output=True, text=True, check=True).stdout
    total = int(re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", annotated).group(1).replace(",", ""))
    counts = {}
    for row, pattern in PLACES:
        match = re.search(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+.*" + pattern, annotated, re.MULTILINE)
        counts[row] = int(match.group(1).replace(",", "")) if match else 0
    return total, counts


FAULT_PLACES = ["anonymous memory (.bss, malloc's arenas, tasks' slabs, threads' stacks)", "the binary's text",
                "the binary's read-only data and RELRO", "the binary's writable data", "the shared libraries, the heap, the main stack, the loader"]


def faults(argv, directory, label):
    """The page faults from exec to READY=1, by mapping (perf's exceptions:page_fault_user)."""
    out = os.path.join(directory, f"faults-{label}.data")
    process = start_until_ready(["perf", "record", "-q", "-e", "exceptions:page_fault_user", "-o", out, "--"], argv, directory, f"faults-{label}", 60)
    child = int(subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()[0])
    exe = os.path.realpath(f"/proc/{child}/exe")
    with open(f"/proc/{child}/maps") as f:
        regions = []
        for line in f:
            parts = line.split()
            low, high = (int(x, 16) for x in parts[0].split("-"))
            regions.append((low, high, parts[1], parts[5] if len(parts) > 5 else ""))
    os.kill(child, signal.SIGKILL)
    process.wait()
    trace = subprocess.run(["perf", "script", "-i", out, "-F", "trace"], capture_output=True, text=True, check=True).stdout
    counts = dict.fromkeys(FAULT_PLACES, 0)
    for address in re.findall(r"address=0x([0-9a-f]+)", trace):
        address = int(address, 16)
        place = FAULT_PLACES[4]
        for low, high, perms, path in regions:
            if low <= address < high:
                if path == exe:
                    place = FAULT_PLACES[1] if "x" in perms else FAULT_PLACES[3] if "w" in perms else FAULT_PLACES[2]
                elif path == "":
                    place = FAULT_PLACES[0]
                break
        counts[place] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--servicegroup-floor", required=True)
    parser.add_argument("--config", default=os.path.join(ROOT, "config", "apphostd.yaml"))
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_annotate", "callgrind_control", "strip"):
        if shutil.which(tool) is None:
            sys.exit(f"ready_profile.py: {tool} is missing (apt-get install valgrind binutils)")
    directory = tempfile.mkdtemp(prefix="apphostd-ready-profile-")
    results = {}
    programs = [("apphostd", args.binary, ["run", "--config", os.path.abspath(args.config)]), ("floor", args.servicegroup_floor, [])]
    for label, binary, arguments in programs:
        copy = os.path.join(directory, label)
        subprocess.run(["strip", "--strip-debug", "-o", copy, binary], check=True)
        results[label] = profile([copy] + arguments, directory, label)
    (total, counts), (floor_total, floor_counts) = results["apphostd"], results["floor"]
    print("Instructions from exec to READY=1 (callgrind, inclusive):")
    print("| | apphostd | floor | apphostd − floor |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| the whole start | {total / 1e6:.2f} M | {floor_total / 1e6:.2f} M | {(total - floor_total) / 1e6:+.2f} M |")
    for row, _ in PLACES:
        print(f"| {row} | {counts[row] / 1e6:.2f} M | {floor_counts[row] / 1e6:.2f} M | {(counts[row] - floor_counts[row]) / 1e6:+.2f} M |")
    if shutil.which("perf") is None:
        print("\nNo page faults by mapping: perf is missing (apt-get install linux-perf).")
    else:
        counted = {label: faults([binary] + arguments, directory, label) for label, binary, arguments in programs}
        print("\nPage faults from exec to READY=1, by mapping (perf, exceptions:page_fault_user):")
        print("| | apphostd | floor | apphostd − floor |")
        print("| --- | ---: | ---: | ---: |")
        for place in FAULT_PLACES + ["all of them"]:
            a, f = (sum(counted[label].values()) if place == "all of them" else counted[label][place] for label in ("apphostd", "floor"))
            print(f"| {place} | {a} | {f} | {a - f:+d} |")
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
