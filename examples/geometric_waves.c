/* SPDX-License-Identifier: MIT */
/*
 * examples/geometric_waves.c - the KCS "Geometric Waves" sample, ported
 * from PCW_CALLBACK to the pcw_create_instance model.
 *
 * The counterset comes from the sample's own manifest, examples/manifests/
 * kcs.man, compiled by pcwgen into kcs.h (prefix Kcs), exactly as CTRPP
 * would for the Windows driver: the program supplies the manifest's struct
 * type, GEOMETRIC_WAVE_VALUES, and the generated helpers take it from there.
 *
 * Three instances publish a Triangle and a Square wave, recomputed once a
 * second with the sample's formulas (Index = seconds % 10):
 *
 *     Triangle = Min + Amplitude * |5 - Index| / 5
 *     Square   = Min + Amplitude * (Index < 5)
 *
 * Usage: geometric_waves [SECONDS]   (default: until SIGINT or SIGTERM)
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* The manifest's <struct name="GeometricWaveValues" type="GEOMETRIC_WAVE_VALUES"/>. */
typedef struct GEOMETRIC_WAVE_VALUES {
    uint32_t Triangle;
    uint32_t Square;
} GEOMETRIC_WAVE_VALUES;

/* The manifest's other counterset, "Trignometric Waves", names this struct;
 * the header checks its fields, though this example does not publish it. */
typedef struct TRIGNOMETRIC_WAVE_VALUES {
    uint32_t Sine;
    uint32_t Cosine;
    uint32_t Constant;
} TRIGNOMETRIC_WAVE_VALUES;

#include "kcs.h" /* generated: pcwgen -prefix Kcs examples/manifests/kcs.man */

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

/* The sample's KcsAddGeometricInstance arithmetic. */
static void compute(GEOMETRIC_WAVE_VALUES *v, uint32_t min, uint32_t amplitude)
{
    uint32_t index = (uint32_t)(time(NULL) % 10);
    v->Triangle = min + amplitude * (uint32_t)abs(5 - (int)index) / 5;
    v->Square = min + amplitude * (index < 5);
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    pcw_provider *prov;
    pcw_provider_options opt = KcsKernelCountersSample_ProviderOptions();
    int rc = pcw_provider_open(&prov, &opt);
    if (rc != PCW_OK) {
        char why[PATH_MAX + 512];
        fprintf(stderr, "geometric_waves: cannot open provider: %s\n",
                pcw_provider_open_error(rc, &opt, why, sizeof why));
        return 1;
    }
    /* No callback: this port publishes instances instead (PcwCreateInstance). */
    if ((rc = KcsRegisterGeometricWave(prov, NULL, NULL)) != PCW_OK) {
        fprintf(stderr, "geometric_waves: cannot register: %s\n", pcw_status_str(rc));
        pcw_provider_close(prov);
        return 1;
    }
    pcw_instance *inst[3];
    GEOMETRIC_WAVE_VALUES *values[3];
    for (int i = 0; i < 3; i++) {
        GEOMETRIC_WAVE_VALUES initial;
        compute(&initial, waves[i].min, waves[i].amplitude);
        if ((rc = KcsCreateGeometricWave(&inst[i], waves[i].name, &initial, &values[i])) !=
            PCW_OK) {
            fprintf(stderr, "geometric_waves: cannot create \"%s\": %s\n", waves[i].name,
                    pcw_status_str(rc));
            pcw_provider_close(prov);
            return 1;
        }
    }
    printf("geometric_waves: publishing in %s\n", pcw_provider_path(prov));
    fflush(stdout);

    for (long t = 0; !stop && (seconds < 0 || t < seconds * 10); t++) {
        for (int i = 0; i < 3; i++)
            compute(values[i], waves[i].min, waves[i].amplitude); /* plain stores */
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < 3; i++)
        KcsCloseGeometricWave(inst[i]);
    KcsUnregisterGeometricWave();
    pcw_provider_close(prov);
    return 0;
}
