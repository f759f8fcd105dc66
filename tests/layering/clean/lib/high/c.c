/* SPDX-License-Identifier: MIT */
int low_b(void);
int high_c(void);
int high_c(void)
{
    return low_b();
}
