/* SPDX-License-Identifier: MIT */
/*
 * tu2.h - functions of the provider tests' second translation units
 * (*_tu2.c). Each includes the same generated header as its test, so the
 * two together check that the header links when included twice, and that
 * both see one registration handle (the weak definition).
 */
#ifndef PCWGEN_TEST_TU2_H
#define PCWGEN_TEST_TU2_H

#include <stdint.h>

#include <pcw/provider.h>

/* kcs_tu2.c */
pcw_registration *kcs_tu2_geometric_handle(void);
int kcs_tu2_initialize(pcw_provider *prov);
int kcs_tu2_create_wave(pcw_instance **inst, const char *name, uint32_t min, uint32_t amplitude);
int kcs_tu2_add_wave(pcw_buffer *buffer, const char *name, uint32_t id, int with_values);

/* ucs_tu2.c */
pcw_registration *ucs_tu2_trig_handle(void);
int ucs_tu2_create_trig(pcw_instance **inst);

/* extra_tu2.c */
pcw_registration *extra_tu2_adapter_handle(void);
int extra_tu2_initialize_all(pcw_provider *prov);
void extra_tu2_cleanup_all(void);
int extra_tu2_add_adapter(pcw_buffer *buffer, const char *name, uint32_t id, int which);

/* xdp_tu2.c */
pcw_registration *xdp_tu2_rx_queue_handle(void);
int xdp_tu2_create_rx_queue(pcw_instance **inst, const char *name, uint64_t delivered);

/* hist_tu2.c */
pcw_registration *hist_tu2_handle(void);
void hist_tu2_observe_latency(pcw_instance *inst, uint64_t ns);

#endif
