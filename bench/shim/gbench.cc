/* SPDX-License-Identifier: MIT */
// gbench.cc - implementation of the plain-C Google Benchmark shim (gbench.h).
//
// This is the only C++ translation unit in pcw.  Every function is a thin
// forwarder: gb_state * is a reinterpret_cast'd benchmark::State *, gb_bench *
// a reinterpret_cast'd benchmark::internal::Benchmark *.  No shim state lives
// in those objects, so the casts are the whole mapping.

#include "gbench.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

namespace
{

// Set by gb_skip_with_error so gb_main can report failure through its exit
// status (RunSpecifiedBenchmarks itself only returns the number run).
std::atomic<bool> g_any_error{false};

inline benchmark::State &S(gb_state *st)
{
    return *reinterpret_cast<benchmark::State *>(st);
}

inline benchmark::internal::Benchmark *B(gb_bench *b)
{
    return reinterpret_cast<benchmark::internal::Benchmark *>(b);
}

} // namespace

extern "C" {

gb_bench *gb_register(const char *name, gb_fn fn, void *arg)
{
    benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(
        name, [fn, arg](benchmark::State &st) { fn(reinterpret_cast<gb_state *>(&st), arg); });
    return reinterpret_cast<gb_bench *>(b);
}

void gb_args(gb_bench *b, const int64_t *args, int n)
{
    B(b)->Args(std::vector<int64_t>(args, args + n));
}

void gb_arg_names(gb_bench *b, const char *const *names, int n)
{
    B(b)->ArgNames(std::vector<std::string>(names, names + n));
}

void gb_use_real_time(gb_bench *b)
{
    B(b)->UseRealTime();
}

void gb_use_manual_time(gb_bench *b)
{
    B(b)->UseManualTime();
}

void gb_iterations(gb_bench *b, int64_t n)
{
    B(b)->Iterations(static_cast<benchmark::IterationCount>(n));
}

void gb_min_time(gb_bench *b, double seconds)
{
    B(b)->MinTime(seconds);
}

void gb_repetitions(gb_bench *b, int n)
{
    B(b)->Repetitions(n);
}

void gb_threads(gb_bench *b, int n)
{
    B(b)->Threads(n);
}

void gb_unit_ns(gb_bench *b)
{
    B(b)->Unit(benchmark::kNanosecond);
}

int gb_keep_running(gb_state *st)
{
    return S(st).KeepRunning() ? 1 : 0;
}

int64_t gb_keep_running_batch(gb_state *st, int64_t n)
{
    if (n < 1)
        n = 1;
    return S(st).KeepRunningBatch(static_cast<benchmark::IterationCount>(n)) ? n : 0;
}

int64_t gb_max_iterations(gb_state *st)
{
    return static_cast<int64_t>(S(st).max_iterations);
}

int64_t gb_state_iterations(gb_state *st)
{
    return static_cast<int64_t>(S(st).iterations());
}

int64_t gb_range(gb_state *st, int i)
{
    return S(st).range(static_cast<std::size_t>(i));
}

int gb_thread_index(gb_state *st)
{
    return S(st).thread_index();
}

int gb_thread_count(gb_state *st)
{
    return S(st).threads();
}

void gb_pause(gb_state *st)
{
    S(st).PauseTiming();
}

void gb_resume(gb_state *st)
{
    S(st).ResumeTiming();
}

void gb_set_iteration_time(gb_state *st, double seconds)
{
    S(st).SetIterationTime(seconds);
}

void gb_set_items_processed(gb_state *st, int64_t n)
{
    S(st).SetItemsProcessed(n);
}

void gb_set_bytes_processed(gb_state *st, int64_t n)
{
    S(st).SetBytesProcessed(n);
}

void gb_counter(gb_state *st, const char *name, double value)
{
    S(st).counters[name] = benchmark::Counter(value);
}

void gb_counter_rate(gb_state *st, const char *name, double value)
{
    S(st).counters[name] = benchmark::Counter(value, benchmark::Counter::kIsRate);
}

void gb_skip_with_error(gb_state *st, const char *msg)
{
    g_any_error.store(true, std::memory_order_relaxed);
    S(st).SkipWithError(msg);
}

void gb_set_label(gb_state *st, const char *label)
{
    S(st).SetLabel(label);
}

void gb_do_not_optimize_fn(const void *p)
{
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
}

void gb_clobber_memory_fn(void)
{
    benchmark::ClobberMemory();
}

int gb_main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    // Initialize() removes every flag it understood; anything left over
    // (other than argv[0]) is a typo or a malformed value.
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            std::fprintf(stderr, "%s: unrecognized or malformed argument '%s'\n", argv[0], argv[i]);
        benchmark::Shutdown();
        return 2;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return g_any_error.load(std::memory_order_relaxed) ? 1 : 0;
}

} // extern "C"
