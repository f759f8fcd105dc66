/* SPDX-License-Identifier: MIT */
/*
 * lib/query/internal.h - every private header of the query layer, for
 * code outside lib/query that reaches inside it (the white-box tests,
 * lib/history's finishing of a logged value). A file of lib/query
 * includes the module headers it uses, never this one
 * (docs/design.md, "lib/query": the modules and who calls whom).
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
