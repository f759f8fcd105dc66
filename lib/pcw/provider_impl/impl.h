/* SPDX-License-Identifier: MIT */
/*
 * pcw/provider_impl/impl.h - the provider's implementation, compiled in
 * the one translation unit that defines PCW_PROVIDER_IMPLEMENTATION before
 * including pcw/provider.h (which includes this file). PRIVATE: the files
 * of pcw/provider_impl/ are installed because that translation unit needs
 * them, but they are not an API - nothing here is for programs to call or
 * rely on, and it changes without notice. Names starting with pcw__ are
 * private.
 *
 * One concept per file, in the order they build on each other:
 *
 *   sync.h      TSan annotations for RCU, the RCU registration list
 *   records.h   the private records behind the handles, field ownership
 *   handles.h   the handle table (provider.h declares its entries)
 *   arena.h     the segment file: folder, growth, trimming, allocation
 *   open.h      pcw_provider_open, pcw_provider_open_error
 *   register.h  pcw_register's rules and messages, publishing a counterset
 *   instance.h  chunks, names, the limbo, punching, create and close
 *   teardown.h  pcw_unregister, pcw_provider_close
 *   buffer.h    pcw_buffer and pcw_add_instance
 *   control.h   the control channel's server (listener, connections)
 *
 * It compiles as C11 and as C++17/20 (g++, clang++), warning-free with
 * -Wall -Wextra. Shared memory is touched only through __atomic builtins
 * (pcw/layout.h says why): no <stdatomic.h>, nothing that means something
 * else in C++.
 */
#ifndef PCW_PROVIDER_IMPL_H
#define PCW_PROVIDER_IMPL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A system header included before pcw/provider.h fixed the feature set
 * without _GNU_SOURCE, so the declarations below are missing: say so
 * plainly. */
#if defined(__GLIBC__) && !defined(__USE_GNU)
#error                                                                                             \
    "the pcw provider implementation needs _GNU_SOURCE: define it before your first #include in the file that defines PCW_PROVIDER_IMPLEMENTATION, or compile with the flags of `pkg-config --cflags pcw-provider`"
#else /* the rest, only when it can compile (one error, not hundreds) */

#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>
#include <urcu/rculist.h>

#include "../control_proto.h"
#include "../layout.h"
#include "../name.h"
#include "../naming.h"
#include "../provider.h"
#include "../types.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "sync.h"
#include "records.h"
#include "handles.h"
#include "arena.h"
#include "open.h"
#include "register.h"
#include "instance.h"
#include "teardown.h"
#include "buffer.h"
#include "control.h"

/* The symbol every translation unit that includes pcw/provider.h refers
 * to (see there): defined here, once per program. */
const char PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file = 1;

#ifdef __cplusplus
}
#endif

#endif /* _GNU_SOURCE */
#endif /* PCW_PROVIDER_IMPL_H */
