#!/usr/bin/env python3
"""The largest async frames of a Swift binary (issue 54): what each async function asks of its task.

Usage: python3 Benchmarks/process/async_frames.py --binary .build/release/apphostd [--top 30]

Each async function has an async function pointer (a symbol ending in `Tu`): a relative offset
to the function, then the size of the context the caller allocates for it on the task's stack
allocator. Everything the function keeps across a suspension is in that context, and so is
every local of the synchronous code inlined into it that the compiler cannot prove dead there.
A task keeps the slabs its deepest chain of contexts needed until the task ends, so a large
context on a long-lived task (a run loop, the host's loop during the launch) is heap memory for
the daemon's whole life. The remedy is to keep synchronous work out of the async function: a
synchronous function that is not inlined keeps its locals on the thread's stack.

Needs binutils (`nm`, `readelf`) and the Swift toolchain's `swift demangle`.
"""
import argparse, struct, subprocess, sys


def sections(binary):
    """(address, file offset, size, has bytes) of each section."""
    found = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 6 and parts[0].startswith("[") and parts[0] != "[Nr]":
            try:
                found.append((int(parts[3], 16), int(parts[4], 16), int(parts[5], 16), parts[2] != "NOBITS"))
            except ValueError:
                continue
    return found


def frames(binary):
    """(context size, mangled name) of every async function pointer in `binary`."""
    with open(binary, "rb") as f:
        data = f.read()
    mapped = sections(binary)
    found = []
    for line in subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        # Swift's mangled names only: another language's symbol may end in `Tu` too.
        if len(parts) != 3 or not parts[2].startswith(("$s", "_$s")) or not parts[2].endswith("Tu"):
            continue
        address = int(parts[0], 16)
        for start, offset, size, has_bytes in mapped:
            if has_bytes and start <= address < start + size:
                position = offset + address - start
                found.append((struct.unpack("<iI", data[position:position + 8])[1], parts[2]))
                break
    return sorted(found, reverse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    largest = frames(args.binary)[:args.top]
    if not largest:
        sys.exit(f"{args.binary}: no async function pointers among its symbols; give the unstripped binary "
                 "(.build/release/apphostd, not the installed /usr/sbin/apphostd)")
    names = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(name for _, name in largest),
                           capture_output=True, text=True, check=True).stdout.splitlines()
    print("| async context | function |")
    print("| ---: | --- |")
    for (size, _), name in zip(largest, names):
        print(f"| {size:,} B | {name.removeprefix('async function pointer to ')} |")


if __name__ == "__main__":
    main()
