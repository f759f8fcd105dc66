/* SPDX-License-Identifier: MIT */
/*
 * pcw/version.h - pcw's version, for programs and for pcw's own build.
 *
 * This is the one place the version is written: the three numbers below.
 * Everything else derives from them: PCW_VERSION_STRING, which every pcw
 * tool prints for --version ("pcwdump (pcw) 0.5.0"), and the Version of the
 * pkg-config files (the Makefile reads the numbers from this file when it
 * installs lib/pcw.pc.in and lib/pcw-provider.pc.in). tests/test_version.c
 * checks that the tools and the .pc templates agree with this file.
 *
 * A program can test for a version at compile time:
 *     #if PCW_VERSION_NUMBER >= PCW_VERSION_ENCODE(0, 2, 0)
 *
 * Concurrency: constants only.
 */
#ifndef PCW_VERSION_H
#define PCW_VERSION_H

#define PCW_VERSION_MAJOR 0
#define PCW_VERSION_MINOR 5
#define PCW_VERSION_PATCH 0

/* (major, minor, patch) as one integer that orders like the versions. */
#define PCW_VERSION_ENCODE(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))
#define PCW_VERSION_NUMBER                                                                         \
    PCW_VERSION_ENCODE(PCW_VERSION_MAJOR, PCW_VERSION_MINOR, PCW_VERSION_PATCH)

#define PCW_VERSION__STR2(x) #x
#define PCW_VERSION__STR(x)  PCW_VERSION__STR2(x)
/* "MAJOR.MINOR.PATCH", e.g. "0.2.0". */
#define PCW_VERSION_STRING                                                                         \
    PCW_VERSION__STR(PCW_VERSION_MAJOR)                                                            \
    "." PCW_VERSION__STR(PCW_VERSION_MINOR) "." PCW_VERSION__STR(PCW_VERSION_PATCH)

#endif /* PCW_VERSION_H */
