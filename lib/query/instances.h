/* SPDX-License-Identifier: MIT */
/*
 * lib/query/instances.h - which instance each row of a sample is
 * (instances.c).
 */
#ifndef PCW_QUERY_INSTANCES_H
#define PCW_QUERY_INSTANCES_H

#include "set.h"

/* Map the current rows of s to instances (fast: nothing changed since
 * the last sample, every instance keeps its row); departures, #n. */
int pcw__q_map_instances(pcw__q_set *s, int fast);
/* Forget every instance, group and total of s. */
void pcw__q_instances_free(pcw__q_set *s);

#endif /* PCW_QUERY_INSTANCES_H */
