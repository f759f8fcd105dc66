/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/exporter_provider.c - a provider the pcw-exporter tests
 * (tests/test_exporter*.c) drive: countersets of every counter kind the
 * exporter maps, a counterset without instances, callback countersets
 * whose collection can be held up, and instance names that are hostile to
 * a text format.
 *
 *   exporter_provider [--name PROVIDER_NAME] [--as UID:GID] [--share GID]
 *                     [--silent] [--uid UID]
 *
 * --as runs it as that uid and gid (it starts as root), a member of the
 * --share group only; --share shares the segment with group GID
 * (pcw_provider_options.share_with_group and .group; 0: its own group).
 * With --silent the provider has a control callback that never answers:
 * every notification (ADD_COUNTER, ENUM_INSTANCES, COLLECT_START...)
 * waits until "quit" (at most 60 s), so its control channel is silent
 * while its segment reads as any other's. With --uid (root only) it runs
 * as that user and group, as another user's provider.
 *
 * Prints "ready <pid>", then serves one command per stdin line, answering
 * each with one line ("ok ..." or "err ..."); SET is decoded as NAME is
 * (below), so "Web\sServer" is "Web Server":
 *
 *   kinds SET           register SET (multi-instance) with the counters of
 *                       kinds[] below, one per kind the exporter maps
 *   single SET          register SET without instances (counters as kinds)
 *                       and create its one instance
 *   pair SET A B        register SET (multi-instance) with two
 *                       PERF_COUNTER_LARGE_RAWCOUNT counters named A and B
 *                       (decoded as instance names are, below)
 *   callback SET [alt]  register SET with a callback (counters "Items",
 *                       PERF_COUNTER_BULK_COUNT, and "Depth",
 *                       PERF_COUNTER_LARGE_RAWCOUNT) that adds cb-0, cb-1,
 *                       cb-2 with Items = 10 * (i + 1) + collections so far
 *                       and Depth = i + 1; with "alt" it adds them in the
 *                       opposite order on every other collection
 *   bulk SET N LEN      create N instances named "<i>-xxx...", LEN bytes each
 *                       (a scrape of N x the counters x about LEN bytes);
 *                       they are not addressable by the commands below
 *   create SET NAME     create an instance ("ok <id>"); NAME is decoded:
 *                       \n \" \\ \s (a space) \xHH; "-" is the empty name
 *   close SET NAME
 *   set SET NAME INDEX VALUE      counter INDEX := VALUE
 *   rate SET NAME INDEX PER_SEC   a thread keeps counter INDEX at
 *                                 PER_SEC x seconds since this command
 *                                 (CLOCK_MONOTONIC, every millisecond)
 *   poke SET NAME HEX   overwrite the instance name's bytes in the segment
 *                       with HEX (as many bytes as the name has): a name
 *                       that is not UTF-8, as only a hostile segment has
 *   block SET           SET's callback holds every COLLECT_DATA until...
 *   release SET         ...this (it also gives up after 60 s)
 *   collects SET        "ok <COLLECT_DATA calls so far>"
 *   held                "ok <notifications --silent has begun to hold so far>"
 *                       (a consumer is waiting on the silent channel)
 *   quit
 *
 * It closes the provider and exits 0 on "quit", at end of stdin, or on
 * SIGTERM.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/callback.h>
#include <pcw/provider.h>

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The "kinds" counterset: counter i at 8 * i, in its type's natural size
 * (4 or 8 bytes; the commands write it in that size), 8 for a 32-bit tick
 * type (PCW_COUNTER_TYPE_TICKS_32). */
static const struct kind {
    const char *name, *description;
    uint32_t type;
} kinds[] = {
    {"Level", "A level.", PERF_COUNTER_LARGE_RAWCOUNT},
    {"Requests", "Requests served.", PERF_COUNTER_BULK_COUNT},
    {"Hits", "Cache hits among lookups.", PERF_LARGE_RAW_FRACTION},
    {"Hits Base", "Lookups.", PERF_LARGE_RAW_BASE},
    {"Sampled", "Busy samples.", PERF_SAMPLE_FRACTION},
    {"Sampled Base", "Samples.", PERF_SAMPLE_BASE},
    {"Latency", "Time per request.", PERF_AVERAGE_TIMER},
    {"Latency Base", "Requests timed.", PERF_AVERAGE_BASE},
    {"Size", "Bytes per request.", PERF_AVERAGE_BULK},
    {"Size Base", "Requests sized.", PERF_AVERAGE_BASE},
    {"Busy", "Busy time.", PERF_COUNTER_TIMER},
    {"Busy Fine", "Busy time in 100 ns.", PERF_100NSEC_TIMER},
    {"Idle", "Idle time.", PERF_COUNTER_TIMER_INV},
    {"Queue", "Queue length integral.", PERF_COUNTER_LARGE_QUEUELEN_TYPE},
    {"Uptime", "Time since start.", PERF_ELAPSED_TIME},
    {"Changes", "Changes.", PERF_COUNTER_LARGE_DELTA},
    {"Workers Busy", "Worker busy time in 100 ns.", PERF_100NSEC_MULTI_TIMER},
    {"Workers", "Workers.", PERF_COUNTER_MULTI_BASE},
    {"Precise", "Busy time, own clock.", PERF_PRECISION_100NS_TIMER},
    {"Precise Stamp", "Its clock.", PERF_PRECISION_TIMESTAMP},
    {"Notes", NULL, PERF_COUNTER_NODATA},
};
#define NKINDS  (sizeof kinds / sizeof kinds[0])
#define MAX_SET 8
#define MAX_INS 64

typedef struct inst {
    char name[256];
    size_t len;
    pcw_instance *inst;
    unsigned char *block;
} inst;

typedef struct set {
    char name[128];
    pcw_registration *reg;
    uint32_t data_size;               /* the counters' extent */
    uint32_t ncounters, size[NKINDS]; /* counter i: 8 * i, size[i] bytes */
    int callback, alternate;
    atomic_int blocked;
    atomic_int collects;
    inst in[MAX_INS];
} set;

static set sets[MAX_SET];
static pcw_provider *prov;
static atomic_int stop;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    unsigned char *block;
    uint32_t index, size;
    double per_sec;
    uint64_t start_ns;
} rate;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Counter `index` of a block := v, in its size (4 or 8 bytes). */
static void store(unsigned char *block, uint32_t index, uint32_t size, uint64_t v)
{
    if (size == 4)
        pcw_u32_set((uint32_t *)(void *)(block + 8 * index), (uint32_t)v);
    else
        pcw_u64_set((uint64_t *)(void *)(block + 8 * index), v);
}

static void *rate_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        pthread_mutex_lock(&lock);
        if (rate.block) {
            double secs = (double)(now_ns() - rate.start_ns) / 1e9;
            store(rate.block, rate.index, rate.size, (uint64_t)(rate.per_sec * secs));
        }
        pthread_mutex_unlock(&lock);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    set *s = ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint64_t call = 0;
    if (type == PCW_CALLBACK_COLLECT_DATA) {
        call = (uint64_t)atomic_fetch_add(&s->collects, 1) + 1;
        /* Held up while blocked; polled so that quitting never waits long. */
        for (int t = 0; t < 6000 && atomic_load(&s->blocked) && !atomic_load(&stop); t++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    int flip = s->alternate && (call % 2) == 0;
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t i = flip ? 2 - k : k;
        char name[32];
        snprintf(name, sizeof name, "cb-%u", i);
        uint64_t v[2] = {10 * (i + 1) + call, i + 1};
        pcw_data d = {v, sizeof v};
        int rc = type == PCW_CALLBACK_COLLECT_DATA
                     ? pcw_add_instance(info->buffer, name, i, 1, &d)
                     : pcw_add_instance(info->buffer, name, i, 0, NULL);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

/* --silent: notifications it has begun to hold ("held"). */
static atomic_int held;

/* --silent: hold every control notification until the provider stops. */
static int silent_control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)req, (void)info, (void)ctx;
    atomic_fetch_add(&held, 1);
    for (int t = 0; t < 6000 && !atomic_load(&stop); t++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return PCW_OK;
}

static set *find_set(const char *name)
{
    for (int i = 0; i < MAX_SET; i++)
        if (sets[i].reg && strcmp(sets[i].name, name) == 0)
            return &sets[i];
    return NULL;
}

static inst *find_inst(set *s, const char *name, size_t len)
{
    for (int i = 0; i < MAX_INS; i++)
        if (s->in[i].inst && s->in[i].len == len && memcmp(s->in[i].name, name, len) == 0)
            return &s->in[i];
    return NULL;
}

/* "a\nb\x41" -> bytes; returns the length, or -1. */
static long decode(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p; p++) {
        if (n + 1 >= cap)
            return -1;
        if (*p != '\\') {
            out[n++] = *p;
            continue;
        }
        p++;
        if (*p == 'n')
            out[n++] = '\n';
        else if (*p == '"' || *p == '\\')
            out[n++] = *p;
        else if (*p == 's')
            out[n++] = ' ';
        else if (*p == 'x' && p[1] && p[2]) {
            char hex[3] = {p[1], p[2], 0};
            out[n++] = (char)strtoul(hex, NULL, 16);
            p += 2;
        } else
            return -1;
    }
    out[n] = 0;
    return (long)n;
}

static char pair_names[2][256];

static int do_register(set *s, const char *name, int type, int with_callback, int alternate,
                       int pair)
{
    pcw_counter_desc c[NKINDS];
    uint32_t n = 0;
    if (pair) {
        for (; n < 2; n++) {
            c[n] = pcw_counter_desc_default();
            c[n].id = n + 1, c[n].name = pair_names[n], c[n].offset = 8 * n;
        }
    } else if (with_callback) {
        c[0] = pcw_counter_desc_default();
        c[0].id = 1, c[0].name = "Items", c[0].type = PERF_COUNTER_BULK_COUNT, c[0].offset = 0;
        c[1] = pcw_counter_desc_default();
        c[1].id = 2, c[1].name = "Depth", c[1].offset = 8;
        n = 2;
    } else {
        for (; n < NKINDS; n++) {
            c[n] = pcw_counter_desc_default();
            c[n].id = n + 1, c[n].name = kinds[n].name, c[n].type = kinds[n].type;
            c[n].description = kinds[n].description;
            c[n].offset = 8 * n;
            /* A 32-bit tick type is 8 bytes (issue 27: 4 would wrap in 4.3 s). */
            if (PCW_COUNTER_TYPE_TICKS_32(c[n].type))
                c[n].size = 8;
        }
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    s->callback = with_callback;
    s->alternate = alternate;
    s->ncounters = n;
    for (uint32_t i = 0; i < n; i++) {
        /* Size 0: the type's natural size; the block ends with the last. */
        s->size[i] = c[i].size ? c[i].size : PCW_COUNTER_NATURAL_SIZE(c[i].type);
        s->data_size = 8 * i + s->size[i];
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = s->name,
                                  .description = "Counters for the exporter's tests.",
                                  .instance_type = (uint32_t)type,
                                  .counter_count = n,
                                  .counters = c,
                                  .callback = with_callback ? callback : NULL,
                                  .callback_context = s};
    return pcw_register(&s->reg, prov, &info);
}

static int create(set *s, const char *name, size_t len, uint32_t *id)
{
    for (int i = 0; i < MAX_INS; i++) {
        inst *x = &s->in[i];
        if (x->inst)
            continue;
        pcw_data d = {NULL, s->data_size};
        int rc = pcw_create_instance(&x->inst, s->reg, name, 1, &d);
        if (rc != PCW_OK)
            return rc;
        memcpy(x->name, name, len + 1);
        x->len = len;
        x->block = pcw_instance_block(x->inst, 0);
        *id = pcw_instance_id(x->inst);
        return PCW_OK;
    }
    return PCW_E_NO_MEMORY;
}

/* n instances with names of len bytes, kept until the provider closes. */
static int bulk(set *s, long n, long len)
{
    if (n < 0 || n > 100000 || len < 8 || len > PCW_MAX_INSTANCE_NAME_CHARS)
        return PCW_E_INVALID_PARAMETER;
    char name[PCW_MAX_INSTANCE_NAME_CHARS + 1];
    memset(name, 'x', (size_t)len);
    name[len] = 0;
    for (long i = 0; i < n; i++) {
        int k = snprintf(name, 8, "%ld", i);
        name[k] = '-';
        pcw_instance *in;
        pcw_data d = {NULL, s->data_size};
        int rc = pcw_create_instance(&in, s->reg, name, 1, &d);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

/* Overwrite the name bytes of x in the segment file (a shared mapping of
 * the same tmpfs pages consumers map). */
static int poke(const inst *x, const char *hex)
{
    size_t hl = strlen(hex);
    if (hl != 2 * x->len)
        return -1;
    int fd = open(pcw_provider_path(prov), O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return -1;
    unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    unsigned char *at = memmem(m, (size_t)st.st_size, x->name, x->len);
    int rc = -1;
    if (at && !memmem(at + 1, (size_t)st.st_size - (size_t)(at + 1 - m), x->name, x->len)) {
        for (size_t i = 0; i < x->len; i++) {
            char b[3] = {hex[2 * i], hex[2 * i + 1], 0};
            at[i] = (unsigned char)strtoul(b, NULL, 16);
        }
        rc = 0;
    }
    munmap(m, (size_t)st.st_size);
    return rc;
}

static void on_term(int sig)
{
    (void)sig;
    atomic_store(&stop, 1);
}

int main(int argc, char **argv)
{
    pcw_provider_options po = {0};
    unsigned as_uid = 0, as_gid = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            po.name = argv[++i];
        } else if (strcmp(argv[i], "--share") == 0 && i + 1 < argc) {
            po.share_with_group = 1;
            po.group = (gid_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--as") == 0 && i + 1 < argc &&
                   sscanf(argv[++i], "%u:%u", &as_uid, &as_gid) == 2) {
            continue;
        } else if (strcmp(argv[i], "--silent") == 0) {
            po.control_callback = silent_control;
        } else if (strcmp(argv[i], "--uid") == 0 && i + 1 < argc) {
            uid_t uid = (uid_t)atol(argv[++i]);
            if (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid(uid) != 0) {
                perror("exporter_provider: --uid");
                return 1;
            }
        } else {
            fprintf(stderr, "exporter_provider: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    /* Become the other user: groups first, while still root. */
    gid_t groups[1] = {po.group};
    if (as_uid && (setgroups(po.group ? 1 : 0, groups) != 0 || setresgid(as_gid, as_gid, as_gid) ||
                   setresuid(as_uid, as_uid, as_uid))) {
        perror("exporter_provider: --as");
        return 1;
    }
    int rc = pcw_provider_open(&prov, &po);
    if (rc != PCW_OK) {
        fprintf(stderr, "exporter_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    pthread_t th;
    pthread_create(&th, NULL, rate_thread, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[1024];
    while (!atomic_load(&stop) && fgets(line, sizeof line, stdin)) {
        char cmd[16] = "", sname[128] = "", iname[512] = "", arg[512] = "";
        double v = 0;
        int n = sscanf(line, "%15s %127s %511s %511s %lf", cmd, sname, iname, arg, &v);
        char name[256];
        long len = n >= 3 ? decode(iname, name, sizeof name) : 0;
        if (len == 1 && name[0] == '-') /* "-": the empty name */
            name[0] = 0, len = 0;
        char setname[128];
        if (n >= 2 && decode(sname, setname, sizeof setname) >= 0)
            snprintf(sname, sizeof sname, "%s", setname);
        set *s = n >= 2 ? find_set(sname) : NULL;
        inst *x = s && len >= 0 && n >= 3 ? find_inst(s, name, (size_t)len) : NULL;
        uint32_t id = 0;
        if (n >= 1 && strcmp(cmd, "quit") == 0)
            break;
        int pair = strcmp(cmd, "pair") == 0;
        if (pair && (n != 4 || decode(iname, pair_names[0], sizeof pair_names[0]) < 0 ||
                     decode(arg, pair_names[1], sizeof pair_names[1]) < 0)) {
            printf("err bad pair\n");
        } else if (n >= 2 && !s &&
                   (strcmp(cmd, "kinds") == 0 || strcmp(cmd, "single") == 0 ||
                    strcmp(cmd, "callback") == 0 || pair)) {
            int slot = 0;
            while (slot < MAX_SET && sets[slot].reg)
                slot++;
            int cb = strcmp(cmd, "callback") == 0;
            int type = strcmp(cmd, "single") == 0 ? PCW_SINGLE_INSTANCE : PCW_MULTI_INSTANCE;
            rc = slot == MAX_SET ? PCW_E_NO_MEMORY
                                 : do_register(&sets[slot], sname, type, cb,
                                               n >= 3 && strcmp(iname, "alt") == 0, pair);
            if (rc == PCW_OK && type == PCW_SINGLE_INSTANCE)
                rc = create(&sets[slot], "", 0, &id);
            if (rc == PCW_OK)
                printf("ok\n");
            else
                printf("err %s\n", pcw_status_str(rc));
        } else if (n == 4 && s && strcmp(cmd, "bulk") == 0) {
            printf(bulk(s, strtol(iname, NULL, 10), strtol(arg, NULL, 10)) == PCW_OK
                       ? "ok\n"
                       : "err bulk\n");
        } else if (n == 3 && s && len >= 0 && !x && strcmp(cmd, "create") == 0) {
            rc = create(s, name, (size_t)len, &id);
            if (rc == PCW_OK)
                printf("ok %u\n", (unsigned)id);
            else
                printf("err %s\n", pcw_status_str(rc));
        } else if (n == 3 && x && strcmp(cmd, "close") == 0) {
            pthread_mutex_lock(&lock);
            if (rate.block == x->block)
                rate.block = NULL;
            pthread_mutex_unlock(&lock);
            pcw_close_instance(x->inst);
            x->inst = NULL;
            printf("ok\n");
        } else if (n == 5 && x && strcmp(cmd, "set") == 0 && x->block &&
                   strtoul(arg, NULL, 10) < s->ncounters) {
            uint32_t k = (uint32_t)strtoul(arg, NULL, 10);
            store(x->block, k, s->size[k], (uint64_t)v);
            printf("ok\n");
        } else if (n == 5 && x && strcmp(cmd, "rate") == 0 &&
                   strtoul(arg, NULL, 10) < s->ncounters) {
            pthread_mutex_lock(&lock);
            rate.block = x->block, rate.index = (uint32_t)strtoul(arg, NULL, 10);
            rate.size = s->size[rate.index];
            rate.per_sec = v, rate.start_ns = now_ns();
            pthread_mutex_unlock(&lock);
            printf("ok\n");
        } else if (n == 4 && x && strcmp(cmd, "poke") == 0) {
            if (poke(x, arg) == 0)
                printf("ok\n");
            else
                printf("err cannot poke\n");
        } else if (n == 2 && s && s->callback && strcmp(cmd, "block") == 0) {
            atomic_store(&s->blocked, 1);
            printf("ok\n");
        } else if (n == 2 && s && s->callback && strcmp(cmd, "release") == 0) {
            atomic_store(&s->blocked, 0);
            printf("ok\n");
        } else if (n == 2 && s && strcmp(cmd, "collects") == 0) {
            printf("ok %d\n", atomic_load(&s->collects));
        } else if (n == 1 && strcmp(cmd, "held") == 0) {
            printf("ok %d\n", atomic_load(&held));
        } else {
            printf("err bad command: %s", line);
            if (!strchr(line, '\n'))
                printf("\n");
        }
        fflush(stdout);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < MAX_SET; i++)
        atomic_store(&sets[i].blocked, 0);
    pthread_join(th, NULL);
    pcw_provider_close(prov);
    return 0;
}
