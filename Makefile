# pcw - performance counters over shared memory.
#
#   make            build the library, tools and examples (into build/)
#   make demo       install missing Debian packages, build, run the demo
#   make check      every test: ASan+UBSan build, TSan build of the
#                   concurrent tests, pcwgen's tests, bounded fuzzing
#   make bench      the benchmark suite (bench/README.md)
#   make casefold-table  regenerate lib/pcw/casefold_table.h from the UCD
#   make install    PREFIX=/usr/local DESTDIR=
#
# Conventions (so new files need no Makefile edit):
#   tests/test_*.c   one Criterion test binary each
#   tests/conc_*.c   concurrent tests: also built and run under TSan
#   tests/helpers/*.c  programs the tests fork/exec (provider children...)
#   examples/*.c     one example program each
#   tools/NAME/*.c   one program, build/NAME

SHELL   := /bin/bash
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
SAN     ?=
CC      ?= cc
CXX     ?= c++
OPT     ?= -O2 -g

WARN     = -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wundef -Wpointer-arith \
           -Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers
CFLAGS   = -std=c11 $(OPT) $(WARN) -Ilib $(SANFLAGS) $(EXTRA_CFLAGS)
CXXFLAGS = -std=c++17 $(OPT) -Wall -Wextra -Werror -Ilib $(SANFLAGS)
LDFLAGS  = $(SANFLAGS)

ifeq ($(SAN),asan)
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SAN),tsan)
SANFLAGS = -fsanitize=thread -fno-omit-frame-pointer
endif

PROVIDER_LIBS = -lurcu-bp -lurcu-cds -lurcu-common -lpthread
TEST_LIBS     = -lcriterion

# ---- the consumer library -------------------------------------------------
LIB_SRC  = $(wildcard lib/consumer/*.c lib/query/*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_PIC  = $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
# Public headers, and the provider's private implementation headers (installed
# too: the file that defines PCW_PROVIDER_IMPLEMENTATION includes them).
PUBLIC_HEADERS = $(wildcard lib/pcw/*.h)
IMPL_HEADERS   = $(wildcard lib/pcw/provider_impl/*.h)
HEADERS  = $(PUBLIC_HEADERS) $(IMPL_HEADERS)
LIBPCW_A = $(BUILD)/libpcw.a
LIBPCW_SO = $(BUILD)/libpcw.so
SOVERSION = 1

# ---- tools, examples, tests ----------------------------------------------
TOOLS     = $(filter-out pcwgen,$(notdir $(wildcard tools/*)))
TOOL_BINS = $(TOOLS:%=$(BUILD)/%)
EXAMPLES  = $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
TESTS     = $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c tests/conc_*.c))
CONC_TESTS = $(patsubst tests/%.c,%,$(wildcard tests/conc_*.c))
HELPERS   = $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(wildcard tests/helpers/*.c))
# C++ helpers from tests/cxx (see "C++" below)
CXX_HELPERS = $(BUILD)/tests/helpers/cxx_provider17 $(BUILD)/tests/helpers/cxx_provider20 \
              $(BUILD)/tests/helpers/cxx_consumer
SEG_SEEDS = $(BUILD)/fuzz/segment-seeds# the segment fuzzer's seeds (see fuzzing)

.PHONY: all lib tools examples tests check check-asan check-tsan check-fuzz demo deps \
        install uninstall clean bench format
all: lib tools examples

lib: $(LIBPCW_A) $(LIBPCW_SO)
tools: $(TOOL_BINS) $(BUILD)/pcwgen
examples: $(EXAMPLES)
tests: $(TESTS) $(HELPERS) $(CXX_HELPERS)

$(BUILD)/%.o: %.c $(HEADERS) $(wildcard lib/consumer/*.h lib/query/*.h tools/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: %.c $(HEADERS) $(wildcard lib/consumer/*.h lib/query/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(LIBPCW_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBPCW_SO): $(LIB_PIC)
	$(CC) -shared -Wl,-soname,libpcw.so.$(SOVERSION) $(LDFLAGS) -o $@ $^ -lpthread

# Each tool: every .c in its folder, linked with the consumer library (and
# the provider's libraries, for tools that also publish). One explicit rule
# per tool, so no catch-all pattern can capture other targets.
define TOOL_RULE
$(BUILD)/$(1): $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/$(1)/*.c)) $(LIBPCW_A)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(LIBPCW_A) $$(PROVIDER_LIBS) $$(TOOL_LIBS_$(1))
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_RULE,$(t))))
# pcw-exporter: HTTP, gzip, YAML, bcrypt, TLS (docs/exporter.md).
TOOL_LIBS_pcw-exporter = -lmicrohttpd -lz -lyaml -lcrypt -lgnutls -lm

# pcwtop draws with ncursesw; bench/pcwtop.c compiles its data layer in.
TOOL_LIBS_pcwtop = -lncursesw -lm
$(BUILD)/bench/obj/pcwtop.o: $(wildcard tools/pcwtop/*.c tools/pcwtop/*.h)

# Examples may include headers pcwgen makes from examples/manifests/*.man
# (see tools/pcwgen/README.md for the pattern).
EXAMPLE_GEN = $(BUILD)/gen/examples/manifests/kcs.h $(BUILD)/gen/examples/manifests/ucs.h
$(BUILD)/gen/examples/manifests/kcs.h: PCWGEN_FLAGS = -prefix Kcs
$(BUILD)/gen/examples/manifests/ucs.h: PCWGEN_FLAGS = -prefix Ucs

$(BUILD)/examples/%: examples/%.c $(HEADERS) $(LIBPCW_A) $(EXAMPLE_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(BUILD)/gen/examples/manifests -o $@ $< $(LIBPCW_A) $(PROVIDER_LIBS) -lm

$(BUILD)/tests/helpers/%: tests/helpers/%.c $(HEADERS) $(LIBPCW_A) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -o $@ $< $(LIBPCW_A) $(PROVIDER_LIBS) -lm

$(BUILD)/tests/%: tests/%.c $(HEADERS) $(LIBPCW_A) $(wildcard tests/*.h) $(wildcard lib/consumer/*.h lib/query/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -Ilib/consumer -DPCW_BUILD_DIR='"$(abspath $(BUILD))"' \
	    -DPCW_SOURCE_DIR='"$(abspath .)"' \
	    -o $@ $< $(LIBPCW_A) $(PROVIDER_LIBS) $(TEST_LIBS) -lm

# ---- C++ (issue 12) ---------------------------------------------------------
# A provider in two translation units (tests/cxx/provider_main.cc holds the
# implementation, web_counters.cc a static counter table) as C++17 and C++20,
# and a C++ consumer: helpers that tests/test_cxx.c runs. check-cxx compiles
# every public header, and these files, with g++ and clang++ in both
# standards.
CXX_TEST_FLAGS   = $(OPT) -Wall -Wextra -Werror -Wmissing-field-initializers -Ilib -Itests/cxx \
                   $(SANFLAGS)
CXX_PROVIDER_SRC = tests/cxx/provider_main.cc tests/cxx/web_counters.cc
CXX_HEADERS      = provider callback consumer collect query types layout name naming \
                   control_proto version

$(BUILD)/tests/helpers/cxx_provider17: $(CXX_PROVIDER_SRC) tests/cxx/web.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CXX_TEST_FLAGS) -o $@ $(CXX_PROVIDER_SRC) $(PROVIDER_LIBS)
$(BUILD)/tests/helpers/cxx_provider20: $(CXX_PROVIDER_SRC) tests/cxx/web.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++20 $(CXX_TEST_FLAGS) -o $@ $(CXX_PROVIDER_SRC) $(PROVIDER_LIBS)
$(BUILD)/tests/helpers/cxx_consumer: tests/cxx/consumer.cc $(HEADERS) $(LIBPCW_A)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CXX_TEST_FLAGS) -o $@ $< $(LIBPCW_A) -lpthread

check-cxx:
	@set -e; for cxx in g++ clang++; do for std in c++17 c++20; do \
	  for h in $(CXX_HEADERS); do \
	    printf '#include <pcw/%s.h>\n' $$h | $$cxx -std=$$std -x c++ -fsyntax-only \
	      -Wall -Wextra -Werror -Wmissing-field-initializers -Ilib - ; done; \
	  for f in $(CXX_PROVIDER_SRC) tests/cxx/consumer.cc; do \
	    $$cxx -std=$$std -Wall -Wextra -Werror -Wmissing-field-initializers -Ilib -Itests/cxx \
	      -fsyntax-only $$f; done; \
	  echo "check-cxx: $$cxx -std=$$std: every header, the provider implementation and the consumer compile clean"; \
	done; done
.PHONY: check-cxx


# ---- pcwgen (tools/pcwgen/pcwgen.mk) --------------------------------------
-include tools/pcwgen/pcwgen.mk

# ---- tests ----------------------------------------------------------------
# Criterion runs each test in its own process; --jobs keeps the 2-core
# machine busy without oversubscribing the stress tests.
CRITERION_FLAGS ?= --jobs 2

# Runs every test binary, then prints one closing line counting the tests
# inside them: Criterion's "Synthesis" lines and conctest's "N tests passed".
run-tests: $(TESTS) $(HELPERS) $(CXX_HELPERS) tools examples $(SEG_SEEDS)/.stamp
	@set -o pipefail; log=$(BUILD)/tests.log; rm -f $$log; failed_bins=0; \
	for t in $(TESTS); do \
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

check: check-casefold check-cxx check-asan check-tsan check-fuzz check-model
	@echo "make check: all suites passed"

# ---- the case-folding table (scripts/gen_casefold.py) ----------------------
# lib/pcw/casefold_table.h is generated from the Unicode Character Database
# (Debian's unicode-data) and checked in; check-casefold regenerates it into
# a temporary file and fails if the checked-in one differs.
UCD_CASEFOLDING ?= /usr/share/unicode/CaseFolding.txt

casefold-table:
	python3 scripts/gen_casefold.py $(UCD_CASEFOLDING) -o lib/pcw/casefold_table.h

check-casefold:
	@tmp=$$(mktemp) && trap 'rm -f "$$tmp"' EXIT && \
	python3 scripts/gen_casefold.py $(UCD_CASEFOLDING) -o "$$tmp" && \
	if cmp -s "$$tmp" lib/pcw/casefold_table.h; then \
	  echo "check-casefold: lib/pcw/casefold_table.h matches $(UCD_CASEFOLDING)"; \
	else \
	  diff -u lib/pcw/casefold_table.h "$$tmp" | head -20; \
	  echo "check-casefold: lib/pcw/casefold_table.h differs from what scripts/gen_casefold.py makes of $(UCD_CASEFOLDING); run 'make casefold-table' and commit the result" >&2; \
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
FUZZ_FLAGS = -std=c11 -g -O1 -Ilib -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
$(BUILD)/fuzz/fuzz_segment: fuzz/segment/fuzz_segment.c $(LIB_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ fuzz/segment/fuzz_segment.c $(LIB_SRC)

$(BUILD)/fuzz/fuzz_query: fuzz/query/fuzz_query.c $(LIB_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ fuzz/query/fuzz_query.c $(LIB_SRC)

$(BUILD)/fuzz/make_seeds: fuzz/segment/make_seeds.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(PROVIDER_LIBS)

$(SEG_SEEDS)/.stamp: $(BUILD)/fuzz/make_seeds
	rm -rf $(SEG_SEEDS) && mkdir -p $(SEG_SEEDS)
	$(BUILD)/fuzz/make_seeds $(SEG_SEEDS)
	touch $@

check-fuzz: $(BUILD)/fuzz/fuzz_segment $(BUILD)/fuzz/fuzz_query $(SEG_SEEDS)/.stamp
	@mkdir -p $(BUILD)/fuzz/corpus-segment $(BUILD)/fuzz/corpus-query
	$(BUILD)/fuzz/fuzz_segment -max_total_time=$(FUZZ_SECONDS) -timeout=5 \
	    -max_len=$(FUZZ_MAX_LEN) $(BUILD)/fuzz/corpus-segment $(SEG_SEEDS) fuzz/segment/regressions
	$(BUILD)/fuzz/fuzz_query -max_total_time=$(FUZZ_SECONDS) -timeout=5 \
	    -dict=fuzz/query/path.dict $(BUILD)/fuzz/corpus-query
	$(MAKE) pcwgen-fuzz

# ---- demo -----------------------------------------------------------------
# clang's sanitizer and libFuzzer runtimes are in libclang-rt-14-dev (clang
# only recommends them); libpcp-mmv1-dev lets make bench compare with PCP;
# unicode-data has CaseFolding.txt (make casefold-table, make check).
DEB_PACKAGES = build-essential clang libclang-rt-14-dev pkg-config liburcu-dev \
               libcriterion-dev libbenchmark-dev libexpat1-dev libpcp-mmv1-dev python3 \
               unicode-data spin libncurses-dev tmux \
               libmicrohttpd-dev zlib1g-dev libyaml-dev libcrypt-dev libgnutls28-dev \
               prometheus openssl curl python3-prometheus-client

deps:
	@./scripts/install-deps.sh $(DEB_PACKAGES)

demo: deps
	$(MAKE) all
	./scripts/demo.sh $(BUILD)

# ---- bench ----------------------------------------------------------------
-include bench/bench.mk

# ---- version: written once, in lib/pcw/version.h ----------------------------
PCW_VERSION := $(shell awk '/^\#define PCW_VERSION_(MAJOR|MINOR|PATCH) /{v[$$2]=$$3} \
    END{print v["PCW_VERSION_MAJOR"] "." v["PCW_VERSION_MINOR"] "." v["PCW_VERSION_PATCH"]}' \
    lib/pcw/version.h)
version:
	@echo $(PCW_VERSION)
.PHONY: version

# ---- install --------------------------------------------------------------
LIBDIR = $(PREFIX)/lib
INCDIR = $(PREFIX)/include
BINDIR = $(PREFIX)/bin
PCDIR  = $(LIBDIR)/pkgconfig
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@PCW_VERSION@|$(PCW_VERSION)|'

install: all
	install -d $(DESTDIR)$(INCDIR)/pcw/provider_impl $(DESTDIR)$(LIBDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PCDIR)
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCDIR)/pcw/
	install -m 644 $(IMPL_HEADERS) $(DESTDIR)$(INCDIR)/pcw/provider_impl/
	install -m 644 $(LIBPCW_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIBPCW_SO) $(DESTDIR)$(LIBDIR)/libpcw.so.$(SOVERSION)
	ln -sf libpcw.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libpcw.so
	install -m 755 $(TOOL_BINS) $(BUILD)/pcwgen $(DESTDIR)$(BINDIR)/
	$(PC_SED) lib/pcw.pc.in > $(DESTDIR)$(PCDIR)/pcw.pc
	$(PC_SED) lib/pcw-provider.pc.in > $(DESTDIR)$(PCDIR)/pcw-provider.pc

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/pcw
	rm -f $(DESTDIR)$(LIBDIR)/libpcw.* $(DESTDIR)$(PCDIR)/pcw.pc $(DESTDIR)$(PCDIR)/pcw-provider.pc
	rm -f $(TOOLS:%=$(DESTDIR)$(BINDIR)/%) $(DESTDIR)$(BINDIR)/pcwgen

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cc')

clean:
	rm -rf build

# The README's examples, built from the README against an installed tree.
install-test: all
	./scripts/install-test.sh
.PHONY: install-test
