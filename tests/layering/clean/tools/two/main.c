/* SPDX-License-Identifier: MIT */
int util(void);
int usage(void);
int main(void)
{
    return util() + usage();
}
