/* SPDX-License-Identifier: MIT */
int low_a(void);
int low_b(void);
int low_b(void)
{
    return low_a() + 1;
}
