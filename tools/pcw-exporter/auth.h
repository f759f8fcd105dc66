/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/auth.h - HTTP basic authentication against the
 * bcrypt hashes of --web.config.file (libxcrypt's crypt_r).
 *
 * bcrypt is slow by design (tens of milliseconds at cost 10, seconds at
 * 13), and a scraper sends the same credentials every time: a password
 * that was verified is remembered - as a keyed SHA-256 digest, never in
 * clear - so that later scrapes cost a hash, not a bcrypt.
 *
 * What a wrong guess costs, and what it tells:
 *  - An unknown user costs one bcrypt at the highest cost of the
 *    configured users (a salt of that cost made at start), so response
 *    times do not tell which users exist.
 *  - bcrypt runs one at a time (as exporter-toolkit does), so guesses use
 *    at most one CPU, and each client address may start AUTH_BURST bcrypts
 *    at once and then one every AUTH_REFILL_S seconds (a token bucket per
 *    address, AUTH_ADDRESSES of them, the least recently used reused);
 *    past that the request is refused without a bcrypt (AUTH_LIMITED:
 *    429). A password already verified is served without a token. An
 *    IPv6 client is one address per /64 (AUTH_IPV6_PREFIX: the block a
 *    host or a site is given, which it may rotate through); IPv4, and
 *    IPv4 mapped into IPv6, one per address.
 *  - The wait for the one bcrypt has the request's deadline: a request
 *    still waiting then is refused without a bcrypt (AUTH_BUSY: 503), so
 *    a flood of guesses never holds request threads past their time.
 *  - Credentials are decoded from the Authorization header here, whole: a
 *    user or password with a NUL byte, or a password longer than bcrypt's
 *    72 bytes, is refused rather than cut short.
 *
 * Concurrency: auth_check from any thread; `lock` guards the cache and
 * the buckets, `bcrypt_lock` serialises bcrypt.
 */
#ifndef PCW_EXPORTER_AUTH_H
#define PCW_EXPORTER_AUTH_H

#include <stdint.h>
#include <sys/socket.h>

#include "webconfig.h"

#define AUTH_BURST     10  /* bcrypts a client address may start at once */
#define AUTH_REFILL_S  6   /* ...and then one every this many seconds */
#define AUTH_ADDRESSES 256 /* addresses tracked; the least recently used goes */
#define AUTH_PASS_MAX  72  /* bcrypt reads no further: longer is refused */
#define AUTH_IPV6_PREFIX 64  /* an IPv6 client's bucket: its /64 */

enum { AUTH_OK, AUTH_DENIED, AUTH_LIMITED, AUTH_BUSY };

typedef struct auth auth;

/* NULL (and 0) when the configuration has no users. -1 on error. */
int auth_open(auth **out, const web_config *wc);
void auth_close(auth *a);
/* The Authorization header (NULL when none) of a request from `from`:
 * AUTH_OK when it names a configured user with the right password,
 * AUTH_LIMITED when `from` has used its bcrypts, AUTH_BUSY when other
 * requests' bcrypts held the one bcrypt until deadline_ns
 * (CLOCK_MONOTONIC), else AUTH_DENIED. */
int auth_check(auth *a, const struct sockaddr *from, const char *authorization,
               uint64_t deadline_ns);
/* The bcrypt cost an unknown user's request pays (the configured users'
 * highest), for the log. */
int auth_dummy_cost(const auth *a);

#endif /* PCW_EXPORTER_AUTH_H */
