/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/names.h - the parts of metric names made from pcw
 * names (names.c): the rule docs/exporter.md writes down ("Metric names
 * and labels"), so that what perfmon names a counter passes Prometheus'
 * own lint (promtool check metrics).
 *
 * Pure functions of their input: any thread.
 */
#ifndef PCW_EXPORTER_NAMES_H
#define PCW_EXPORTER_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "mapping.h"

/* At most this many bytes in a part (and a NUL after them). */
#define NAMES_PART_MAX 120

/* A counterset's part: words of ASCII letters and digits, lowercased and
 * joined by '_'; '%' is the word "percent", '/' the word "per"; an
 * apostrophe joins ("Provider's" is "providers"); abbreviated units are
 * spelled out ("sec" is "seconds", "second" after "per"; "ms"
 * "milliseconds"...); the words "counter", "gauge", "histogram" and
 * "summary" are left out. Returns the length: 0 when nothing is left. */
size_t names_set(const char *name, char *out);

/* A counter's part, for a counter of `type` whose families rule `r` gives:
 * the words as names_set makes them; then at the end, words only some
 * metric types may end with ("total", "count", "sum", "bucket") and, when
 * its value family is in seconds, "seconds" (the unit is added after) are
 * left out. With `display`, so are the words that say how PDH displays a
 * value the exporter leaves raw: a rate suffix ("per second") when the
 * value family is a Prometheus counter (its rate is PromQL's rate()),
 * "percent" when the type displays as a percentage, and a final "ratio"
 * of a fraction (its families are its numerator and base). *shortened
 * (may be NULL) says whether `display` left a word out, i.e. whether the
 * part without it differs. Returns the length: 0 when nothing is left. */
size_t names_counter(const char *name, uint32_t type, const type_rule *r, int display, char *out,
                     int *shortened);

#endif /* PCW_EXPORTER_NAMES_H */
