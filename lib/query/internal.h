/* SPDX-License-Identifier: MIT */
/*
 * lib/query/internal.h - every private header of the query layer at once,
 * for code that still includes this older all-in-one header (logcook.c,
 * which came from lib/history). New code includes the module headers it
 * uses instead (docs/design.md, "The query
 * layer's modules").
 */
#ifndef PCW_QUERY_INTERNAL_H
#define PCW_QUERY_INTERNAL_H

#include "aggregate.h"
#include "budget.h"
#include "container.h"
#include "cook.h"
#include "fetch.h"
#include "hist_fused.h"
#include "hist_query.h"
#include "histogram.h"
#include "instances.h"
#include "kernels.h"
#include "match.h"
#include "notify.h"
#include "path.h"
#include "pdh.h"
#include "rows.h"
#include "set.h"
#include "sink.h"
#include "totals.h"
#include "util.h"
#include "values.h"
#include "walk.h"

#endif /* PCW_QUERY_INTERNAL_H */
