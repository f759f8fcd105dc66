# SPDX-License-Identifier: MIT
# tools/pcwgen/pcwgen.mk - pcwgen, the manifest-to-header generator: the
# tool, its tests, its fuzzer, and the rule a project uses to generate a
# header from a manifest.
#
# Included from the top-level Makefile (which defines BUILD, CC, CFLAGS,
# LDFLAGS, PROVIDER_LIBS and libpcw, which the tests link):
#
#   make pcwgen-check     # build and run the tests
#   make pcwgen-golden    # regenerate golden headers
#   make pcwgen-fuzz      # fuzz the reader (30 s)
#   make pcwgen-asan      # the tests under ASan+UBSan (check-asan runs them too)
#
# The tool alone (`make -f tools/pcwgen/pcwgen.mk build/pcwgen`) builds
# without the rest of the tree.
#
# Every path is relative to the repository root.

BUILD ?= build
# Standalone defaults: the top-level Makefile's warnings, so code that builds
# here builds there.
CFLAGS ?= -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wundef -Wpointer-arith \
          -Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers $(PCW_INCLUDES)
LDFLAGS ?=
PROVIDER_LIBS ?= -lurcu-bp -lurcu-cds -lurcu-common -lpthread

# The real CTRPP manifests the tests compile unmodified (tests only; the
# copies in examples/manifests stand in when ../shared is absent).
PCWGEN_SHARED ?= $(firstword $(wildcard ../shared/manifests) examples/manifests)
# microsoft/xdp-for-windows' xdppcw.man when it is there, else the stand-in
# of the same structure in tests/pcwgen/manifests.
PCWGEN_XDP_MAN ?= $(firstword $(wildcard $(PCWGEN_SHARED)/xdppcw.man) \
                    tests/pcwgen/manifests/xdppcw.man)
PCWGEN_CLANG ?= clang
PCWGEN_FUZZ_TIME ?= 30

PCWGEN_EXPAT_LIBS ?= -lexpat
PCWGEN_CRITERION_LIBS ?= -lcriterion

PCWGEN_CORE_SRCS := tools/pcwgen/manifest.c tools/pcwgen/check.c tools/pcwgen/arena.c \
                    tools/pcwgen/ident.c tools/pcwgen/types_table.c tools/pcwgen/emit.c
PCWGEN_CORE_OBJS := $(PCWGEN_CORE_SRCS:%.c=$(BUILD)/%.o)
PCWGEN_HDRS := $(wildcard tools/pcwgen/*.h) lib/pcw/types.h lib/common/name.h lib/pcw/version.h \
               $(PROVIDER_H)

$(BUILD)/tools/pcwgen/%.o: tools/pcwgen/%.c $(PCWGEN_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/pcwgen: $(PCWGEN_CORE_OBJS) $(BUILD)/tools/pcwgen/main.o
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_EXPAT_LIBS)

# ---------------------------------------------------------------------------
# Generating a header from a manifest (the documented pattern).
#
# <dir>/<name>.man -> $(BUILD)/gen/<dir>/<name>.h. CTRPP's -prefix and any
# other option go in PCWGEN_FLAGS, set per target:
#
#   $(BUILD)/gen/examples/manifests/kcs.h: PCWGEN_FLAGS = -prefix Kcs
#   $(BUILD)/example/kcs.o: $(BUILD)/gen/examples/manifests/kcs.h
#   $(BUILD)/example/kcs.o: CFLAGS += -I$(BUILD)/gen/examples/manifests
#
# The header then needs <pcw/provider.h> (-Ilib) and PROVIDER_LIBS at link.
# pcwgen writes a temporary file and renames it, so a failed run never
# leaves a stale header behind; errors read "FILE:LINE: error: ...".
$(BUILD)/gen/%.h: %.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen $(PCWGEN_FLAGS) -o $@ $<

# ---------------------------------------------------------------------------
# Tests (Criterion). Run from the repository root: they find pcwgen at
# $(BUILD)/pcwgen (or $PCWGEN) and their data under tests/pcwgen/.

PCWGEN_T := $(BUILD)/tests/pcwgen
PCWGEN_GEN := $(PCWGEN_T)/gen
PCWGEN_TESTS := $(PCWGEN_T)/test_reader $(PCWGEN_T)/test_errors $(PCWGEN_T)/test_golden \
                $(PCWGEN_T)/test_kcs $(PCWGEN_T)/test_ucs $(PCWGEN_T)/test_extra \
                $(PCWGEN_T)/test_xdp $(PCWGEN_T)/test_hist

PCWGEN_TEST_CFLAGS = $(CFLAGS) -Itools/pcwgen -Itests/pcwgen -I$(PCWGEN_GEN) \
                     -DPCWGEN_BIN='"$(BUILD)/pcwgen"' -DPCWGEN_SHARED='"$(PCWGEN_SHARED)"'

# Headers the provider tests include: the real manifests, unmodified, and
# tests/pcwgen/manifests/*.man, each with the prefix its golden file uses.
$(PCWGEN_GEN)/kcs.h: $(PCWGEN_SHARED)/kcs.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -prefix Kcs -o $@ $<
$(PCWGEN_GEN)/ucs.h: $(PCWGEN_SHARED)/ucs.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -o $@ $<
$(PCWGEN_GEN)/storage.h: tests/pcwgen/manifests/storage.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -prefix Stor -o $@ $<
$(PCWGEN_GEN)/netstack.h: tests/pcwgen/manifests/netstack.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -prefix Net -o $@ $<
$(PCWGEN_GEN)/service.h: tests/pcwgen/manifests/service.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -prefix Svc -o $@ $<
$(PCWGEN_GEN)/instances.h: tests/pcwgen/manifests/instances.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -prefix Forms -o $@ $<
$(PCWGEN_GEN)/histogram.h: tests/pcwgen/manifests/histogram.man $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -prefix Hist -o $@ $<
$(PCWGEN_GEN)/xdppcw.h: $(PCWGEN_XDP_MAN) $(BUILD)/pcwgen
	@mkdir -p $(@D)
	$(BUILD)/pcwgen -prefix Xdp -o $@ $<

PCWGEN_TEST_HDRS := tests/pcwgen/pcwgen_test.h tests/pcwgen/provider_types.h tests/pcwgen/tu2.h

$(PCWGEN_T)/%.o: tests/pcwgen/%.c $(PCWGEN_TEST_HDRS) $(PCWGEN_HDRS)
	@mkdir -p $(@D)
	$(CC) $(PCWGEN_TEST_CFLAGS) -c $< -o $@

# Provider tests: each includes its generated header in two translation
# units (the test and *_tu2.c), linked together.
$(PCWGEN_T)/test_kcs.o $(PCWGEN_T)/kcs_tu2.o: $(PCWGEN_GEN)/kcs.h
$(PCWGEN_T)/test_ucs.o $(PCWGEN_T)/ucs_tu2.o: $(PCWGEN_GEN)/ucs.h
$(PCWGEN_T)/test_extra.o $(PCWGEN_T)/extra_tu2.o: $(PCWGEN_GEN)/storage.h \
    $(PCWGEN_GEN)/netstack.h $(PCWGEN_GEN)/service.h $(PCWGEN_GEN)/instances.h
$(PCWGEN_T)/test_xdp.o $(PCWGEN_T)/xdp_tu2.o: $(PCWGEN_GEN)/xdppcw.h
$(PCWGEN_T)/test_hist.o $(PCWGEN_T)/hist_tu2.o: $(PCWGEN_GEN)/histogram.h

PCWGEN_PROVIDER_TEST_OBJS := $(PCWGEN_T)/testdir.o

$(PCWGEN_T)/test_reader: $(PCWGEN_T)/test_reader.o $(PCWGEN_CORE_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_EXPAT_LIBS) $(PCWGEN_CRITERION_LIBS)
$(PCWGEN_T)/test_errors: $(PCWGEN_T)/test_errors.o $(PCWGEN_T)/run.o
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_CRITERION_LIBS)
$(PCWGEN_T)/test_golden: $(PCWGEN_T)/test_golden.o $(PCWGEN_T)/run.o
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_CRITERION_LIBS)
# test_kcs and test_extra also read what they published back through the
# consumer library.
$(PCWGEN_T)/test_kcs: $(PCWGEN_T)/test_kcs.o $(PCWGEN_T)/kcs_tu2.o $(PCWGEN_PROVIDER_TEST_OBJS) \
    $(LIBPCW_A)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_CRITERION_LIBS) $(PROVIDER_LIBS)
$(PCWGEN_T)/test_ucs: $(PCWGEN_T)/test_ucs.o $(PCWGEN_T)/ucs_tu2.o $(PCWGEN_PROVIDER_TEST_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_CRITERION_LIBS) $(PROVIDER_LIBS)
$(PCWGEN_T)/test_extra: $(PCWGEN_T)/test_extra.o $(PCWGEN_T)/extra_tu2.o $(PCWGEN_PROVIDER_TEST_OBJS) \
    $(LIBPCW_A)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_CRITERION_LIBS) $(PROVIDER_LIBS)
# test_hist reads the histograms it observed back through the consumer.
$(PCWGEN_T)/test_hist: $(PCWGEN_T)/test_hist.o $(PCWGEN_T)/hist_tu2.o $(PCWGEN_PROVIDER_TEST_OBJS) \
    $(LIBPCW_A)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_CRITERION_LIBS) $(PROVIDER_LIBS)
$(PCWGEN_T)/test_xdp: $(PCWGEN_T)/test_xdp.o $(PCWGEN_T)/xdp_tu2.o $(PCWGEN_PROVIDER_TEST_OBJS) \
    $(LIBPCW_A)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PCWGEN_CRITERION_LIBS) $(PROVIDER_LIBS)

.PHONY: pcwgen-check pcwgen-golden pcwgen-fuzz pcwgen-asan
pcwgen-check: $(BUILD)/pcwgen $(PCWGEN_TESTS)
	@set -e; for t in $(PCWGEN_TESTS); do echo "== $$t"; \
	  LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) PCWGEN=$(BUILD)/pcwgen $$t; done

# Regenerate tests/pcwgen/golden/*.h after an intended change to the output
# (then review the diff). tests/pcwgen/golden/golden.list says which
# manifest and prefix make each golden file; test_golden reads it too.
pcwgen-golden: $(BUILD)/pcwgen
	@set -e; grep -v '^#' tests/pcwgen/golden/golden.list | while read man prefix golden; do \
	    [ -n "$$man" ] || continue; \
	    if [ "$$prefix" = "-" ]; then p=""; else p="-prefix $$prefix"; fi; \
	    echo "pcwgen $$p $$man -> $$golden"; \
	    $(BUILD)/pcwgen $$p -o $$golden $$man; \
	done

# The same tests built and run with AddressSanitizer and UBSan.
# Through the top-level Makefile: the tests link libpcw, built with the
# same sanitizers (a sub-make of this file alone had no libpcw to link).
pcwgen-asan:
	$(MAKE) -f Makefile BUILD=build/asan SAN=asan pcwgen-check

# ---------------------------------------------------------------------------
# libFuzzer target for the manifest reader and the emitter. New inputs go to
# $(BUILD)/fuzz/pcwgen/corpus; the other directories are read-only seeds.
PCWGEN_FUZZ := $(BUILD)/fuzz/pcwgen/fuzz_manifest
PCWGEN_FUZZ_CFLAGS ?= -std=c11 -g -O1 $(PCW_INCLUDES) -Itools/pcwgen \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

$(PCWGEN_FUZZ): fuzz/pcwgen/fuzz_manifest.c $(PCWGEN_CORE_SRCS) $(PCWGEN_HDRS)
	@mkdir -p $(@D)
	$(PCWGEN_CLANG) $(PCWGEN_FUZZ_CFLAGS) -o $@ fuzz/pcwgen/fuzz_manifest.c $(PCWGEN_CORE_SRCS) \
	    $(PCWGEN_EXPAT_LIBS)

pcwgen-fuzz: $(PCWGEN_FUZZ)
	@mkdir -p $(BUILD)/fuzz/pcwgen/corpus
	$(PCWGEN_FUZZ) -max_total_time=$(PCWGEN_FUZZ_TIME) -dict=fuzz/pcwgen/manifest.dict \
	    $(BUILD)/fuzz/pcwgen/corpus fuzz/pcwgen/seeds examples/manifests \
	    tests/pcwgen/manifests tests/pcwgen/bad
