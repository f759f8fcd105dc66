/* SPDX-License-Identifier: MIT */
int leaf(void);
int leaf(void)
{
    return 0;
}
