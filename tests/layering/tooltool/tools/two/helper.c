/* SPDX-License-Identifier: MIT */
int two_helper(void);
int two_helper(void)
{
    return 0;
}
