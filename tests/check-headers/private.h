/* SPDX-License-Identifier: MIT */
/* scripts/check-headers.sh must refuse this header: it declares private
 * names (one of each kind) outside a pcw-private section. */
#define PCW__PRIVATE_MACRO 1
typedef struct pcw__private_struct {
    int x;
} pcw__private_typedef;
enum { PCW__PRIVATE_ENUMERATOR = 1 };
extern int pcw__private_variable;
int pcw__private_function(void);
static inline int pcw__private_inline(void)
{
    return 0;
}
/* Public names, and a private one used (not declared): accepted. */
#define PCW_PUBLIC_MACRO PCW__ZERO
int pcw_public_function(void);
