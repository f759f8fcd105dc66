/* SPDX-License-Identifier: MIT */
/*
 * gbench.h - a plain-C interface to Google Benchmark.
 *
 * One concept: a C function `gb_fn` is registered under a name, Google
 * Benchmark decides how many iterations to run, and the function reports
 * through the opaque `gb_state` handle exactly as a C++ benchmark would
 * through `benchmark::State`.  All C++ lives in gbench.cc; this header is
 * valid C11 (and C++) and pulls in nothing but <stdint.h>.
 *
 * Targets the Google Benchmark 1.7.x API (Debian 12: libbenchmark-dev 1.7.1).
 *
 * Lifetime/threading rules common to every function below:
 *   - gb_bench * handles are valid from gb_register() until gb_main() returns.
 *     Configure them before gb_main(); never call gb_register() or any
 *     gb_bench function while benchmarks are running.
 *   - gb_state * handles are valid only inside the gb_fn invocation that
 *     received them.  Each benchmark thread gets its own gb_state; a gb_state
 *     must only be used by the thread that received it.
 *   - Strings passed in are copied; callers keep ownership.
 *   - Allocation failure inside the shim aborts the process (C++ exceptions
 *     never cross into C).
 *
 * Typical benchmark (see README.md for why it loops on batches):
 *
 *     static void bm(gb_state *st, void *arg)
 *     {
 *         int64_t n = gb_range(st, 0);
 *         int64_t k;
 *         while ((k = gb_keep_running_batch(st, 256)) > 0)
 *             for (int64_t i = 0; i < k; i++)
 *                 work(arg, n);
 *         gb_set_items_processed(st, gb_state_iterations(st) * n);
 *     }
 *     int main(int argc, char **argv)
 *     {
 *         gb_bench *b = gb_register("group/bm", bm, NULL);
 *         gb_args(b, (const int64_t[]){1000}, 1);
 *         return gb_main(argc, argv);
 *     }
 */
#ifndef PCW_BENCH_SHIM_GBENCH_H
#define PCW_BENCH_SHIM_GBENCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: a benchmark::State, valid only during one gb_fn call. */
typedef struct gb_state gb_state;

/* Opaque: a registered benchmark (benchmark::internal::Benchmark). */
typedef struct gb_bench gb_bench;

/* A benchmark body.  Called by Google Benchmark one or more times (probe
 * runs, repetitions, once per thread with gb_threads); `arg` is the pointer
 * given to gb_register, shared by all calls and threads.  The body must
 * drive a gb_keep_running / gb_keep_running_batch loop until it returns 0
 * (unless gb_skip_with_error was called first). */
typedef void (*gb_fn)(gb_state *st, void *arg);

/* ---- Registration (before gb_main) -------------------------------------- */

/* Register `fn` under `name` (e.g. "update/raw_store"; copied).  `arg` is
 * passed through to every call of `fn`.  Returns a handle for the options
 * below; never NULL. */
gb_bench *gb_register(const char *name, gb_fn fn, void *arg);

/* Add one argument row, like ->Args({args[0], ..., args[n-1]}).  Call once
 * per row; each row becomes a separate benchmark instance and is read back
 * with gb_range(st, i).  Requires n >= 1 and the same n for every row. */
void gb_args(gb_bench *b, const int64_t *args, int n);

/* Name the argument columns, like ->ArgNames({...}); instance names become
 * "name/names[0]:args[0]/...".  Requires n to match the gb_args row width. */
void gb_arg_names(gb_bench *b, const char *const *names, int n);

/* Report wall-clock time instead of the calling thread's CPU time
 * (->UseRealTime()).  Usually wanted together with gb_threads. */
void gb_use_real_time(gb_bench *b);

/* Report the time the body passes to gb_set_iteration_time instead of
 * measured time (->UseManualTime()). */
void gb_use_manual_time(gb_bench *b);

/* Run exactly n iterations, no probing (->Iterations(n)).  Requires n > 0;
 * must not be combined with gb_min_time. */
void gb_iterations(gb_bench *b, int64_t n);

/* Run for at least `seconds` (->MinTime(seconds)); overrides the
 * --benchmark_min_time flag for this benchmark.  Requires seconds > 0. */
void gb_min_time(gb_bench *b, double seconds);

/* Repeat the whole measurement n times and report mean/median/stddev
 * (->Repetitions(n)).  Requires n > 0. */
void gb_repetitions(gb_bench *b, int n);

/* Run the body concurrently on n threads (->Threads(n)); may be called
 * several times to get one instance per thread count.  Requires n > 0. */
void gb_threads(gb_bench *b, int n);

/* Report times in nanoseconds (->Unit(benchmark::kNanosecond)).  This is
 * the library default unless --benchmark_time_unit changes it; calling it
 * pins the unit for this benchmark. */
void gb_unit_ns(gb_bench *b);

/* ---- Inside a benchmark body --------------------------------------------- */

/* Loop condition, like `for (auto _ : state)`: returns 1 while another
 * iteration must run, then 0 (stopping the timer).  The first call starts
 * the timer.  This is an out-of-line call per iteration (a few ns), so for
 * bodies that take less than ~100 ns prefer gb_keep_running_batch. */
int gb_keep_running(gb_state *st);

/* Batch loop condition (State::KeepRunningBatch(n)): returns k > 0 = the
 * number of iterations the caller must now execute, or 0 when done.  k is
 * always n (the last batch may overshoot the planned iteration count; the
 * overshoot is counted, see gb_state_iterations).  n < 1 is treated as 1.
 * Use:  while ((k = gb_keep_running_batch(st, 256)) > 0)
 *           for (i = 0; i < k; i++) body();                                */
int64_t gb_keep_running_batch(gb_state *st, int64_t n);

/* Iterations Google Benchmark planned for this run (state.max_iterations).
 * Useful to size buffers before the loop. */
int64_t gb_max_iterations(gb_state *st);

/* Iterations executed so far (state.iterations()), including batch
 * overshoot.  Call after the loop to compute items/bytes processed. */
int64_t gb_state_iterations(gb_state *st);

/* Column i of this instance's gb_args row (state.range(i)).  Requires
 * 0 <= i < row width. */
int64_t gb_range(gb_state *st, int i);

/* 0-based index of the calling thread, < gb_thread_count(st). */
int gb_thread_index(gb_state *st);

/* Number of threads running this instance (state.threads()). */
int gb_thread_count(gb_state *st);

/* Stop / restart the timer inside the loop (PauseTiming/ResumeTiming).
 * Expensive (~µs): use for setup that cannot be hoisted, not per iteration.
 * Must be paired; the timer must be running at the next loop-condition
 * call. */
void gb_pause(gb_state *st);
void gb_resume(gb_state *st);

/* With gb_use_manual_time: report the duration of the current iteration
 * (or batch) in seconds.  Call once per loop turn. */
void gb_set_iteration_time(gb_state *st, double seconds);

/* Set the "items_per_second" / "bytes_per_second" rate counters: n is the
 * total for the whole run (usually gb_state_iterations(st) * per_iter).
 * Call after the loop. */
void gb_set_items_processed(gb_state *st, int64_t n);
void gb_set_bytes_processed(gb_state *st, int64_t n);

/* User counter `name` (copied) = value, printed as-is (Counter::kDefault).
 * With several threads the per-thread values are summed. */
void gb_counter(gb_state *st, const char *name, double value);

/* User counter reported as value / elapsed seconds (Counter::kIsRate). */
void gb_counter_rate(gb_state *st, const char *name, double value);

/* Mark this run as failed with `msg` (copied).  Subsequent loop-condition
 * calls return 0; if called inside the loop, the body must `break`/return
 * without further timed work.  Makes gb_main return 1. */
void gb_skip_with_error(gb_state *st, const char *msg);

/* Free-form label shown next to the result (state.SetLabel). */
void gb_set_label(gb_state *st, const char *label);

/* ---- Optimisation barriers ------------------------------------------------ */

/* gb_do_not_optimize(p): the compiler must assume *p (and anything reachable
 * through it) is read here, so stores to it and the computation of its value
 * cannot be elided.  gb_clobber_memory(): all memory may have been read and
 * written here, forcing pending stores out.  Both generate no instructions.
 * Inline asm on GCC/Clang (same asm as benchmark::DoNotOptimize /
 * ClobberMemory); other compilers get an out-of-line call to those. */
void gb_do_not_optimize_fn(const void *p);
void gb_clobber_memory_fn(void);

#if defined(__GNUC__)
static inline void gb_do_not_optimize(const void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}
static inline void gb_clobber_memory(void)
{
    __asm__ volatile("" : : : "memory");
}
#else
#define gb_do_not_optimize(p) gb_do_not_optimize_fn(p)
#define gb_clobber_memory()   gb_clobber_memory_fn()
#endif

/* ---- Running ---------------------------------------------------------------- */

/* Parse argv like benchmark::Initialize (consuming --benchmark_* flags such
 * as --benchmark_filter=RE, --benchmark_min_time=0.01,
 * --benchmark_out=FILE, --benchmark_out_format=json; --help prints usage and
 * exits 0), then run every registered benchmark matching the filter.
 * Returns 0 on success, 1 if any run called gb_skip_with_error, 2 if argv
 * held unrecognised or malformed arguments (reported on stderr, nothing
 * run).  Call once, from main. */
int gb_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* PCW_BENCH_SHIM_GBENCH_H */
