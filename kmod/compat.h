/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels kring builds against, behind one
 * name each. Logic files include this header and never test
 * LINUX_VERSION_CODE themselves.
 */
#ifndef _KRING_COMPAT_H
#define _KRING_COMPAT_H

#include <linux/version.h>
#include <linux/module.h>

/*
 * KRING_EXPORT_FOR_KUNIT(sym): export @sym to the KUnit test module only.
 * kunit/visibility.h appeared in 6.2; kernels before it have no KUnit build
 * of kring, so the export is simply dropped there.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#include <kunit/visibility.h>
#define KRING_EXPORT_FOR_KUNIT(sym)	EXPORT_SYMBOL_IF_KUNIT(sym)
#else
#define KRING_EXPORT_FOR_KUNIT(sym)
#endif

/*
 * KRING_IMPORT_KUNIT_NS(): the test module's import of that namespace.
 * 6.13 turned the namespace argument of MODULE_IMPORT_NS into a string.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define KRING_IMPORT_KUNIT_NS()	MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define KRING_IMPORT_KUNIT_NS()	MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

#endif /* _KRING_COMPAT_H */
