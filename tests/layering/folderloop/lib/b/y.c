/* SPDX-License-Identifier: MIT */
int z(void);
int y(void);
int y(void)
{
    return z();
}
