#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the Debian packages (debian/), check them, install them, and run the
# README's examples against the installed files; then remove them again.
#
#   1. install what building needs (debhelper, lintian, the Build-Depends);
#   2. dpkg-buildpackage -us -uc -b in a copy of the tree in a temporary
#      directory (the .debs land in the parent of the tree it builds, so
#      nothing is written beside this checkout);
#   3. lintian on the .changes: any error fails (warnings are printed);
#   4. apt-get install ./libpcw2_*.deb ./libpcw-dev_*.deb ./pcw-tools_*.deb;
#   5. smoke test of the installed files: the README's provider (web.c,
#      main.c) built with `pkg-config --cflags --libs pcw-provider`, its
#      consumer with `pkg-config ... pcw`, run; read with the installed
#      pcwdump and pcwstat; `man -w pcwtop`, `man pcwtop`; the unit file;
#   6. apt-get purge the three packages (on success or failure), so what
#      runs after this on the same machine sees no installed pcw.
#
# Usage: scripts/package-test.sh   (as root, from the repository root)
set -eu
[ "$(id -u)" -eq 0 ] || { echo "package-test: run as root (it installs packages)" >&2; exit 1; }
root=$(pwd)
tmp=$(mktemp -d /tmp/pcw-package.XXXXXX)
pid=
installed=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
    if [ -n "$installed" ]; then
        apt-get purge -y -qq pcw-tools libpcw-dev libpcw2 >/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive

# 1. Tools and build dependencies (dpkg-checkbuilddeps names what is missing).
./scripts/install-deps.sh dpkg-dev debhelper fakeroot lintian
deps=$(dpkg-checkbuilddeps 2>&1 | sed -n 's/.*Unmet build dependencies: //p' |
    sed -E 's/\([^)]*\)//g; s/<[^>]*>//g; s/\|[^ ]*//g')
if [ -n "$deps" ]; then
    # shellcheck disable=SC2086
    ./scripts/install-deps.sh $deps
fi

# 2. Build from a copy: the files git knows, committed or not.
mkdir -p "$tmp/src/pcw"
git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - | tar -xf - -C "$tmp/src/pcw"
echo "package-test: dpkg-buildpackage in $tmp/src/pcw"
(cd "$tmp/src/pcw" && dpkg-buildpackage -us -uc -b) > "$tmp/build.log" 2>&1 || {
    tail -n 60 "$tmp/build.log" >&2
    echo "package-test: dpkg-buildpackage failed (log above)" >&2
    exit 1
}
grep -E '^(tests:|make test:|check-abi:|check-man:)' "$tmp/build.log" || true
changes=$(ls "$tmp"/src/pcw_*.changes)
ls "$tmp"/src/*.deb

# 3. lintian: errors fail, warnings are shown (debian/*.lintian-overrides
#    explain each one overridden).
lintian --fail-on error --info "$changes" || { echo "package-test: lintian found errors" >&2; exit 1; }

# 4. Install the three packages as a user would.
installed=1
apt-get install -y -qq --no-install-recommends "$tmp"/src/libpcw2_*.deb "$tmp"/src/libpcw-dev_*.deb \
    "$tmp"/src/pcw-tools_*.deb >/dev/null

# 5. The smoke test, against /usr only.
for f in /usr/bin/pcwdump /usr/bin/pcwstat /usr/bin/pcwtop /usr/bin/pcw-exporter /usr/bin/pcwgen \
    /usr/include/pcw/provider.h /lib/systemd/system/pcw-exporter.service; do
    [ -e "$f" ] || { echo "package-test: $f is not installed" >&2; exit 1; }
done
grep -q '^ExecStart=/usr/bin/pcw-exporter ' /lib/systemd/system/pcw-exporter.service ||
    { echo "package-test: the unit does not run /usr/bin/pcw-exporter" >&2; exit 1; }
getent passwd pcw-exporter >/dev/null || { echo "package-test: no user pcw-exporter" >&2; exit 1; }
grep -q '^ExecStart=/usr/bin/pcwstat ' /lib/systemd/system/pcwstat-recorder.service ||
    { echo "package-test: the recorder's unit does not run /usr/bin/pcwstat" >&2; exit 1; }
[ -f /etc/pcw/recorder.paths ] || { echo "package-test: no /etc/pcw/recorder.paths" >&2; exit 1; }
getent passwd pcw-recorder >/dev/null || { echo "package-test: no user pcw-recorder" >&2; exit 1; }
want=$(make -s --no-print-directory version)
got=$(pcwtop --version | head -n 1)
[ "$got" = "pcwtop (pcw) $want" ] || { echo "package-test: pcwtop --version: $got" >&2; exit 1; }
man -w pcwtop >/dev/null || { echo "package-test: man -w pcwtop found no page" >&2; exit 1; }
MANPAGER=cat man pcwtop 2>/dev/null | head -n 5 | grep -q 'pcwtop' ||
    { echo "package-test: man pcwtop printed nothing useful" >&2; exit 1; }
for page in pcwdump pcwstat pcw-exporter pcwgen; do
    man -w "$page" >/dev/null || { echo "package-test: no man page for $page" >&2; exit 1; }
done

mkdir -p "$tmp/ex" "$tmp/shm"
export PCW_DIR="$tmp/shm"
awk -v dir="$tmp/ex" '
    /^<!-- file: .* -->$/ { name = $3; next }
    name != "" && /^```c$/ { out = dir "/" name; inblock = 1; next }
    inblock && /^```$/ { inblock = 0; name = ""; close(out); next }
    inblock { print > out }
' README.md
cd "$tmp/ex"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror main.c web.c $(pkg-config --cflags --libs pcw-provider) -o web
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror consumer.c $(pkg-config --cflags --libs pcw) -o consumer
./web & pid=$!
i=0
until ls "$PCW_DIR"/pcw-*/*.seg >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 50 ] || { echo "package-test: the provider did not start" >&2; exit 1; }
    sleep 0.1
done
out=$(pcwdump --counterset "Web Server")
echo "$out" | grep -q "example.org" || { echo "package-test: pcwdump:" >&2; echo "$out" >&2; exit 1; }
out=$(pcwstat '\Web Server(*)\Requests' -sc 1 -si 0.2)
echo "$out" | grep -q 'example.org' || { echo "package-test: pcwstat:" >&2; echo "$out" >&2; exit 1; }
out=$(./consumer)
echo "$out" | grep -q 'example.org\\Requests = [0-9]' || { echo "package-test: consumer:" >&2; echo "$out" >&2; exit 1; }
ldd ./consumer | grep -q '/libpcw\.so\.2 ' || { echo "package-test: consumer not linked with libpcw.so.2" >&2; exit 1; }
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
cd "$root"
echo "package-test: built, lintian-clean, installed, smoke test passed; removing the packages"
