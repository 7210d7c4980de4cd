#!/usr/bin/env bash
# Renders the man pages, apphostd(8) and apphostd.yaml(5), from their one source in deploy/man
# (scdoc: a Debian package of 100 KiB, made for man pages; pandoc would do as well at 200 MB)
# into roff in OUTDIR (default .build-man/), gzipped as Debian installs them.
#
#   bash scripts/build-man.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build-man}
command -v scdoc >/dev/null || { echo "build-man.sh: scdoc is missing: apt-get install scdoc (or bash scripts/deps.sh test)" >&2; exit 69; }
mkdir -p "$out"
for source in deploy/man/*.scd; do
  page=$(basename "$source" .scd)
  scdoc < "$source" > "$out/$page"
  gzip -9nf "$out/$page"
  echo "$out/$page.gz"
done
