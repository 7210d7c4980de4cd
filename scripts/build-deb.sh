#!/usr/bin/env bash
# Builds the Debian package apphostd_VERSION_ARCH.deb and its -dbgsym into OUTDIR (default
# .build-deb/):
#
#   bash scripts/build-deb.sh [OUTDIR]
#
# The Swift toolchain is not a Debian package, so the package is built from a prebuilt binary:
# scripts/build-release.sh first (or $APPHOSTD_BINARY, a release binary built before), then
# dpkg-buildpackage -b over a staging tree that holds deploy/debian as debian/ and what the package
# installs. Its unit is deploy/apphostd.service with the package's paths (/usr/bin, the man page),
# so install.sh's unit and the package's have one source. Needs debhelper and scdoc.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-.build-deb}" && cd "${1:-.build-deb}" && pwd)
for tool in dpkg-buildpackage dh scdoc; do
  command -v "$tool" >/dev/null || { echo "build-deb.sh: $tool is missing: apt-get install debhelper scdoc" >&2; exit 69; }
done
binary=${APPHOSTD_BINARY:-}
if [ -z "$binary" ]; then
  bash scripts/build-release.sh
  binary=$(bash scripts/build-release.sh --show-bin-path)/apphostd
fi
version=$("$binary" --version)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
tree=$stage/apphostd-$version
mkdir -p "$tree/man-src" "$tree/completion"
cp -r deploy/debian "$tree/debian"
install -m 0755 "$binary" "$tree/apphostd"
cp config/apphostd.yaml deploy/dbus/org.apphost.apphostd.conf deploy/dbus/org.apphost.Host1.xml README.md "$tree/"
cp deploy/man/*.scd "$tree/man-src/"
cp deploy/completion/apphostd "$tree/completion/"
sed -e 's|/usr/local/bin/apphostd|/usr/bin/apphostd|g' \
    -e 's|^Documentation=.*|Documentation=man:apphostd(8) man:apphostd.yaml(5)|' \
    -e 's|^# Install: see deploy/INSTALL.md.*|# Installed by the Debian package apphostd.|' \
    -e 's|install.sh puts in /etc/dbus-1/system.d|the package puts in /usr/share/dbus-1/system.d|' \
    deploy/apphostd.service > "$tree/debian/apphostd.service"
cat > "$tree/debian/changelog" <<CHANGELOG
apphostd ($version) unstable; urgency=medium

  * Release $version.

 -- apphostd developers <apphostd@apphost.org>  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}")
CHANGELOG
(cd "$tree" && dpkg-buildpackage -us -uc -b --no-sign)
mv "$stage"/*.deb "$stage"/*.ddeb "$stage"/*.buildinfo "$stage"/*.changes "$out/" 2>/dev/null || true
ls "$out"/*.deb
