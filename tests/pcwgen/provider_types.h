/* SPDX-License-Identifier: MIT */
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

/* tests/pcwgen/manifests/histogram.man: a kernel-style histogram field,
 * declared before the generated header as an array of its words (pcwgen
 * checks the size: schema -1, 2^-20 .. 2^4 s is 12 buckets, 14 words). */
#include <pcw/histogram.h>
typedef struct WEB_QUEUE_VALUES {
    uint32_t Depth;
    uint32_t Pad;
    uint64_t Wait[PCW_HISTOGRAM_WORDS(-1, -20, 4)];
} WEB_QUEUE_VALUES;

/* xdppcw.man (microsoft/xdp-for-windows; tests/pcwgen/manifests has a
 * stand-in): one struct per counterset, UINT64 fields under
 * perf_counter_rawcount counters, as XDP's xdppcw.h declares them. The
 * order differs from the manifest's: offsets come from offsetof. */
typedef struct XDP_PCW_RX_QUEUE {
    uint64_t XskFramesDelivered;
    uint64_t XskFramesDropped;
    uint64_t XskFramesTruncated;
    uint64_t XskInvalidDescriptors;
    uint64_t InspectBatches;
    uint64_t InspectFramesPassed;
    uint64_t InspectFramesDropped;
    uint64_t InspectFramesRedirected;
    uint64_t InspectFramesForwarded;
    uint64_t InspectFramesDiscontiguous;
} XDP_PCW_RX_QUEUE;

typedef struct XDP_PCW_LWF_RX_QUEUE {
    uint64_t MappingFailures;
    uint64_t LinearizationFailures;
    uint64_t ForwardingFailuresAllocation;
    uint64_t ForwardingFailuresAllocationLimit;
    uint64_t ForwardingFailuresRscInvalidHeaders;
    uint64_t ForwardingNbsRequested;
    uint64_t ForwardingNbsSent;
} XDP_PCW_LWF_RX_QUEUE;

typedef struct XDP_PCW_TX_QUEUE {
    uint64_t XskInvalidDescriptors;
    uint64_t InjectionBatches;
    uint64_t QueueDepth;
} XDP_PCW_TX_QUEUE;

typedef struct XDP_PCW_LWF_TX_QUEUE {
    uint64_t FramesDroppedPause;
    uint64_t FramesDroppedNic;
} XDP_PCW_LWF_TX_QUEUE;

#endif
