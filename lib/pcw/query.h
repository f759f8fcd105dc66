/* SPDX-License-Identifier: MIT */
/*
 * pcw/query.h - the query layer's header under its former name, kept so that
 * programs which include it still build. The layer's header is pcw/pdh.h,
 * named for its prefix pcw_pdh_ (docs/design.md, "Names"); new code includes
 * that.
 */
#ifndef PCW_QUERY_H
#define PCW_QUERY_H

#include "pdh.h"

#endif /* PCW_QUERY_H */
