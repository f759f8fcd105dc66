/* SPDX-License-Identifier: MIT */
/* scripts/check-headers.sh must refuse this header: a private section
 * without a reason, and one without its end. */
/* pcw-private-begin: */
/* pcw-private-end */
/* pcw-private-begin: never closed */
extern int pcw__private_variable;
