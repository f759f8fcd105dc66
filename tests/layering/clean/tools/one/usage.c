/* SPDX-License-Identifier: MIT */
int usage(void);
int usage(void)
{
    return 1;
}
