#!/usr/bin/env bash
# The release binary as deploy/INSTALL.md installs it: .build/release/apphostd (or under the
# --scratch-path given). Arguments go to `swift build` (--scratch-path DIR, --show-bin-path),
# but for --no-pie, which this script takes.
#
# A static PIE: the Swift runtime, glibc, libstdc++ and libyaml linked in, loaded at a random
# address and relocated by itself, with no dynamic loader and no shared library. Each instance
# starts about 1.3 ms sooner and keeps about 135 KiB less private memory than the dynamically
# linked PIE (Benchmarks/README.md, "A static PIE"), and the target needs no library at all.
# --disable-local-rpath: glibc's self-relocation refuses an image with an rpath, which SwiftPM
# otherwise adds. -Wno-unused-command-line-argument: the swift driver's own -pie is then unused.
#
# --no-pie: a static executable at a fixed address instead. Its relocated data is then shared
# by every instance (about 340 KiB less private memory each, for a fleet of daemons on one
# machine), at the cost of the image's address randomisation (deploy/INSTALL.md).
set -euo pipefail
cd "$(dirname "$0")/.."
link=(-Xswiftc -Xclang-linker -Xswiftc -static-pie)
arguments=()
for argument in "$@"; do
  if [ "$argument" = --no-pie ]; then
    link=(-Xswiftc -Xclang-linker -Xswiftc -static -Xswiftc -Xclang-linker -Xswiftc -no-pie)
  else
    arguments+=("$argument")
  fi
done
exec swift build -c release --product apphostd --static-swift-stdlib --disable-local-rpath "${link[@]}" \
  -Xswiftc -Xclang-linker -Xswiftc -Wno-unused-command-line-argument "${arguments[@]}"
