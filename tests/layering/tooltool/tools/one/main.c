/* SPDX-License-Identifier: MIT */
int two_helper(void);
int main(void)
{
    return two_helper();
}
