/* SPDX-License-Identifier: MIT */
int query(void);
int values(void);
int values(void)
{
    return query();
}
