/* SPDX-License-Identifier: MIT */
int dump_status(int);
int lib_read(void);
int lib_read(void)
{
    return dump_status(1);
}
