/* SPDX-License-Identifier: MIT */
int lib_read(void);
int dump_status(int);
int dump_status(int s)
{
    return s;
}
int main(void)
{
    return lib_read();
}
