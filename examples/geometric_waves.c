/*
 * examples/geometric_waves.c - the KCS "Geometric Waves" sample, ported
 * from PCW_CALLBACK to the pcw_create_instance model.
 *
 * Three instances of the multi-instance counterset "Geometric Waves"
 * publish a Triangle and a Square wave, recomputed once a second with the
 * sample's formulas (Index = seconds % 10):
 *
 *     Triangle = Min + Amplitude * |5 - Index| / 5
 *     Square   = Min + Amplitude * (Index < 5)
 *
 * Usage: geometric_waves [SECONDS]   (default: until SIGINT or SIGTERM)
 */
#include <pcw/provider.h>

#include <signal.h>
#include <stdlib.h>
#include <time.h>

typedef struct geometric_wave_values {
    uint32_t triangle;
    uint32_t square;
} geometric_wave_values;

static const struct {
    const char *name;
    uint32_t min, amplitude;
} waves[] = {{"Small Wave", 40, 20}, {"Medium Wave", 30, 40}, {"Large Wave", 20, 60}};

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    pcw_counter_desc counters[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    counters[0].id = 1, counters[0].name = "Triangle", counters[0].type = PERF_COUNTER_RAWCOUNT;
    counters[0].offset = offsetof(geometric_wave_values, triangle), counters[0].size = 4;
    counters[0].aggregate = PCW_AGGREGATE_AVERAGE;
    counters[0].description = "This counter displays triangle wave";
    counters[1].id = 2, counters[1].name = "Square Wave", counters[1].type = PERF_COUNTER_RAWCOUNT;
    counters[1].offset = offsetof(geometric_wave_values, square), counters[1].size = 4;
    counters[1].aggregate = PCW_AGGREGATE_AVERAGE;
    counters[1].description = "This counter displays Square Wave";
    pcw_registration_info info = {
        .version = PCW_VERSION_1,
        .name = "Geometric Waves",
        .description = "This counter set displays a Triangle and a Square wave",
        .instance_type = PCW_MULTI_AGGREGATE,
        .counter_count = 2,
        .counters = counters,
    };

    pcw_provider *prov;
    pcw_registration *reg;
    pcw_provider_options opt = {.name = "KernelCountersSample"};
    int rc = pcw_provider_open(&prov, &opt);
    if (rc != PCW_OK) {
        fprintf(stderr, "geometric_waves: cannot open provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    if ((rc = pcw_register(&reg, prov, &info)) != PCW_OK) {
        fprintf(stderr, "geometric_waves: cannot register: %s\n", pcw_status_str(rc));
        pcw_provider_close(prov);
        return 1;
    }
    pcw_instance *inst[3];
    geometric_wave_values *values[3];
    for (int i = 0; i < 3; i++) {
        pcw_data d = {NULL, sizeof(geometric_wave_values)};
        if ((rc = pcw_create_instance(&inst[i], reg, waves[i].name, 1, &d)) != PCW_OK) {
            fprintf(stderr, "geometric_waves: cannot create \"%s\": %s\n", waves[i].name,
                    pcw_status_str(rc));
            pcw_provider_close(prov);
            return 1;
        }
        values[i] = pcw_instance_block(inst[i], 0);
    }
    printf("geometric_waves: publishing in %s\n", pcw_provider_path(prov));
    fflush(stdout);

    for (long t = 0; !stop && (seconds < 0 || t <= seconds * 10); t++) {
        uint32_t index = (uint32_t)(time(NULL) % 10);
        for (int i = 0; i < 3; i++) {
            /* Plain stores straight into shared memory: nothing else. */
            values[i]->triangle =
                waves[i].min + waves[i].amplitude * (uint32_t)abs(5 - (int)index) / 5;
            values[i]->square = waves[i].min + waves[i].amplitude * (index < 5);
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < 3; i++)
        pcw_close_instance(inst[i]);
    pcw_unregister(reg);
    pcw_provider_close(prov);
    return 0;
}
