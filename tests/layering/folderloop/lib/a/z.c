/* SPDX-License-Identifier: MIT */
int z(void);
int z(void)
{
    return 0;
}
