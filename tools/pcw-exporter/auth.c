/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/auth.c - basic authentication (auth.h).
 */
#define _GNU_SOURCE 1
#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "auth.h"

#define DIGEST 32

typedef struct entry {
    const char *name, *hash;    /* the configuration's */
    unsigned char good[DIGEST]; /* keyed digest of the last good password */
    int have;
} entry;

struct auth {
    pthread_mutex_t lock; /* guards entry.good / have */
    entry *users;
    size_t n;
    unsigned char key[32]; /* random per process: digests mean nothing elsewhere */
};

/* A bcrypt hash of nothing anyone knows, at the usual cost, for unknown
 * users: they cost as much as known ones. */
static const char dummy_hash[] = "$2b$10$QRyFK285L/AdvkxOeL64UOLd46fv8enbp0zAd25y1MapNdYlS5fQ6";

/* Constant-time comparison of n bytes. */
static int same(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

static int digest(const auth *a, const char *user, const char *pass, unsigned char out[DIGEST])
{
    size_t ul = strlen(user), pl = strlen(pass);
    size_t n = sizeof a->key + ul + 1 + pl;
    unsigned char *buf = malloc(n);
    if (!buf)
        return -1;
    memcpy(buf, a->key, sizeof a->key);
    memcpy(buf + sizeof a->key, user, ul + 1);
    memcpy(buf + sizeof a->key + ul + 1, pass, pl);
    int rc = gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, n, out);
    explicit_bzero(buf, n);
    free(buf);
    return rc == 0 ? 0 : -1;
}

/* bcrypt: does pass hash to `hash`? */
static int bcrypt_ok(const char *pass, const char *hash)
{
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return 0;
    const char *h = crypt_r(pass, hash, cd);
    size_t n = strlen(hash);
    int ok = h && h[0] != '*' && strlen(h) == n && same(h, hash, n);
    explicit_bzero(cd, sizeof *cd);
    free(cd);
    return ok;
}

int auth_open(auth **out, const web_config *wc)
{
    *out = NULL;
    if (!wc || !wc->nusers)
        return 0;
    auth *a = calloc(1, sizeof *a);
    if (!a || !(a->users = calloc(wc->nusers, sizeof *a->users)) ||
        getrandom(a->key, sizeof a->key, 0) != (ssize_t)sizeof a->key) {
        if (a)
            free(a->users);
        free(a);
        return -1;
    }
    for (size_t i = 0; i < wc->nusers; i++) {
        a->users[i].name = wc->users[i].name;
        a->users[i].hash = wc->users[i].hash;
    }
    a->n = wc->nusers;
    pthread_mutex_init(&a->lock, NULL);
    *out = a;
    return 0;
}

void auth_close(auth *a)
{
    if (!a)
        return;
    explicit_bzero(a->users, a->n * sizeof *a->users);
    free(a->users);
    explicit_bzero(a->key, sizeof a->key);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

int auth_check(auth *a, const char *user, const char *pass)
{
    if (!a || !user || !pass)
        return 0;
    entry *e = NULL;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->users[i].name, user) == 0)
            e = &a->users[i];
    if (!e) {
        (void)bcrypt_ok(pass, dummy_hash);
        return 0;
    }
    unsigned char d[DIGEST];
    if (digest(a, user, pass, d) != 0)
        return 0;
    pthread_mutex_lock(&a->lock);
    int cached = e->have && same(e->good, d, DIGEST);
    pthread_mutex_unlock(&a->lock);
    if (cached)
        return 1;
    if (!bcrypt_ok(pass, e->hash))
        return 0;
    pthread_mutex_lock(&a->lock);
    memcpy(e->good, d, DIGEST);
    e->have = 1;
    pthread_mutex_unlock(&a->lock);
    return 1;
}
