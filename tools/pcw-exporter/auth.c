/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/auth.c - basic authentication (auth.h).
 */
#define _GNU_SOURCE 1
#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "auth.h"
#include "collector.h" /* mono_ns, lock_until */

#define DIGEST 32

typedef struct entry {
    const char *name, *hash;    /* the configuration's */
    unsigned char good[DIGEST]; /* keyed digest of the last good password */
    int have;
} entry;

/* A client address's token bucket (auth.h). */
typedef struct bucket {
    unsigned char addr[16]; /* IPv6, or IPv4 as ::ffff:a.b.c.d */
    int used;
    double tokens;
    uint64_t last_ns; /* when tokens was brought up to date */
} bucket;

struct auth {
    pthread_mutex_t lock;        /* guards entry.good / have and buckets[] */
    pthread_mutex_t bcrypt_lock; /* one bcrypt at a time (auth.h) */
    entry *users;
    size_t n;
    /* A bcrypt setting ($2b$NN$ and a salt) at the users' highest cost:
     * crypt_r of any password with it costs what a known user's does, and
     * its result, 60 characters, never equals the 29-character setting. */
    char dummy[CRYPT_GENSALT_OUTPUT_SIZE];
    int dummy_cost;
    unsigned char key[32]; /* random per process: digests mean nothing elsewhere */
    bucket buckets[AUTH_ADDRESSES];
};

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

/* bcrypt: does pass hash to `hash`? 1 or 0; -1 when the bcrypts of other
 * requests held it past deadline_ns (it never began). One at a time
 * (auth.h). */
static int bcrypt_ok(auth *a, const char *pass, const char *hash, uint64_t deadline_ns)
{
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return 0;
    if (lock_until(&a->bcrypt_lock, deadline_ns) != 0) {
        free(cd);
        return -1;
    }
    const char *h = crypt_r(pass, hash, cd);
    pthread_mutex_unlock(&a->bcrypt_lock);
    size_t n = strlen(hash);
    int ok = h && h[0] != '*' && strlen(h) == n && same(h, hash, n);
    explicit_bzero(cd, sizeof *cd);
    free(cd);
    return ok;
}

/* A hash's cost: "$2b$NN$..." (webconfig.c checked the form). */
static int cost_of(const char *hash)
{
    return (hash[4] - '0') * 10 + (hash[5] - '0');
}

int auth_open(auth **out, const web_config *wc)
{
    *out = NULL;
    if (!wc || !wc->nusers)
        return 0;
    auth *a = calloc(1, sizeof *a);
    if (!a || !(a->users = calloc(wc->nusers, sizeof *a->users)) ||
        getrandom(a->key, sizeof a->key, 0) != (ssize_t)sizeof a->key)
        goto fail;
    for (size_t i = 0; i < wc->nusers; i++) {
        a->users[i].name = wc->users[i].name;
        a->users[i].hash = wc->users[i].hash;
        if (cost_of(wc->users[i].hash) > a->dummy_cost)
            a->dummy_cost = cost_of(wc->users[i].hash);
    }
    a->n = wc->nusers;
    /* A random salt from the system's random source (NULL). */
    if (!crypt_gensalt_rn("$2b$", (unsigned long)a->dummy_cost, NULL, 0, a->dummy, sizeof a->dummy))
        goto fail;
    pthread_mutex_init(&a->lock, NULL);
    pthread_mutex_init(&a->bcrypt_lock, NULL);
    *out = a;
    return 0;
fail:
    if (a)
        free(a->users);
    free(a);
    return -1;
}

void auth_close(auth *a)
{
    if (!a)
        return;
    explicit_bzero(a->users, a->n * sizeof *a->users);
    free(a->users);
    explicit_bzero(a->key, sizeof a->key);
    pthread_mutex_destroy(&a->lock);
    pthread_mutex_destroy(&a->bcrypt_lock);
    free(a);
}

int auth_dummy_cost(const auth *a)
{
    return a ? a->dummy_cost : 0;
}

/* Take a bcrypt token of the address `from` (0), or say it has none left
 * (-1). Under a->lock. */
static int take_token(auth *a, const struct sockaddr *from)
{
    unsigned char key[16] = {0};
    if (from && from->sa_family == AF_INET6) {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)from)->sin6_addr;
        /* An IPv6 client by its /64 (auth.h); an IPv4 one that a dual-stack
         * socket maps (::ffff:a.b.c.d) by its whole address, as on IPv4. */
        memcpy(key, in6, IN6_IS_ADDR_V4MAPPED(in6) ? 16 : AUTH_IPV6_PREFIX / 8);
    } else if (from && from->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)from)->sin_addr, 4);
    }
    uint64_t now = mono_ns();
    bucket *b = NULL, *lru = &a->buckets[0];
    for (size_t i = 0; i < AUTH_ADDRESSES && !b; i++) {
        bucket *x = &a->buckets[i];
        if (x->used && memcmp(x->addr, key, 16) == 0)
            b = x;
        else if (!x->used || (lru->used && x->last_ns < lru->last_ns))
            lru = x;
    }
    if (!b) { /* a new address takes a free or the least recently used bucket */
        b = lru;
        memcpy(b->addr, key, 16);
        b->used = 1;
        b->tokens = AUTH_BURST;
        b->last_ns = now;
    }
    b->tokens += (double)(now - b->last_ns) / 1e9 / AUTH_REFILL_S;
    if (b->tokens > AUTH_BURST)
        b->tokens = AUTH_BURST;
    b->last_ns = now;
    if (b->tokens < 1)
        return -1;
    b->tokens -= 1;
    return 0;
}

/* "Basic <base64 of user:pass>" -> user and pass, NUL-terminated, in one
 * allocation (*cred, to wipe and gnutls_free). -1 when malformed or when
 * either holds a NUL (it would cut the string short), or the password is
 * longer than bcrypt reads. */
static int decode(const char *h, gnutls_datum_t *cred, const char **user, const char **pass)
{
    if (!h || strncasecmp(h, "Basic ", 6) != 0)
        return -1;
    h += 6;
    while (*h == ' ')
        h++;
    size_t n = strlen(h);
    while (n && (h[n - 1] == ' ' || h[n - 1] == '\t'))
        n--;
    gnutls_datum_t in = {(unsigned char *)h, (unsigned)n};
    if (n == 0 || n > 4096 || gnutls_base64_decode2(&in, cred) != 0)
        return -1;
    /* The decoded bytes are not NUL-terminated: room for it by reusing
     * the ':' (user) and one more byte (pass). */
    unsigned char *p = cred->data, *colon = memchr(p, ':', cred->size);
    size_t plen = colon ? cred->size - (size_t)(colon - p) - 1 : 0;
    unsigned char *t = colon ? gnutls_malloc(cred->size + 1) : NULL;
    if (!t || memchr(p, 0, cred->size) || plen > AUTH_PASS_MAX) {
        gnutls_free(t);
        explicit_bzero(p, cred->size);
        gnutls_free(p);
        cred->data = NULL;
        return -1;
    }
    memcpy(t, p, cred->size);
    t[colon - p] = 0;
    t[cred->size] = 0;
    explicit_bzero(p, cred->size);
    gnutls_free(p);
    cred->data = t;
    cred->size += 1;
    *user = (const char *)t;
    *pass = (const char *)t + (colon - p) + 1;
    return 0;
}

static int check(auth *a, const struct sockaddr *from, const char *user, const char *pass,
                 uint64_t deadline_ns)
{
    entry *e = NULL;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->users[i].name, user) == 0)
            e = &a->users[i];
    unsigned char d[DIGEST];
    if (e && digest(a, user, pass, d) != 0)
        return AUTH_DENIED;
    pthread_mutex_lock(&a->lock);
    int cached = e && e->have && same(e->good, d, DIGEST);
    /* Known or not, a bcrypt costs the address a token: the same for both,
     * so that the refusal does not tell either. */
    int limited = !cached && take_token(a, from) != 0;
    pthread_mutex_unlock(&a->lock);
    if (cached)
        return AUTH_OK;
    if (limited)
        return AUTH_LIMITED;
    /* An unknown user's bcrypt, which never matches, is waited for as a
     * known one's is: a refusal at the deadline does not tell either. */
    int ok = bcrypt_ok(a, pass, e ? e->hash : a->dummy, deadline_ns);
    if (ok < 0)
        return AUTH_BUSY;
    if (!e || !ok)
        return AUTH_DENIED;
    pthread_mutex_lock(&a->lock);
    memcpy(e->good, d, DIGEST);
    e->have = 1;
    pthread_mutex_unlock(&a->lock);
    return AUTH_OK;
}

int auth_check(auth *a, const struct sockaddr *from, const char *authorization,
               uint64_t deadline_ns)
{
    if (!a)
        return AUTH_DENIED;
    gnutls_datum_t cred = {NULL, 0};
    const char *user, *pass;
    if (decode(authorization, &cred, &user, &pass) != 0)
        return AUTH_DENIED;
    int rc = check(a, from, user, pass, deadline_ns);
    explicit_bzero(cred.data, cred.size);
    gnutls_free(cred.data);
    return rc;
}
