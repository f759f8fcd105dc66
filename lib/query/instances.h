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
int pcwq_map_instances(pcwq_set *s, int fast);
/* Forget every instance, group and total of s. */
void pcwq_instances_free(pcwq_set *s);

#endif /* PCW_QUERY_INSTANCES_H */
