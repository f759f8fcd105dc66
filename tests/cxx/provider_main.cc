/* SPDX-License-Identifier: MIT */
/*
 * tests/cxx/provider_main.cc - the C++ provider's first translation unit:
 * the one that compiles pcw's provider implementation, and main().
 *
 * Registers "Cxx Web" (web_counters.cc), creates instance "cxx", serves 42
 * requests (21 hits), prints "ready <segment path>" and waits for a line on
 * stdin (or its end); then tears down in the documented order and exits 0
 * if every step returned PCW_OK, else prints what failed and exits 1.
 */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <stdio.h>

#include "web.h"

int main()
{
    pcw_provider *prov = nullptr;
    pcw_registration *reg = nullptr;
    pcw_instance *site = nullptr;
    char why[256];
    int rc = pcw_provider_open(&prov, nullptr);
    if (rc != PCW_OK) {
        fprintf(stderr, "cxx_provider: %s\n",
                pcw_provider_open_error(rc, nullptr, why, sizeof why));
        return 1;
    }
    if ((rc = web_register(prov, &reg, why, sizeof why)) != PCW_OK) {
        fprintf(stderr, "cxx_provider: %s\n", why);
        pcw_provider_close(prov);
        return 1;
    }
    pcw_data block = {nullptr, sizeof(web_counters)};
    if ((rc = pcw_create_instance(&site, reg, "cxx", 1, &block)) != PCW_OK) {
        fprintf(stderr, "cxx_provider: %s\n", pcw_status_str(rc));
        pcw_provider_close(prov);
        return 1;
    }
    auto *w = static_cast<web_counters *>(pcw_instance_block(site, 0));
    for (uint32_t i = 0; i < 42; i++)
        web_serve(w, i % 2);
    printf("ready %s\n", pcw_provider_path(prov));
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin))
        line[0] = 0;
    /* Teardown: instance, registration, provider. */
    int a = pcw_close_instance(site), b = pcw_unregister(reg), c = pcw_provider_close(prov);
    if (a != PCW_OK || b != PCW_OK || c != PCW_OK) {
        fprintf(stderr, "cxx_provider: teardown %d %d %d\n", a, b, c);
        return 1;
    }
    return 0;
}
