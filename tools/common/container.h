/* SPDX-License-Identifier: MIT */
/*
 * tools/common/container.h - the container a provider runs in, for the
 * tools' --containers (docs/containers.md): found by provider id among a
 * consumer's segments, and named the way `docker ps` and the exporter's
 * labels name it.
 *
 * Concurrency: none of its own; the consumer belongs to the caller.
 */
#ifndef PCW_TOOLS_CONTAINER_H
#define PCW_TOOLS_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#include <pcw/consumer.h>

/* The container of the provider whose id is `provider_id`; NULL if it is
 * in the consumer's own mount namespace or not among c's segments. *hint
 * (start at 0) remembers where the last one was: rows come provider by
 * provider, so a pass over them costs O(rows + segments). */
const pcw_container_info *tc_container(pcw_consumer *c, uint64_t provider_id, size_t *hint);

/* Its short name into buf: the runtime's id cut to 12 hex digits (as
 * `docker ps` shows it), else "ns:<inode of its mount namespace>" for one no runtime
 * named; "" for NULL (the consumer's own namespace). */
void tc_container_name(const pcw_container_info *ci, char *buf, size_t cap);

/* Does a container of short name `name` (tc_container_name; "" for the
 * consumer's own namespace) match the user's selector? "host": the
 * consumer's own namespace; else a prefix of the container id (its first
 * 12 digits are compared, as `docker ps` shows them) or the name. */
int tc_name_match(const char *name, const char *sel);

#endif /* PCW_TOOLS_CONTAINER_H */
