#!/bin/sh
# SPDX-License-Identifier: MIT
# Install pcw into a scratch tree, check that it holds exactly the listed
# headers (make install-headers), build the README's examples from the
# README alone with pkg-config, and run them: the provider (two translation
# units, one of them defining PCW_PROVIDER_IMPLEMENTATION) is read by the
# installed pcwdump and by the README's consumer linked with `pkg-config
# --libs pcw`. Then the C++ provider (tests/cxx: two translation units, a
# static counter table) and C++ consumer, built with g++ -std=c++17 -Wall
# -Wextra -Werror from the installed headers: nm must show exactly one copy
# of the control channel's server, and a program that forgets
# PCW_PROVIDER_IMPLEMENTATION (or defines it twice) must fail to link with
# the error that names it. The same C++ provider linked with
# libpcw-provider.a (pkg-config pcw-provider-lib) is read too.
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
repo=$(pwd)
make -s install PREFIX=/usr/local DESTDIR="$tmp/root" >/dev/null
export PKG_CONFIG_PATH="$tmp/root/usr/local/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"
export LD_LIBRARY_PATH="$tmp/root/usr/local/lib"
export PCW_DIR="$tmp/shm"
mkdir -p "$PCW_DIR" "$tmp/src"

# Each README code block preceded by <!-- file: NAME --> becomes NAME.
./scripts/readme-files.sh "$tmp/src"
# The installed headers are the Makefile's list (INSTALL_HEADERS), no more:
# nothing private (lib/common/, lib/provider/) is installed.
make -s --no-print-directory install-headers | sort > "$tmp/headers.want"
(cd "$tmp/root/usr/local/include" && find . -type f -o -type l | sed 's|^\./pcw/||' | sort) > "$tmp/headers.got"
if ! cmp -s "$tmp/headers.want" "$tmp/headers.got"; then
    echo "install-test: the installed headers differ from INSTALL_HEADERS (-want +got):" >&2
    diff -u "$tmp/headers.want" "$tmp/headers.got" | sed 1,2d >&2; exit 1
fi
# One version everywhere (lib/pcw/version.h): the .pc files, the installed
# header, the installed tools.
want=$(make -s --no-print-directory version)
for pc in pcw pcw-provider pcw-provider-lib; do
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

# ---- C++, from the installed headers -------------------------------------
mkdir -p "$tmp/cxx"
cp "$repo"/tests/cxx/web.h "$repo"/tests/cxx/*.cc "$tmp/cxx/"
cd "$tmp/cxx"
CXXW="-std=c++17 -Wall -Wextra -Werror -Wmissing-field-initializers"
g++ $CXXW -c web_counters.cc $(pkg-config --cflags pcw-provider) -o web_counters.o
g++ $CXXW -c provider_main.cc $(pkg-config --cflags pcw-provider) -o provider_main.o
g++ provider_main.o web_counters.o $(pkg-config --libs pcw-provider) -o cxx_provider
g++ $CXXW consumer.cc $(pkg-config --cflags --libs pcw) -o cxx_consumer
# One control-channel server in the program, and none in the file without
# the implementation.
n=$(nm cxx_provider | grep -c ' pcw__listener_main$' || true)
[ "$n" = 1 ] || { echo "install-test: nm shows $n copies of pcw__listener_main in the C++ provider" >&2; exit 1; }
m=$(nm web_counters.o | grep -c 'pcw__listener_main\| T pcw_register$' || true)
[ "$m" = 0 ] || { echo "install-test: web_counters.o holds provider implementation code" >&2; exit 1; }
echo "install-test: nm: one pcw__listener_main in cxx_provider, none in web_counters.o"
# Forgetting the implementation, or defining it twice, is a link error that
# names what to do.
printf 'int main() { return 0; }\n' > nomain.cc
g++ $CXXW -c nomain.cc -o nomain.o
if g++ nomain.o web_counters.o $(pkg-config --libs pcw-provider) -o none 2> none.log; then
    echo "install-test: a program without PCW_PROVIDER_IMPLEMENTATION linked" >&2; exit 1
fi
grep -q 'PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file' none.log ||
    { echo "install-test: the missing-implementation error does not name it:" >&2; cat none.log >&2; exit 1; }
cp provider_main.cc second.cc && sed -i 's/^int main()/int second_main()/' second.cc
g++ $CXXW -c second.cc $(pkg-config --cflags pcw-provider) -o second.o
if g++ provider_main.o second.o web_counters.o $(pkg-config --libs pcw-provider) -o twice 2> twice.log; then
    echo "install-test: a program with two implementations linked" >&2; exit 1
fi
grep -q 'multiple definition of .PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file' twice.log ||
    { echo "install-test: the double-implementation error does not name it:" >&2; cat twice.log >&2; exit 1; }
echo "install-test: link errors name PCW_PROVIDER_IMPLEMENTATION for none and for two"
# The same provider linked with libpcw-provider.a (pkg-config
# pcw-provider-lib) instead: provider_main.cc without its
# PCW_PROVIDER_IMPLEMENTATION line.
sed '/^#define PCW_PROVIDER_IMPLEMENTATION/d' provider_main.cc > linked_main.cc
g++ $CXXW -c linked_main.cc $(pkg-config --cflags pcw-provider-lib) -o linked_main.o
g++ linked_main.o web_counters.o $(pkg-config --libs pcw-provider-lib) -o cxx_linked
n=$(nm cxx_linked | grep -c ' T pcw__listener_main$' || true)
[ "$n" = 1 ] || { echo "install-test: nm shows $n copies of pcw__listener_main in the linked C++ provider" >&2; exit 1; }
echo "install-test: the C++ provider links with libpcw-provider.a (pkg-config pcw-provider-lib)"

# Each provider (header-only, then linked) is read by the C++ consumer.
for prog in cxx_provider cxx_linked; do
    rm -f ctl provider.out; mkfifo ctl
    ./$prog < ctl > provider.out & pid=$!
    exec 3> ctl
    i=0
    until grep -q '^ready ' provider.out 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 100 ] || { echo "install-test: $prog did not start" >&2; exit 1; }
        sleep 0.1
    done
    out=$(./cxx_consumer)
    echo "$out" | grep -q '^Requests = 42 base=-1 agg=0 detail=100 ""$' &&
        echo "$out" | grep -q '^Hit Ratio = 21 base=4 agg=0 detail=100 ""$' &&
        echo "$out" | grep -q '^Errors = 0 base=-1 agg=1 detail=200 "Failed requests"$' ||
        { echo "install-test: C++ consumer output wrong with $prog:" >&2; echo "$out" >&2; exit 1; }
    echo "$prog: $out"
    echo quit >&3; exec 3>&-
    wait "$pid" || { echo "install-test: $prog's teardown failed" >&2; exit 1; }
    pid=
done
echo "install-test: 6 passed, 0 failed"
