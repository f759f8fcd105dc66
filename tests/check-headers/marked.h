/* SPDX-License-Identifier: MIT */
/* scripts/check-headers.sh must accept this header: its private names are
 * in a pcw-private section, or in the single-file provider's
 * implementation section. */
int pcw_public_function(void);
/* pcw-private-begin: the inline below reads it */
extern int pcw__private_variable;
/* pcw-private-end */
static inline int pcw_public_inline(void)
{
    return pcw__private_variable;
}
#if defined(PCW_PROVIDER_IMPLEMENTATION) && !defined(PCW__PROVIDER_IMPLEMENTED)
#define PCW__PROVIDER_IMPLEMENTED 1
static int pcw__private_function(void)
{
    return 0;
}
#endif
