/* SPDX-License-Identifier: MIT */
int low_a(void);
int low_a(void)
{
    return 1;
}
