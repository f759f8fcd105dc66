/* SPDX-License-Identifier: MIT */
/*
 * lib/query/container.h - paths that name a container (container.c).
 */
#ifndef PCW_QUERY_CONTAINER_H
#define PCW_QUERY_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#include "pdh.h"

/* Resolve h->path.container to one container among the consumer's
 * providers (h->ctr_id, h->ctr_ns): PCW_OK, or PCW_E_NOT_FOUND (none) or
 * PCW_E_INVALID_NAME (a prefix of two containers' ids) with *err. */
int pcw__q_container_resolve(pcw_pdh *q, pcw_pdh_counter *h, pcw_path_error *err);
/* Is the provider `provider_id` in h's container? *hint (start at 0)
 * remembers the last one's segment: entries come provider by provider. */
int pcw__q_in_container(const pcw_pdh_counter *h, uint64_t provider_id, size_t *hint);

#endif /* PCW_QUERY_CONTAINER_H */
