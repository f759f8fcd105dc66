/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/auth.h - HTTP basic authentication against the
 * bcrypt hashes of --web.config.file (libxcrypt's crypt_r).
 *
 * bcrypt is slow by design (tens of milliseconds at cost 10), and a
 * scraper sends the same credentials every time: a password that was
 * verified is remembered - as a keyed SHA-256 digest, never in clear - so
 * that later scrapes cost a hash, not a bcrypt. An unknown user costs one
 * bcrypt all the same, so that response times do not tell which users
 * exist.
 *
 * Concurrency: auth_check from any thread (the cache has its own lock).
 */
#ifndef PCW_EXPORTER_AUTH_H
#define PCW_EXPORTER_AUTH_H

#include "webconfig.h"

typedef struct auth auth;

/* NULL (and 0) when the configuration has no users. -1 on error. */
int auth_open(auth **out, const web_config *wc);
void auth_close(auth *a);
/* 1 when user/pass match a configured user, else 0. */
int auth_check(auth *a, const char *user, const char *pass);

#endif /* PCW_EXPORTER_AUTH_H */
