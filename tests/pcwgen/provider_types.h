/*
 * provider_types.h - the data-block types that kernel-style manifests name
 * (<struct type="...">): a program defines them before including the
 * header pcwgen generated, as the KCS sample's driver does in kcs.h.
 */
#ifndef PCWGEN_TEST_PROVIDER_TYPES_H
#define PCWGEN_TEST_PROVIDER_TYPES_H

#include <stdint.h>

/* kcs.man */
typedef struct GEOMETRIC_WAVE_VALUES {
    uint32_t Triangle;
    uint32_t Square;
} GEOMETRIC_WAVE_VALUES;

typedef struct TRIGNOMETRIC_WAVE_VALUES {
    uint32_t Constant;
    uint32_t Cosine;
    uint32_t Sine; /* out of manifest order: offsets come from offsetof */
} TRIGNOMETRIC_WAVE_VALUES;

/* tests/pcwgen/manifests/netstack.man: two blocks per instance. */
typedef struct NET_TRAFFIC_COUNTERS {
    uint64_t BytesReceived;
    uint64_t BytesSent;
    uint32_t PacketsReceived;
    uint32_t Pad; /* not a counter */
    uint64_t DpcTime100ns;
    uint64_t Processors;
} NET_TRAFFIC_COUNTERS;

typedef struct NET_ERROR_COUNTERS {
    uint32_t ReceiveErrors;
    uint32_t Reserved;
    uint64_t TransmitErrors;
} NET_ERROR_COUNTERS;

struct net_uptime {
    uint64_t LinkUpTime;
    uint64_t Now;
    uint64_t Frequency;
    uint32_t Resets;
};

#endif
