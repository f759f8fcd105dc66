/* SPDX-License-Identifier: MIT */
int high_c(void);
int util(void);
int util(void)
{
    return high_c();
}
