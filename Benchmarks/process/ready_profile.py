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
"""
import argparse, os, re, shutil, socket, subprocess, sys, tempfile, time

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


def profile(argv, directory, label):
    notify = os.path.join(directory, f"notify-{label}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify)
    credentials = tempfile.mkdtemp(dir=directory)
    with open(os.path.join(credentials, "session-secret"), "w") as f:
        f.write("bench-secret\n")
    os.chmod(os.path.join(credentials, "session-secret"), 0o600)
    out = os.path.join(directory, f"callgrind-{label}")
    env = dict(os.environ, NOTIFY_SOCKET=notify, STATE_DIRECTORY=tempfile.mkdtemp(dir=directory), CREDENTIALS_DIRECTORY=credentials)
    for name in ("WATCHDOG_USEC", "WATCHDOG_PID", "MEMORY_PRESSURE_WATCH", "MEMORY_PRESSURE_WRITE", "JOURNAL_STREAM"):
        env.pop(name, None)
    process = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock.settimeout(300)
    while b"READY=1" not in sock.recv(4096):
        pass
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
    for label, binary, arguments in [("apphostd", args.binary, ["run", "--config", os.path.abspath(args.config)]),
                                     ("floor", args.servicegroup_floor, [])]:
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
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
