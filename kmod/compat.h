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
 * EXPORT_SYMBOL_IF_KUNIT(sym): export @sym to the KUnit test module only.
 * kunit/visibility.h appeared in 6.2; kernels before it have no KUnit build
 * of kring, so there it exports nothing (and only checks @sym exists).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#include <kunit/visibility.h>
#else
#define EXPORT_SYMBOL_IF_KUNIT(sym)	static_assert(!__same_type(typeof(sym), void))
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

/*
 * KRING_HAVE_KUNIT_VM_MMAP: kunit_vm_mmap() (6.10 on) lets a KUnit case map
 * a file into an address space of its own.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define KRING_HAVE_KUNIT_VM_MMAP	1
#endif

/*
 * kring_vm_flags_set/clear(): vma->vm_flags became read-only behind
 * vm_flags_set()/vm_flags_clear() in 6.3.
 */
#include <linux/mm.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
static inline void kring_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}

static inline void kring_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vm_flags_clear(vma, flags);
}
#else
static inline void kring_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void kring_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * kring_rb_unlock_commit(): ftrace's ring_buffer_unlock_commit() lost its
 * event argument in 6.2. Only the benchmark module (tests/bench/) writes
 * into ftrace's ring buffer.
 */
#ifdef CONFIG_RING_BUFFER
#include <linux/ring_buffer.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static inline int kring_rb_unlock_commit(struct trace_buffer *buffer,
					 struct ring_buffer_event *event)
{
	return ring_buffer_unlock_commit(buffer);
}
#else
static inline int kring_rb_unlock_commit(struct trace_buffer *buffer,
					 struct ring_buffer_event *event)
{
	return ring_buffer_unlock_commit(buffer, event);
}
#endif
#endif

#endif /* _KRING_COMPAT_H */
