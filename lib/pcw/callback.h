/*
 * pcw/callback.h - callback countersets and the provider control channel
 * (PCW_CALLBACK, PERFLIB ControlCallback). Included by pcw/provider.h.
 *
 * NOT YET IMPLEMENTED: this is the interface placeholder that the core
 * needs to build; the control channel is the subject of its own issue.
 */
#ifndef PCW_CALLBACK_H
#define PCW_CALLBACK_H

#include "provider.h"

static inline int pcw__control_start(pcw_provider *p)
{
    (void)p;
    return PCW_OK;
}

static inline void pcw__control_stop(pcw_provider *p)
{
    (void)p;
}

#endif /* PCW_CALLBACK_H */
