# SPDX-License-Identifier: MIT
# pcw - performance counters over shared memory.
#
#   make            build the library, tools and examples (into build/)
#   make demo       install missing Debian packages, build, run the demo
#   make check      every test: ASan+UBSan build, TSan build of the
#                   concurrent tests, pcwgen's tests, bounded fuzzing
#   make test       the quick subset (gcc, no sanitizers): what the Debian
#                   package build runs
#   make package-test  build, lintian, install and smoke-test the Debian
#                   packages (root; scripts/package-test.sh)
#   make bench      the benchmark suite (bench/README.md)
#   make casefold-table  regenerate lib/common/casefold_table.h from the UCD
#   make install    PREFIX=/usr/local DESTDIR= (LIBDIR=, MANDIR=...: docs/building.md)
#
# Conventions (so new files need no Makefile edit):
#   tests/test_*.c   one Criterion test binary each
#   tests/conc_*.c   concurrent tests: also built and run under TSan
#   tests/helpers/*.c  programs the tests fork/exec (provider children...)
#   examples/*.c     one example program each
#   tools/NAME/*.c   one program, build/NAME (tools/common/*.c linked into each)

SHELL   := /bin/bash
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
SAN     ?=
CC      ?= cc
CXX     ?= c++
# OPT is the default optimisation when the user gives no CFLAGS/CXXFLAGS.
OPT     ?= -O2 -g
# -Werror in development and CI; a distribution's build sets WERROR= so a
# newer compiler's new warning does not fail it (debian/rules does).
WERROR  ?= -Werror

# ---- flags (docs/building.md) ------------------------------------------------
# The user's CFLAGS, CPPFLAGS, CXXFLAGS and LDFLAGS (from the environment or
# the command line, e.g. dpkg-buildflags' hardening, -D_FORTIFY_SOURCE, LTO)
# come first and reach every object and every link; the project's flags are
# appended. Every compile rule (here, in tools/pcwgen/pcwgen.mk and
# bench/shim) uses $(CFLAGS) alone, so CPPFLAGS rides in it, after -Ilib (our
# headers before any installed copy of them).
# The outermost make saves the user's values: a sub-make (check-asan, ...)
# inherits the appended ones through the environment and would append its own
# (other sanitizer) flags to ours.
ifeq ($(PCW_USER_SAVED),)
export PCW_USER_SAVED   := 1
export PCW_USER_CFLAGS   := $(CFLAGS)
export PCW_USER_CPPFLAGS := $(CPPFLAGS)
export PCW_USER_CXXFLAGS := $(CXXFLAGS)
export PCW_USER_LDFLAGS  := $(LDFLAGS)
endif

# The generated <pcw/provider.h> ($(BUILD)/include, see "the provider") first,
# then lib/ (<pcw/*.h>, and the private "common/*.h").
PCW_INCLUDES = -I$(BUILD)/include -Ilib
WARN     = $(WERROR) -Wall -Wextra -Wshadow -Wformat=2 -Wundef -Wpointer-arith \
           -Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers
override CFLAGS   = $(PCW_INCLUDES) $(PCW_USER_CPPFLAGS) $(or $(PCW_USER_CFLAGS),$(OPT)) \
                    -std=c11 $(WARN) $(SANFLAGS) $(EXTRA_CFLAGS)
override CXXFLAGS = $(PCW_INCLUDES) $(PCW_USER_CPPFLAGS) $(or $(PCW_USER_CXXFLAGS),$(OPT)) \
                    -std=c++17 $(WERROR) -Wall -Wextra $(SANFLAGS)
override LDFLAGS  = $(PCW_USER_LDFLAGS) $(SANFLAGS)

ifeq ($(SAN),asan)
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SAN),tsan)
SANFLAGS = -fsanitize=thread -fno-omit-frame-pointer
endif

# libpcw's own: jansson parses the container runtimes' config.json
# (lib/consumer/annotations.c); zstd and zlib read and write counter logs
# (lib/history: zstd blocks, zlib's crc32 up to log format 2, libxxhash's
# XXH3 from format 3). In PROVIDER_LIBS, which every link of libpcw.a names.
LIBPCW_LIBS   = -ljansson -lzstd -lz -lxxhash
PROVIDER_LIBS = -lurcu-bp -lurcu-cds -lurcu-common -lpthread $(LIBPCW_LIBS)
TEST_LIBS     = -lcriterion

# ---- the consumer library -------------------------------------------------
LIB_SRC  = $(wildcard lib/consumer/*.c lib/query/*.c lib/history/*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_PIC  = $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
# The installed headers, an explicit list (install, uninstall, check-abi and
# debian/libpcw-dev.install use it; nothing else is installed): lib/pcw/'s,
# and the single-file provider generated from lib/provider/ (below). The
# private headers, lib/common/ (shared by the provider and libpcw) and
# lib/provider/, are never installed.
PUBLIC_HEADERS  = lib/pcw/callback.h lib/pcw/collect.h lib/pcw/consumer.h lib/pcw/histogram.h lib/pcw/pdh.h \
                  lib/pcw/query.h lib/pcw/types.h lib/pcw/version.h
PROVIDER_H      = $(BUILD)/include/pcw/provider.h
INSTALL_HEADERS = $(PUBLIC_HEADERS) $(PROVIDER_H)
PRIVATE_HEADERS = $(wildcard lib/common/*.h lib/provider/*.h)
HEADERS  = $(INSTALL_HEADERS) $(PRIVATE_HEADERS)
LIBPCW_A = $(BUILD)/libpcw.a
LIBPCW_SO = $(BUILD)/libpcw.so
LIBPCW_PROVIDER_A = $(BUILD)/libpcw-provider.a# the provider, linkable (below)
UNINSTALLED_PC = $(BUILD)/pkgconfig/pcw-uninstalled.pc $(BUILD)/pkgconfig/pcw-provider-uninstalled.pc \
                 $(BUILD)/pkgconfig/pcw-provider-lib-uninstalled.pc
SOVERSION = 2

# ---- tools, examples, tests ----------------------------------------------
TOOLS     = $(filter-out pcwgen common,$(notdir $(wildcard tools/*)))
TOOL_BINS = $(TOOLS:%=$(BUILD)/%)
EXAMPLES  = $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
TESTS     = $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c tests/conc_*.c))
CONC_TESTS = $(patsubst tests/%.c,%,$(wildcard tests/conc_*.c))
HELPERS   = $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(wildcard tests/helpers/*.c))
# C++ helpers from tests/cxx (see "C++" below)
CXX_HELPERS = $(BUILD)/tests/helpers/cxx_provider17 $(BUILD)/tests/helpers/cxx_provider20 \
              $(BUILD)/tests/helpers/cxx_consumer
SEG_SEEDS = $(BUILD)/fuzz/segment-seeds# the segment fuzzer's seeds (see fuzzing)
HIST_SEEDS = $(BUILD)/fuzz/history-seeds# the log reader fuzzer's (tests/test_history checks them)

.PHONY: all lib tools examples tests check check-asan check-tsan check-fuzz demo deps \
        install uninstall clean bench format
all: lib tools examples

lib: $(LIBPCW_A) $(LIBPCW_SO) $(LIBPCW_SO).$(SOVERSION) $(UNINSTALLED_PC) $(PROVIDER_H) \
     $(LIBPCW_PROVIDER_A)
tools: $(TOOL_BINS) $(BUILD)/pcwgen
examples: $(EXAMPLES)
tests: $(TESTS) $(HELPERS) $(CXX_HELPERS)

# ---- header dependencies ----------------------------------------------------
# Every compile of one source writes the headers it included (-MMD: ours, not
# the system's) to $@.d, read back below: a header's change rebuilds what
# includes it and nothing else. -MP adds an empty rule per header, so a header
# removed or renamed does not stop the next build. A header the build
# generates must exist before the first compile that includes it, when there
# is no .d file yet: it goes in GENERATED_HEADERS, an order-only prerequisite
# of every such compile (the protobuf code has its own rule, below). Rules
# that compile several sources in one command (the fuzzers, the C++ helpers)
# keep their header lists: -MF holds the last source's only.
DEPFLAGS = -MMD -MP -MT $@ -MF $@.d
GENERATED_HEADERS = $(PROVIDER_H)# the single-file provider (below)
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

$(BUILD)/%.o: %.c | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: %.c | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -fPIC -c $< -o $@

$(LIBPCW_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The shared library exports only the public API: lib/consumer/libpcw.map
# (version node PCW_2) hides the internal pcw__ functions; check-abi
# tests it. The soname policy is in docs/building.md.
LIBPCW_MAP = lib/consumer/libpcw.map
$(LIBPCW_SO): $(LIB_PIC) $(LIBPCW_MAP)
	$(CC) -shared -Wl,-soname,libpcw.so.$(SOVERSION) -Wl,--version-script=$(LIBPCW_MAP) \
	    -Wl,--no-undefined $(CFLAGS) $(LDFLAGS) -o $@ $(LIB_PIC) -lpthread $(LIBPCW_LIBS)
# The soname's link, so that a program built against the build tree runs.
$(LIBPCW_SO).$(SOVERSION): $(LIBPCW_SO)
	ln -sf libpcw.so $@

# pkg-config's uninstalled convention: with PKG_CONFIG_PATH=$(BUILD)/pkgconfig,
# `pkg-config pcw` and `pkg-config pcw-provider` find pcw-uninstalled.pc and
# pcw-provider-uninstalled.pc, which point into this tree (headers in lib/,
# libpcw.so in $(BUILD) with its path built into the program), so the
# README's commands work right after `make demo`, before any install.
PC_SED_UNINSTALLED = sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(abspath $(BUILD))|' \
    -e 's|@INCDIR@|$(CURDIR)/lib|' -e 's|@PCW_VERSION@|$(PCW_VERSION)|' \
    -e 's|^Libs: -L$${libdir} -lpcw$$|Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lpcw|' \
    -e 's|^Cflags: -I$${includedir}|Cflags: -I$(abspath $(BUILD))/include -I$${includedir}|'
$(BUILD)/pkgconfig/%-uninstalled.pc: lib/%.pc.in lib/pcw/version.h
	@mkdir -p $(dir $@)
	$(PC_SED_UNINSTALLED) $< > $@

# ---- the provider (lib/provider, docs/design.md "The provider's sources") ------
# Written as ordinary sources, a private header (internal.h) and parts in
# their dependency order (PROVIDER_PARTS: a part calls only the parts before
# it). Two products of one code:
#   - <pcw/provider.h>, the single installed header (stb style): api.h, then
#     the implementation section, generated by scripts/amalgamate.py;
#   - libpcw-provider.a, for programs that prefer linking (pcw-provider-lib.pc).
PROVIDER_PARTS = guard sync handles arena instance buffer control open register teardown
PROVIDER_SRC   = $(PROVIDER_PARTS:%=lib/provider/%.c)
PROVIDER_OBJ   = $(PROVIDER_SRC:%.c=$(BUILD)/%.o)
$(PROVIDER_H): scripts/amalgamate.py lib/provider/api.h $(PRIVATE_HEADERS) $(PROVIDER_SRC)
	python3 scripts/amalgamate.py -o $@ lib/provider/api.h lib/provider/internal.h $(PROVIDER_SRC)
$(LIBPCW_PROVIDER_A): $(PROVIDER_OBJ)
	@mkdir -p $(dir $@)
	./scripts/check-provider-order.sh $(PROVIDER_OBJ)
	rm -f $@ && ar rcs $@ $^

# Each tool: every .c in its folder and in tools/common (what every tool
# shares: the escaping of hostile names, tools/common/escape.h), linked with
# the consumer library (and the provider's libraries, for tools that also
# publish). One explicit rule per tool, so no catch-all pattern can capture
# other targets.
TOOL_COMMON_SRC = $(wildcard tools/common/*.c)
define TOOL_RULE
$(BUILD)/$(1): $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/$(1)/*.c) $(TOOL_COMMON_SRC)) $(LIBPCW_A)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(LIBPCW_A) $$(PROVIDER_LIBS) $$(TOOL_LIBS_$(1))
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_RULE,$(t))))
# The same code as static libraries, for the tests and the bench: a tool's
# files but main.c in $(BUILD)/tools/libNAME.a, tools/common's in
# $(TOOLS_COMMON_A). A test links what it tests (a target-specific
# prerequisite below) instead of compiling a tool's .c files in.
TOOLS_COMMON_A = $(BUILD)/tools/libtools-common.a
$(TOOLS_COMMON_A): $(TOOL_COMMON_SRC:%.c=$(BUILD)/%.o)
	rm -f $@ && ar rcs $@ $^
define TOOL_LIB_RULE
$(BUILD)/tools/lib$(1).a: $(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/$(1)/main.c,$(wildcard tools/$(1)/*.c)))
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_LIB_RULE,$(t))))
# The counter log (lib/history, docs/history.md): part of libpcw (the query
# layer reads logs: lib/query/logsource.c) but private, its header not
# installed; zstd compresses its blocks, zlib's crc32 checks them
# (LIBPCW_LIBS).
# (Its sources are in LIB_SRC; the fuzzer, which compiles them in one
# command, lists its headers: -MMD cannot.)
HIST_HDR  = $(wildcard lib/history/*.h)
# pcw-exporter: HTTP, gzip (ISA-L's igzip), YAML, bcrypt, TLS, protobuf
# (docs/exporter.md).
TOOL_LIBS_pcw-exporter = -lmicrohttpd -lisal -lyaml -lcrypt -lgnutls -lprotobuf-c -lm
# Its protobuf exposition: the encoder protoc-c generates from client_model's
# metrics.proto as Debian installs it (golang-github-prometheus-client-model-dev;
# never copied into this tree), and the google/protobuf/timestamp.proto it
# imports (libprotobuf-dev).
PROM_PROTO_DIR ?= /usr/share/gocode/src/github.com/prometheus/client_model
PROTO_INC_DIR  ?= /usr/include
PROTO_GEN = $(BUILD)/gen/proto
PROTO_OBJ = $(PROTO_GEN)/io/prometheus/client/metrics.pb-c.o \
            $(PROTO_GEN)/google/protobuf/timestamp.pb-c.o
$(PROTO_GEN)/.stamp: $(PROM_PROTO_DIR)/io/prometheus/client/metrics.proto
	@mkdir -p $(PROTO_GEN)
	protoc-c --proto_path=$(PROM_PROTO_DIR) --proto_path=$(PROTO_INC_DIR) --c_out=$(PROTO_GEN) \
	    io/prometheus/client/metrics.proto google/protobuf/timestamp.proto
	touch $@
$(PROTO_GEN)/%.pb-c.o: $(PROTO_GEN)/.stamp
	$(CC) $(CFLAGS) -I$(PROTO_GEN) -c $(PROTO_GEN)/$*.pb-c.c -o $@
$(BUILD)/tools/pcw-exporter/proto.o: $(PROTO_GEN)/.stamp
$(BUILD)/tools/pcw-exporter/proto.o: private override CFLAGS += -I$(PROTO_GEN)
$(BUILD)/pcw-exporter: $(PROTO_OBJ)

# pcwtop draws with ncursesw. Its core - everything but main.c: model,
# view, snapshot, keys, drawing - is a static library that the tool's
# tests link (bench/bench.mk builds its own, optimised, for bench/pcwtop.c).
TOOL_LIBS_pcwtop = -lncursesw -lm
PCWTOP_LIB_SRC = $(filter-out tools/pcwtop/main.c,$(wildcard tools/pcwtop/*.c))
PCWTOP_A = $(BUILD)/tools/libpcwtop.a

# Examples may include headers pcwgen makes from examples/manifests/*.man
# (see tools/pcwgen/README.md for the pattern).
EXAMPLE_GEN = $(BUILD)/gen/examples/manifests/kcs.h $(BUILD)/gen/examples/manifests/ucs.h
$(BUILD)/gen/examples/manifests/kcs.h: PCWGEN_FLAGS = -prefix Kcs
$(BUILD)/gen/examples/manifests/ucs.h: PCWGEN_FLAGS = -prefix Ucs

$(BUILD)/examples/%: examples/%.c $(LIBPCW_A) $(EXAMPLE_GEN) | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -I$(BUILD)/gen/examples/manifests -o $@ $< $(LIBPCW_A) $(PROVIDER_LIBS) -lm

$(BUILD)/tests/helpers/%: tests/helpers/%.c $(LIBPCW_A) | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -Itests -o $@ $< $(LIBPCW_A) $(PROVIDER_LIBS) -lm

$(BUILD)/tests/%: tests/%.c $(LIBPCW_A) | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -Itests -Ilib/consumer -DPCW_BUILD_DIR='"$(abspath $(BUILD))"' \
	    -DPCW_SOURCE_DIR='"$(abspath .)"' \
	    -o $@ $< $(filter %.o,$^) $(filter-out $(LIBPCW_A),$(filter %.a,$^)) $(LIBPCW_A) \
	    $(PROVIDER_LIBS) $(TEST_LIBS) -lm
# tests/test_tools_common.c tests what every tool shares (tools/common):
# linked with those objects, as the tools are.
$(BUILD)/tests/test_tools_common: $(TOOL_COMMON_SRC:%.c=$(BUILD)/%.o)
# tests/test_convention.c links a program with libpcw-provider.a.
$(BUILD)/tests/test_convention: $(LIBPCW_PROVIDER_A)
$(BUILD)/tests/test_pcwdump: $(BUILD)/tools/libpcwdump.a $(TOOLS_COMMON_A)
$(BUILD)/tests/test_pcwstat: $(BUILD)/tools/libpcwstat.a $(TOOLS_COMMON_A)
$(BUILD)/tests/test_history: $(BUILD)/tools/libpcwstat.a $(TOOLS_COMMON_A)
$(BUILD)/tests/test_history_query: $(BUILD)/tools/libpcwstat.a $(TOOLS_COMMON_A)
$(BUILD)/tests/test_relog: $(BUILD)/tools/libpcwstat.a $(TOOLS_COMMON_A)
$(BUILD)/tests/test_exporter_expo: $(BUILD)/tools/libpcw-exporter.a
$(BUILD)/tests/test_exporter_expo: private TEST_LIBS += -lm
# tests/test_exporter_body.c links body.c, with a collector of its own.
$(BUILD)/tests/test_exporter_body: $(BUILD)/tools/libpcw-exporter.a
# tests/test_pcwtop.c links pcwtop's core and what it uses of tools/common.
$(BUILD)/tests/test_pcwtop: $(PCWTOP_A) $(TOOLS_COMMON_A)
$(BUILD)/tests/test_pcwtop: private TEST_LIBS += $(TOOL_LIBS_pcwtop)
$(BUILD)/tests/test_exporter_body: private TEST_LIBS += -lisal
# tests/test_exporter_gzip.c compresses with gzip.c (ISA-L) and decodes with
# zlib (in LIBPCW_LIBS).
$(BUILD)/tests/test_exporter_gzip: $(BUILD)/tools/libpcw-exporter.a
$(BUILD)/tests/test_exporter_gzip: private TEST_LIBS += -lisal
# tests/test_exporter_histogram.c decodes the protobuf exposition with the
# code protoc-c generates (as pcw-exporter encodes it).
$(BUILD)/tests/test_exporter_histogram: $(PROTO_OBJ)
$(BUILD)/tests/test_exporter_histogram: private override CFLAGS += -I$(PROTO_GEN)
$(BUILD)/tests/test_exporter_histogram: private TEST_LIBS += -lprotobuf-c

# ---- C++ (issue 12) ---------------------------------------------------------
# A provider in two translation units (tests/cxx/provider_main.cc holds the
# implementation, web_counters.cc a static counter table) as C++17 and C++20,
# and a C++ consumer: helpers that tests/test_cxx.c runs. check-cxx compiles
# every public header, and these files, with g++ and clang++ in both
# standards.
CXX_TEST_FLAGS   = $(OPT) -Wall -Wextra -Wpedantic -Werror -Wmissing-field-initializers $(PCW_INCLUDES) -Itests/cxx \
                   $(SANFLAGS)
CXX_PROVIDER_SRC = tests/cxx/provider_main.cc tests/cxx/web_counters.cc
CXX_HEADERS      = $(notdir $(INSTALL_HEADERS:.h=))

$(BUILD)/tests/helpers/cxx_provider17: $(CXX_PROVIDER_SRC) tests/cxx/web.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CXX_TEST_FLAGS) -o $@ $(CXX_PROVIDER_SRC) $(PROVIDER_LIBS)
$(BUILD)/tests/helpers/cxx_provider20: $(CXX_PROVIDER_SRC) tests/cxx/web.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++20 $(CXX_TEST_FLAGS) -o $@ $(CXX_PROVIDER_SRC) $(PROVIDER_LIBS)
$(BUILD)/tests/helpers/cxx_consumer: tests/cxx/consumer.cc $(HEADERS) $(LIBPCW_A)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CXX_TEST_FLAGS) -o $@ $< $(LIBPCW_A) -lpthread $(LIBPCW_LIBS)

# The README's C++ block (web17.cc, with its web.h) too, and -Wpedantic for all.
CXX_CHECK_FLAGS = -Wall -Wextra -Wpedantic -Werror -Wmissing-field-initializers $(PCW_INCLUDES)
check-cxx: $(PROVIDER_H)
	@set -e; readme=$$(mktemp -d); trap 'rm -rf "$$readme"' EXIT; \
	./scripts/readme-files.sh "$$readme"; \
	for cxx in g++ clang++; do for std in c++17 c++20; do \
	  for h in $(CXX_HEADERS); do \
	    printf '#include <pcw/%s.h>\n' $$h | $$cxx -std=$$std -x c++ -fsyntax-only \
	      $(CXX_CHECK_FLAGS) - ; done; \
	  for f in $(CXX_PROVIDER_SRC) tests/cxx/consumer.cc; do \
	    $$cxx -std=$$std $(CXX_CHECK_FLAGS) -Itests/cxx -fsyntax-only $$f; done; \
	  printf '#define PCW_PROVIDER_IMPLEMENTATION\n#include "web17.cc"\n' | \
	    $$cxx -std=$$std $(CXX_CHECK_FLAGS) -I"$$readme" -x c++ -fsyntax-only -; \
	  echo "check-cxx: $$cxx -std=$$std -Wpedantic: every header, the provider implementation, the consumer and the README's C++ table compile clean"; \
	done; done
.PHONY: check-cxx check-spdx check-build-tree check-doc-examples


# ---- pcwgen (tools/pcwgen/pcwgen.mk) --------------------------------------
include tools/pcwgen/pcwgen.mk

# manifest_provider publishes a CTRPP manifest's countersets, read at run time
# with pcwgen's reader (expat): the exporter's name tests run real manifests.
$(BUILD)/tests/helpers/manifest_provider: tests/helpers/manifest_provider.c $(PCWGEN_CORE_OBJS) \
    $(LIBPCW_A) | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -Itests -o $@ $< $(PCWGEN_CORE_OBJS) $(LIBPCW_A) $(PROVIDER_LIBS) \
	    $(PCWGEN_EXPAT_LIBS) -lm

# ---- tests ----------------------------------------------------------------
# Criterion runs each test in its own process; --jobs keeps the 2-core
# machine busy without oversubscribing the stress tests.
CRITERION_FLAGS ?= --jobs 2

# Runs every test binary, then prints one closing line counting the tests
# inside them: Criterion's "Synthesis" lines and conctest's "N tests passed".
RUN_TESTS ?= $(TESTS)
run-tests: $(RUN_TESTS) $(HELPERS) $(CXX_HELPERS) tools examples $(SEG_SEEDS)/.stamp $(HIST_SEEDS)/.stamp
	@set -o pipefail; log=$(BUILD)/tests.log; rm -f $$log; failed_bins=0; \
	for t in $(RUN_TESTS); do \
	  echo "== $$t"; \
	  PCW_BUILD=$(abspath $(BUILD)) LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
	    $$t $(CRITERION_FLAGS) 2>&1 | tee -a $$log || { failed_bins=$$((failed_bins+1)); echo "FAILED: $$t"; }; \
	done; \
	awk -v bins=$$failed_bins ' \
	  /Synthesis:/ { for (i = 1; i < NF; i++) { if ($$i == "Passing:") p += $$(i+1); \
	                 if ($$i == "Failing:" || $$i == "Crashing:") f += $$(i+1) } } \
	  /tests passed in/ { p += $$3 } \
	  END { if (f < bins) f = bins; printf "tests: %d passed, %d failed\n", p, f }' $$log; \
	test $$failed_bins -eq 0

run-conc-tests: $(patsubst %,$(BUILD)/tests/%,$(CONC_TESTS)) $(HELPERS)
	@set -e; for t in $(CONC_TESTS); do echo "== $(BUILD)/tests/$$t"; \
	  PCW_BUILD=$(abspath $(BUILD)) \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(abspath tests/tsan.supp)" \
	  $(BUILD)/tests/$$t $(CRITERION_FLAGS); done

check-asan:
	$(MAKE) BUILD=build/asan SAN=asan run-tests pcwgen-check

check-tsan:
	$(MAKE) BUILD=build/tsan SAN=tsan CC=clang OPT="-O1 -g" run-conc-tests

check: check-spdx check-build-tree check-doc-examples check-casefold check-cxx check-abi check-layering check-bench-summary check-bench-build check-man check-debian-version check-asan \
       check-tsan check-fuzz check-model
	@echo "make check: all suites passed"

# make test: the quick subset a distribution runs while it builds the package
# (debian/rules): gcc, no sanitizers, no clang, no fuzzing, about a minute.
# Every Criterion suite and conctest binary built as the package is, except
# those that need programs or rights a package build does not have (Prometheus and
# promtool, openssl and curl, tmux; root, for namespaces and cgroups: the
# container tests); pcwgen's tests; the ABI and the man pages.
# make check runs all of it (and these suites under ASan/UBSan and TSan).
TESTS_NEED_PROGRAMS = test_exporter_prometheus test_exporter_tls test_exporter_names test_pcwtop \
                      test_term_inject test_exporter_silent test_readme_latency \
                      test_exporter_histogram test_containers test_exporter_containers \
                      test_tools_containers
QUICK_TESTS = $(filter-out $(TESTS_NEED_PROGRAMS:%=$(BUILD)/tests/%),$(TESTS))
test: check-abi check-man check-debian-version
	$(MAKE) RUN_TESTS='$(QUICK_TESTS)' run-tests
	$(MAKE) pcwgen-check
	@echo "make test: all quick suites passed"

# Who calls whom, read from the objects (scripts/check-layering.py; the rule
# is docs/design.md's map): no loop of calls between the files of one folder
# or between folders, nothing in lib/ calls tools/, no tool another's code.
# tests/layering/run.sh tests the check on small trees first. The map's
# third rule, no private name in an installed header, is check-abi's, which
# this runs rather than a copy of it.
# Every source of lib/ and tools/, whichever library or program it goes in.
LAYER_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(wildcard lib/*/*.c tools/*/*.c))
check-layering: $(LAYER_OBJ) check-abi
	./tests/layering/run.sh $(CC)
	@./scripts/check-layering.py --root $(BUILD) $(LAYER_OBJ)
.PHONY: check-layering

# bench/summarize.py --runs, which docs/performance.md's figures come from.
check-bench-summary:
	./tests/bench-summary/run.sh
.PHONY: check-bench-summary

# make bench must build: it is not a test, but a link error in it (a
# library object listed twice) once went unnoticed because nothing built it.
check-bench-build: bench-build
.PHONY: check-bench-build

# libpcw.so exports its public API and nothing else (scripts/check-abi.sh);
# the installed headers declare no private (pcw__) name outside their
# marked private sections and the provider's implementation section
# (scripts/check-headers.sh, tried first on its fixtures).
check-abi: $(LIBPCW_SO) $(LIBPCW_A) $(PROVIDER_H)
	./scripts/check-abi.sh $(LIBPCW_SO) $(LIBPCW_A) $(SOVERSION)
	./scripts/check-headers-test.sh
	./scripts/check-headers.sh $(INSTALL_HEADERS)

# The man pages render without warnings and name every option of --help.
check-man: tools
	./scripts/check-man.sh $(BUILD) $(PCW_VERSION)
# The README's path from `make demo` to one's own program, with the build
# tree's uninstalled .pc files (scripts/build-tree-test.sh; default BUILD).
check-build-tree:
	$(MAKE) BUILD=build all
	./scripts/build-tree-test.sh
# Every example command of README.md, the tools' READMEs, docs/*.md and the
# man pages, run against the demo providers; sample screens' and outputs'
# labels against what the tools print (scripts/check_doc_examples.py).
check-doc-examples:
	$(MAKE) BUILD=build all
	python3 scripts/check_doc_examples.py build
# Every source file carries its SPDX license line (LICENSE).
check-spdx:
	./scripts/check-spdx.sh
# debian/changelog's latest version is lib/pcw/version.h's.
check-debian-version:
	@v=$$(sed -n '1s/^pcw (\([^)]*\)).*/\1/p' debian/changelog); \
	if [ "$$v" != "$(PCW_VERSION)" ]; then \
	  echo "check-debian-version: debian/changelog says $$v, lib/pcw/version.h $(PCW_VERSION): add a changelog entry (dch -v $(PCW_VERSION))" >&2; exit 1; \
	else echo "check-debian-version: debian/changelog is at $$v"; fi
.PHONY: test check-abi check-man check-debian-version run-tests run-conc-tests

# ---- the case-folding table (scripts/gen_casefold.py) ----------------------
# lib/common/casefold_table.h is generated from the Unicode Character Database
# (Debian's unicode-data) and checked in; check-casefold regenerates it into
# a temporary file and fails if the checked-in one differs.
UCD_CASEFOLDING ?= /usr/share/unicode/CaseFolding.txt

casefold-table:
	python3 scripts/gen_casefold.py $(UCD_CASEFOLDING) -o lib/common/casefold_table.h

check-casefold:
	@tmp=$$(mktemp) && trap 'rm -f "$$tmp"' EXIT && \
	python3 scripts/gen_casefold.py $(UCD_CASEFOLDING) -o "$$tmp" && \
	if cmp -s "$$tmp" lib/common/casefold_table.h; then \
	  echo "check-casefold: lib/common/casefold_table.h matches $(UCD_CASEFOLDING)"; \
	else \
	  diff -u lib/common/casefold_table.h "$$tmp" | head -20; \
	  echo "check-casefold: lib/common/casefold_table.h differs from what scripts/gen_casefold.py makes of $(UCD_CASEFOLDING); run 'make casefold-table' and commit the result" >&2; \
	  exit 1; \
	fi
.PHONY: casefold-table check-casefold

# The Promela model of the slot protocol, checked by spin (docs/model/).
.PHONY: check-model
check-model:
	./docs/model/check.sh $(BUILD)/model

# ---- fuzzing (clang + libFuzzer), bounded ---------------------------------
# The segment fuzzer's seeds are made at build time with the provider API
# (fuzz/segment/make_seeds.c), so they always have the current layout;
# fuzz/segment/regressions holds every input that ever crashed or hung it.
# FUZZ_MAX_LEN bounds an input (the largest seed is 240 KiB).
FUZZ_SECONDS ?= 30
FUZZ_MAX_LEN ?= 262144
FUZZ_FLAGS = -std=c11 -g -O1 $(PCW_INCLUDES) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
$(BUILD)/fuzz/fuzz_segment: fuzz/segment/fuzz_segment.c $(LIB_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ fuzz/segment/fuzz_segment.c $(LIB_SRC) $(LIBPCW_LIBS)

$(BUILD)/fuzz/fuzz_query: fuzz/query/fuzz_query.c $(LIB_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ fuzz/query/fuzz_query.c $(LIB_SRC) $(LIBPCW_LIBS)

$(BUILD)/fuzz/make_seeds: fuzz/segment/make_seeds.c | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -o $@ $< $(PROVIDER_LIBS)

$(SEG_SEEDS)/.stamp: $(BUILD)/fuzz/make_seeds
	rm -rf $(SEG_SEEDS) && mkdir -p $(SEG_SEEDS)
	$(BUILD)/fuzz/make_seeds $(SEG_SEEDS)
	touch $@

# The log reader's fuzzer (fuzz/history): seeds are real logs recorded at
# build time by fuzz/history/make_seeds.c (pcwstat's recording sink).
$(BUILD)/fuzz/fuzz_history: fuzz/history/fuzz_history.c $(LIB_SRC) $(HEADERS) $(HIST_HDR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ fuzz/history/fuzz_history.c $(LIB_SRC) $(LIBPCW_LIBS)

$(BUILD)/fuzz/make_history_seeds: fuzz/history/make_seeds.c $(BUILD)/tools/libpcwstat.a \
    $(TOOLS_COMMON_A) $(LIBPCW_A) | $(GENERATED_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -o $@ $< $(filter-out $(LIBPCW_A),$(filter %.o %.a,$^)) \
	    $(LIBPCW_A) $(PROVIDER_LIBS) -lm

$(HIST_SEEDS)/.stamp: $(BUILD)/fuzz/make_history_seeds
	rm -rf $(HIST_SEEDS) && mkdir -p $(HIST_SEEDS)
	$(BUILD)/fuzz/make_history_seeds $(HIST_SEEDS)
	touch $@

check-fuzz: $(BUILD)/fuzz/fuzz_segment $(BUILD)/fuzz/fuzz_query $(SEG_SEEDS)/.stamp \
            $(BUILD)/fuzz/fuzz_history $(HIST_SEEDS)/.stamp
	@mkdir -p $(BUILD)/fuzz/corpus-segment $(BUILD)/fuzz/corpus-query $(BUILD)/fuzz/corpus-history
	$(BUILD)/fuzz/fuzz_segment -max_total_time=$(FUZZ_SECONDS) -timeout=5 \
	    -max_len=$(FUZZ_MAX_LEN) $(BUILD)/fuzz/corpus-segment $(SEG_SEEDS) fuzz/segment/regressions
	$(BUILD)/fuzz/fuzz_query -max_total_time=$(FUZZ_SECONDS) -timeout=5 \
	    -dict=fuzz/query/path.dict $(BUILD)/fuzz/corpus-query
	$(BUILD)/fuzz/fuzz_history -max_total_time=$(FUZZ_SECONDS) -timeout=5 \
	    -max_len=$(FUZZ_MAX_LEN) $(BUILD)/fuzz/corpus-history $(HIST_SEEDS)
	$(MAKE) pcwgen-fuzz

# ---- demo -----------------------------------------------------------------
# clang's sanitizer and libFuzzer runtimes are in libclang-rt-14-dev (clang
# only recommends them); libpcp-mmv1-dev lets make bench compare with PCP;
# unicode-data has CaseFolding.txt (make casefold-table, make check).
# man-db renders the man pages (make check-man); prometheus-cpp-dev is the
# baseline of make bench's update/pcw_histogram_observe (bench/promcpp.cc).
DEB_PACKAGES = build-essential clang libclang-rt-14-dev pkg-config liburcu-dev man-db \
               libcriterion-dev libbenchmark-dev libexpat1-dev libpcp-mmv1-dev python3 \
               unicode-data spin libncurses-dev tmux \
               libmicrohttpd-dev zlib1g-dev libisal-dev libyaml-dev libcrypt-dev libgnutls28-dev prometheus-cpp-dev \
               prometheus openssl curl python3-prometheus-client jq \
               protobuf-c-compiler libprotobuf-c-dev libprotobuf-dev \
               golang-github-prometheus-client-model-dev \
               libzstd-dev libjansson-dev universal-ctags libxxhash-dev

deps:
	@./scripts/install-deps.sh $(DEB_PACKAGES)

demo: deps
	$(MAKE) all
	./scripts/demo.sh $(BUILD)

# ---- bench ----------------------------------------------------------------
include bench/bench.mk

# ---- version: written once, in lib/pcw/version.h ----------------------------
PCW_VERSION := $(shell awk '/^\#define PCW_VERSION_(MAJOR|MINOR|PATCH) /{v[$$2]=$$3} \
    END{print v["PCW_VERSION_MAJOR"] "." v["PCW_VERSION_MINOR"] "." v["PCW_VERSION_PATCH"]}' \
    lib/pcw/version.h)
version:
	@echo $(PCW_VERSION)
.PHONY: version

# ---- install --------------------------------------------------------------
# Every directory can be set on the command line; a multiarch distribution
# gives LIBDIR=/usr/lib/$(DEB_HOST_MULTIARCH) and the .pc files follow.
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
PCDIR   ?= $(LIBDIR)/pkgconfig
MANDIR  ?= $(PREFIX)/share/man
# The exporter's systemd unit (ExecStart names $(BINDIR)/pcw-exporter).
UNITDIR ?= $(PREFIX)/lib/systemd/system
# The recorder's paths (pcwstat-recorder.service reads /etc/pcw/recorder.paths).
SYSCONFDIR ?= $(PREFIX)/etc
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
             -e 's|@PCW_VERSION@|$(PCW_VERSION)|'
MAN_PAGES = $(wildcard man/*.1)

# Headers: INSTALL_HEADERS, as <pcw/NAME.h>; nothing else.
install: all
	install -d $(DESTDIR)$(INCDIR)/pcw $(DESTDIR)$(LIBDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PCDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UNITDIR)
	install -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(INCDIR)/pcw/
	install -m 644 $(LIBPCW_A) $(LIBPCW_PROVIDER_A) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(LIBPCW_SO) $(DESTDIR)$(LIBDIR)/libpcw.so.$(SOVERSION)
	ln -sf libpcw.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libpcw.so
	install -m 755 $(TOOL_BINS) $(BUILD)/pcwgen $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	sed -e 's|/usr/local/bin/|$(BINDIR)/|' tools/pcw-exporter/pcw-exporter.service \
	    > $(DESTDIR)$(UNITDIR)/pcw-exporter.service
	sed -e 's|/usr/local/bin/|$(BINDIR)/|' tools/pcwstat/pcwstat-recorder.service \
	    > $(DESTDIR)$(UNITDIR)/pcwstat-recorder.service
	install -D -m 644 tools/pcwstat/recorder.paths $(DESTDIR)$(SYSCONFDIR)/pcw/recorder.paths
	$(PC_SED) lib/pcw.pc.in > $(DESTDIR)$(PCDIR)/pcw.pc
	$(PC_SED) lib/pcw-provider.pc.in > $(DESTDIR)$(PCDIR)/pcw-provider.pc
	$(PC_SED) lib/pcw-provider-lib.pc.in > $(DESTDIR)$(PCDIR)/pcw-provider-lib.pc

uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCDIR)/pcw/,$(notdir $(INSTALL_HEADERS)))
	-rmdir $(DESTDIR)$(INCDIR)/pcw
	rm -f $(DESTDIR)$(LIBDIR)/libpcw.a $(DESTDIR)$(LIBDIR)/libpcw.so $(DESTDIR)$(LIBDIR)/libpcw.so.$(SOVERSION)
	rm -f $(DESTDIR)$(LIBDIR)/libpcw-provider.a
	rm -f $(DESTDIR)$(PCDIR)/pcw.pc $(DESTDIR)$(PCDIR)/pcw-provider.pc $(DESTDIR)$(PCDIR)/pcw-provider-lib.pc
	rm -f $(TOOLS:%=$(DESTDIR)$(BINDIR)/%) $(DESTDIR)$(BINDIR)/pcwgen
	rm -f $(MAN_PAGES:man/%=$(DESTDIR)$(MANDIR)/man1/%) $(DESTDIR)$(UNITDIR)/pcw-exporter.service
	rm -f $(DESTDIR)$(UNITDIR)/pcwstat-recorder.service $(DESTDIR)$(SYSCONFDIR)/pcw/recorder.paths

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cc')

clean:
	rm -rf $(BUILD)

# The installed headers' names, one a line (scripts/install-test.sh
# compares the installed tree with them).
install-headers:
	@printf '%s\n' $(notdir $(INSTALL_HEADERS))
.PHONY: install-headers

# The README's examples, built from the README against an installed tree.
install-test: all
	./scripts/install-test.sh
.PHONY: install-test

# The Debian packages (debian/): built from a copy of the tree, checked with
# lintian, installed, smoke-tested with the README's examples, removed
# (scripts/package-test.sh). Installs debhelper, lintian and the build
# dependencies first.
package-test:
	./scripts/package-test.sh
.PHONY: package-test
