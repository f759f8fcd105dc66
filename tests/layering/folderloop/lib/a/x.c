/* SPDX-License-Identifier: MIT */
int y(void);
int x(void);
int x(void)
{
    return y();
}
