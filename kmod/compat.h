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
 * __uninitialized: a stack buffer the code fills before it reads it, left
 * out of CONFIG_INIT_STACK_ALL_ZERO's zeroing (a rep stos on every call of a
 * hot path). compiler_attributes.h has it from 6.2.
 */
#ifndef __uninitialized
#if __has_attribute(__uninitialized__)
#define __uninitialized		__attribute__((__uninitialized__))
#else
#define __uninitialized
#endif
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

/*
 * kring_hrtimer_setup(): initialise an hrtimer with its callback. 6.13
 * added hrtimer_setup(); hrtimer_init() before it left the
 * callback to be set after it (and 6.15 removed hrtimer_init()).
 */
#include <linux/hrtimer.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
static inline void kring_hrtimer_setup(struct hrtimer *timer,
				       enum hrtimer_restart (*fn)(struct hrtimer *),
				       clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_setup(timer, fn, clock_id, mode);
}
#else
static inline void kring_hrtimer_setup(struct hrtimer *timer,
				       enum hrtimer_restart (*fn)(struct hrtimer *),
				       clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
}
#endif

/*
 * kring_timer_container_of(): the structure a timer_list callback's timer
 * is embedded in. 6.16 renamed from_timer() to timer_container_of(), and
 * the old name is gone from 7.x.
 */
#include <linux/timer.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define kring_timer_container_of(var, timer, field)	timer_container_of(var, timer, field)
#else
#define kring_timer_container_of(var, timer, field)	from_timer(var, timer, field)
#endif

/*
 * kring_task_dumpable(): whether @task, whose mm is @mm (NULL for a task
 * without one; the caller keeps it alive), is dumpable by its owner, what
 * ptrace's read check asks of a target with the caller's ids. A task
 * without an mm counts as dumpable. Up to 6.x dumpability is the mm's
 * (get_dumpable(), SUID_DUMP_USER); 7.x moved it into the task's exec
 * state (task->exec_state, TASK_DUMPABLE_OWNER) and exports no accessor.
 * The version is read off the kernel tree (KRING_HAVE_TASK_EXEC_STATE,
 * the top-level Kbuild).
 *
 * Context: any; the exec state is read under RCU.
 */
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#ifdef KRING_HAVE_TASK_EXEC_STATE
#include <linux/sched/exec_state.h>
static inline bool kring_task_dumpable(const struct task_struct *task,
				       struct mm_struct *mm)
{
	const struct task_exec_state *es;
	bool ok;

	if (!mm)
		return true;
	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	ok = es && READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return ok;
}
#else
static inline bool kring_task_dumpable(const struct task_struct *task,
				       struct mm_struct *mm)
{
	return !mm || get_dumpable(mm) == SUID_DUMP_USER;
}
#endif

/*
 * Call chains (the timer source): kring_stack_trace_save() is
 * stack_trace_save() on kernels built with CONFIG_STACKTRACE and saves
 * nothing on the others (the chain then holds the interrupted IP alone);
 * kring_user_regs_native() says whether user registers are a native
 * 64-bit context, whose frame records are { fp, return address } pairs of
 * 64-bit words (a 32-bit task's are not walked); KRING_PF_NO_USER_STACK
 * marks tasks without a user stack of their own (kernel threads, and from
 * 6.4 the user workers, io_uring's, which have an mm).
 */
#include <linux/stacktrace.h>
#include <asm/ptrace.h>
static inline unsigned int kring_stack_trace_save(unsigned long *store, unsigned int size)
{
#ifdef CONFIG_STACKTRACE
	return stack_trace_save(store, size, 0);
#else
	return 0;
#endif
}

static inline bool kring_user_regs_native(struct pt_regs *regs)
{
#if defined(CONFIG_X86_64)
	return user_64bit_mode(regs);
#elif defined(CONFIG_ARM64)
	return !compat_user_mode(regs);
#else
	return false;
#endif
}

#ifdef PF_USER_WORKER
#define KRING_PF_NO_USER_STACK	(PF_KTHREAD | PF_USER_WORKER)
#else
#define KRING_PF_NO_USER_STACK	PF_KTHREAD
#endif

#endif /* _KRING_COMPAT_H */
