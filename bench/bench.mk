# SPDX-License-Identifier: MIT
# bench/bench.mk - `make bench`: build and run pcw's benchmark suite
# (bench/README.md), included by the top-level Makefile.
#
#   make bench                          everything (about 3 minutes)
#   make bench BENCH_FILTER=snapshot    a subset (a Google Benchmark regex)
#   make bench BENCH_REPETITIONS=5      medians of 5 runs in the summary
#   make bench-build                    only build $(BENCH_BIN)
#   make bench-runs BENCH_RUNS=3        that many full runs one after the
#                                       other (bench/results/run-K.json), then
#                                       their figures side by side: each run,
#                                       the median (min-max), and a target
#                                       "met" only when every run met it
#
# Writes Google Benchmark's JSON to $(BENCH_OUT) (bench/results/latest.json,
# not committed) and prints the summary table (bench/summarize.py).
#
# The suite is always built with -O2 and without sanitizers, whatever SAN
# says: it compiles its own copy of the consumer library, and the shim's
# object gets target-specific flags.

include bench/shim/Makefile.inc

BENCH_BUILD       = $(BUILD)/bench
BENCH_BIN         = $(BENCH_BUILD)/pcw_bench
BENCH_SRC         = $(wildcard bench/*.c)
BENCH_OBJ         = $(BENCH_SRC:bench/%.c=$(BENCH_BUILD)/obj/%.o)
# LIB_SRC holds lib/history too (libpcw has it): listed twice it linked twice.
BENCH_LIB_OBJ     = $(LIB_SRC:%.c=$(BENCH_BUILD)/obj/%.o)
# bench/export.c: pcw-exporter's scrape, without its HTTP side.
BENCH_TOOL_SRC    = $(addprefix tools/pcw-exporter/,collector.c clock.c expo.c mapping.c log.c \
                      names.c unreadable.c classic.c proto.c)
BENCH_TOOL_OBJ    = $(BENCH_TOOL_SRC:%.c=$(BENCH_BUILD)/obj/%.o) $(PROTO_OBJ)
# -falign-loops=64: the update/* loops are one or two instructions, and
# their speed varied 2x with where the linker happened to place them
# (0.33 or 0.7 ns for the same code); aligned, it does not.
BENCH_CFLAGS      = -std=c11 -O2 -g $(WARN) $(PCW_INCLUDES) -Ibench -I$(GBENCH_SHIM_DIR) -falign-loops=64
BENCH_HAVE_MMV    = $(BENCH_BUILD)/have_mmv

BENCH_FILTER      ?= .
BENCH_MIN_TIME    ?= 0.5
BENCH_REPETITIONS ?= 1
BENCH_OUT         ?= bench/results/latest.json
BENCH_ARGS        ?=

# The shim's object: never sanitized, always optimised.
$(GBENCH_SHIM_OBJ): SANFLAGS =
$(GBENCH_SHIM_OBJ): OPT = -O2 -g

# Is Performance Co-Pilot's MMV library installed? Probed on every build
# (the file only changes when the answer does, so nothing rebuilds).
$(BENCH_HAVE_MMV): bench-probe-force
	@mkdir -p $(@D)
	@if printf '#include <pcp/mmv_stats.h>\n#include <pcp/mmv_dev.h>\n' \
	    | $(CC) -E -x c - >/dev/null 2>&1 && \
	  printf 'char mmv_stats2_init(void);\nint main(void) { return mmv_stats2_init(); }\n' \
	    | $(CC) -x c - -o $(BENCH_BUILD)/mmv_probe -lpcp_mmv >/dev/null 2>&1; \
	then echo 1; else echo 0; fi > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp $(BENCH_BUILD)/mmv_probe

$(BENCH_BUILD)/obj/%.o: bench/%.c $(BENCH_HAVE_MMV) | $(GENERATED_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(DEPFLAGS) -DBENCH_HAVE_MMV=$$(cat $(BENCH_HAVE_MMV)) -c $< -o $@

$(BENCH_BUILD)/obj/lib/%.o: lib/%.c | $(GENERATED_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BENCH_BUILD)/obj/tools/%.o: tools/%.c $(PROTO_GEN)/.stamp | $(GENERATED_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(DEPFLAGS) -I$(PROTO_GEN) -c $< -o $@

# The lzcnt variant of the histogram observer (x86-64 only: elsewhere clz
# needs no flag).
$(BENCH_BUILD)/obj/histogram_lzcnt.o: BENCH_CFLAGS += $(if $(filter x86_64,$(shell uname -m)),-mlzcnt)
$(BENCH_BUILD)/obj/histogram.o $(BENCH_BUILD)/obj/histogram_lzcnt.o: bench/histogram.h

# prometheus-cpp's Histogram, the baseline of update/pcw_histogram_observe
# (Debian's prometheus-cpp-dev), behind the C interface bench/promcpp.h;
# without it the suite builds and leaves that figure out, as for MMV.
BENCH_HAVE_PROMCPP = $(BENCH_BUILD)/have_promcpp
$(BENCH_HAVE_PROMCPP): bench-probe-force
	@mkdir -p $(@D)
	@if printf '#include <prometheus/histogram.h>\nint main() { prometheus::Histogram h{{1.0}}; h.Observe(1); }\n' \
	    | $(CXX) -std=c++17 -x c++ - -o $(BENCH_BUILD)/promcpp_probe -lprometheus-cpp-core \
	      >/dev/null 2>&1; \
	then echo 1; else echo 0; fi > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp $(BENCH_BUILD)/promcpp_probe

BENCH_PROMCPP_OBJ = $(BENCH_BUILD)/obj/promcpp.o
$(BENCH_PROMCPP_OBJ): bench/promcpp.cc bench/promcpp.h $(BENCH_HAVE_PROMCPP)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WERROR) -Wall -Wextra -Ibench \
	    -DBENCH_HAVE_PROMCPP=$$(cat $(BENCH_HAVE_PROMCPP)) -c $< -o $@

# bench/pcwtop.c: pcwtop's core (libpcwtop.a, everything but its main.c),
# linked as the tool's tests link it.
BENCH_PCWTOP_A    = $(BENCH_BUILD)/obj/tools/pcwtop/libpcwtop.a
BENCH_PCWTOP_OBJ  = $(PCWTOP_LIB_SRC:%.c=$(BENCH_BUILD)/obj/%.o)
BENCH_TOOL_OBJ   += $(addprefix $(BENCH_BUILD)/obj/tools/common/,escape.o grow.o container.o)
# bench/history_pcwstat.c: pcwstat's recorder.
BENCH_TOOL_OBJ   += $(BENCH_BUILD)/obj/tools/pcwstat/record.o
$(BENCH_PCWTOP_A): $(BENCH_PCWTOP_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BENCH_BIN): $(BENCH_OBJ) $(BENCH_PCWTOP_A) $(BENCH_LIB_OBJ) $(BENCH_TOOL_OBJ) $(GBENCH_SHIM_OBJ) \
    $(BENCH_PROMCPP_OBJ) $(BENCH_HAVE_MMV) $(BENCH_HAVE_PROMCPP)
	$(CXX) -o $@ $(BENCH_OBJ) $(BENCH_PCWTOP_A) $(BENCH_LIB_OBJ) $(BENCH_TOOL_OBJ) $(GBENCH_SHIM_OBJ) \
	    $(BENCH_PROMCPP_OBJ) $(GBENCH_SHIM_LIBS) $(PROVIDER_LIBS) -lncursesw \
	    $$(test "$$(cat $(BENCH_HAVE_PROMCPP))" = 1 && echo -lprometheus-cpp-core) \
	    $$(test "$$(cat $(BENCH_HAVE_MMV))" = 1 && echo -lpcp_mmv) -lprotobuf-c -lzstd -lz -lxxhash -lm

.PHONY: bench bench-build bench-runs bench-probe-force
bench-probe-force:

bench-build: $(BENCH_BIN)

bench: $(BENCH_BIN) $(BUILD)/pcw-exporter
	@mkdir -p $(dir $(BENCH_OUT))
	$(BENCH_BIN) --benchmark_filter='$(BENCH_FILTER)' --benchmark_min_time=$(BENCH_MIN_TIME) \
	    --benchmark_repetitions=$(BENCH_REPETITIONS) --benchmark_out=$(BENCH_OUT) \
	    --benchmark_out_format=json $(BENCH_ARGS)
	@python3 bench/summarize.py $(BENCH_OUT)

# Full runs back to back (issue 30: a target met in one quiet run and missed
# in the next is not met). BENCH_RUNS_CLOCK=--cpu compares CPU time.
BENCH_RUNS       ?= 3
BENCH_RUNS_DIR   ?= bench/results
BENCH_RUNS_CLOCK ?=
bench-runs: $(BENCH_BIN) $(BUILD)/pcw-exporter
	@mkdir -p $(BENCH_RUNS_DIR)
	@for k in $$(seq 1 $(BENCH_RUNS)); do \
	    echo "bench-runs: run $$k of $(BENCH_RUNS), $$(date -u +%H:%M:%S) UTC, load $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	    $(BENCH_BIN) --benchmark_filter='$(BENCH_FILTER)' --benchmark_min_time=$(BENCH_MIN_TIME) \
	        --benchmark_repetitions=$(BENCH_REPETITIONS) --benchmark_out=$(BENCH_RUNS_DIR)/run-$$k.json \
	        --benchmark_out_format=json $(BENCH_ARGS) > $(BENCH_RUNS_DIR)/run-$$k.log 2>&1 || exit 1; \
	done
	@python3 bench/summarize.py --runs $(BENCH_RUNS_CLOCK) \
	    $$(seq -f '$(BENCH_RUNS_DIR)/run-%g.json' 1 $(BENCH_RUNS))
