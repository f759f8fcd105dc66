/* SPDX-License-Identifier: MIT */
int fetch(int);
int query(void);
int query(void)
{
    return fetch(0);
}
