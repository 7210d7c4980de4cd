#!/usr/bin/env bash
# The release binary as deploy/INSTALL.md installs it: .build/release/apphostd (or under the
# --scratch-path given). Arguments go to `swift build` (--scratch-path DIR, --show-bin-path).
# `--floor` builds the benchmarks' ServiceGroupFloor (Benchmarks/process) instead, the same way.
#
# A PIE with the Swift runtime linked in (--static-swift-stdlib) and the distribution's shared
# libraries for the rest: glibc, libstdc++, libsystemd.so.0 and libyaml, so a security update of
# any of them reaches the daemon without a rebuild, and NSS modules load. lld packs the relative
# relocations (DT_RELR: glibc 2.36 or later on the target; Debian 12 has 2.36) and keeps the
# daemon's own symbols out of the dynamic symbol table (Package.swift). The target needs the
# Debian packages libsystemd0 and libyaml-0-2 (deploy/INSTALL.md).
# --disable-local-rpath: no rpath into the build directory; every library comes from the system.
#
# Every module reaches a generic type's metadata through its accessor, with the witness tables
# the compiler already knows, instead of through the type's mangled name: Linux's runtime checks
# each requirement of a mangled name by scanning every conformance record in the image, and
# demangles. That was 29% of the instructions from exec to READY=1 (Benchmarks/README.md, issue
# 54's third slice). The flag is the frontend's; a compiler without it fails the build here.
set -euo pipefail
cd "$(dirname "$0")/.."
for argument in "$@"; do
  if [ "$argument" = --no-pie ]; then
    echo "build-release.sh: --no-pie is gone: the release build is one dynamically linked PIE (deploy/INSTALL.md)" >&2
    exit 2
  fi
done
swift_flags=(-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)
if [ "${1:-}" = --floor ]; then
  shift
  exec swift build -c release --package-path Benchmarks/process/ServiceGroupFloor --static-swift-stdlib \
    --disable-local-rpath "${swift_flags[@]}" "$@"
fi
exec swift build -c release --product apphostd --static-swift-stdlib --disable-local-rpath "${swift_flags[@]}" "$@"
