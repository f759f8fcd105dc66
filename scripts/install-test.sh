#!/bin/sh
# Install pcw into a scratch tree, build the README's examples from the
# README alone with pkg-config, and run them: the provider (two translation
# units, header-only API) is read by the installed pcwdump and by the
# README's consumer linked with `pkg-config --libs pcw`.
# Usage: scripts/install-test.sh   (from the repository root)
set -eu
tmp=$(mktemp -d /tmp/pcw-install.XXXXXX)
pid=
cleanup() {
    # Only our own provider: never `kill 0`, which would signal our parents.
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
make -s install PREFIX=/usr/local DESTDIR="$tmp/root" >/dev/null
export PKG_CONFIG_PATH="$tmp/root/usr/local/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"
export LD_LIBRARY_PATH="$tmp/root/usr/local/lib"
export PCW_DIR="$tmp/shm"
mkdir -p "$PCW_DIR" "$tmp/src"

# Each README code block preceded by <!-- file: NAME --> becomes NAME.
awk -v dir="$tmp/src" '
    /^<!-- file: .* -->$/ { name = $3; next }
    name != "" && /^```c$/ { out = dir "/" name; inblock = 1; next }
    inblock && /^```$/ { inblock = 0; name = ""; close(out); next }
    inblock { print > out }
' README.md
# One version everywhere (lib/pcw/version.h): the .pc files, the installed
# header, the installed tools.
want=$(make -s --no-print-directory version)
for pc in pcw pcw-provider; do
    got=$(pkg-config --modversion "$pc")
    [ "$got" = "$want" ] || { echo "install-test: $pc.pc says $got, lib/pcw/version.h $want" >&2; exit 1; }
done
printf '#include <pcw/version.h>\n#include <stdio.h>\nint main(void) { puts(PCW_VERSION_STRING); return 0; }\n' \
    > "$tmp/src/version.c"
cc -std=c11 "$tmp/src/version.c" $(pkg-config --cflags pcw) -o "$tmp/src/version"
[ "$("$tmp/src/version")" = "$want" ] || { echo "install-test: installed <pcw/version.h> differs" >&2; exit 1; }
for tool in pcwdump pcwgen pcwstat; do
    got=$("$tmp/root/usr/local/bin/$tool" --version | head -n 1)
    [ "$got" = "$tool (pcw) $want" ] || { echo "install-test: $tool --version: $got" >&2; exit 1; }
done

for f in web.h web.c main.c consumer.c rate.c; do
    [ -s "$tmp/src/$f" ] || { echo "install-test: README has no block for $f" >&2; exit 1; }
done
cd "$tmp/src"
cc -std=c11 -Wall -Wextra -Werror main.c web.c $(pkg-config --cflags --libs pcw-provider) -o web
# The consumer as the README says to build it for a prefix the dynamic
# linker does not search: with the library's path in it (run below without
# LD_LIBRARY_PATH).
cc -std=c11 -Wall -Wextra -Werror consumer.c $(pkg-config --cflags --libs pcw) \
    -Wl,-rpath,"$(pkg-config --variable=libdir pcw)" -o consumer
cc -std=c11 -Wall -Wextra -Werror rate.c $(pkg-config --cflags --libs pcw) -o rate
./web & pid=$!
i=0
until ls "$PCW_DIR"/pcw-*/*.seg >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 50 ] || { echo "install-test: provider did not start" >&2; exit 1; }
    sleep 0.1
done
sleep 0.3
out=$("$tmp/root/usr/local/bin/pcwdump" --counterset "Web Server")
echo "$out" | grep -q "example.org" || { echo "install-test: pcwdump did not show the instance:" >&2; echo "$out" >&2; exit 1; }
out=$(env -u LD_LIBRARY_PATH ./consumer)
echo "$out" | grep -q 'example.org\\Requests = [1-9]' || { echo "install-test: consumer output wrong:" >&2; echo "$out" >&2; exit 1; }
echo "$out"
# The query example: the provider adds a request every 100 ms.
out=$(./rate)
echo "$out" | grep -Eq '^example.org \(pid [0-9]+\): [0-9.]+ requests/s$' || { echo "install-test: rate output wrong:" >&2; echo "$out" >&2; exit 1; }
echo "$out"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
echo "install-test: 2 passed, 0 failed"
