/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-user accounting of kring.ko (docs/ARCHITECTURE.md, layer 2): what
 * each user holds of the per-user limits, the channels it has open
 * (channel.c) and the pages of its buffers and AUX areas (buffer.c). A charge
 * is made at every level of the user's user-namespace chain, as the
 * kernel's ucounts are (kernel/ucount.c, inc_ucount()): to the user in its
 * namespace, then to the namespace's owner in the parent namespace, up to
 * the initial one, each level bounded by the same limit. A user gets no
 * more by making user namespaces and mapping subordinate ids into them.
 * Includes no other kring header.
 */
#ifndef _KRING_USER_H
#define _KRING_USER_H

#include <linux/types.h>

/* What a user is charged for, each bounded by its own limit. */
enum kring_user_res {
	KRING_USER_CHANNELS,	/* channels open: kring.max_user_channels */
	KRING_USER_LOCKED,	/* locked pages: kring.mlock_kb per online CPU */
	KRING_USER_CAPTURES,	/* enabled capture channels: kring.max_user_captures */
	KRING_USER_NR_RES,
};

struct kring_user;

struct kring_user *kring_user_get(void);
void kring_user_put(struct kring_user *u);
unsigned long kring_user_room(struct kring_user *u, enum kring_user_res res,
			      unsigned long max);
unsigned long kring_user_charge(struct kring_user *u, enum kring_user_res res,
				unsigned long n, unsigned long max);
void kring_user_uncharge(struct kring_user *u, enum kring_user_res res, unsigned long n);
struct kring_user *kring_user_channel_add(void);
void kring_user_channel_del(struct kring_user *u);
int kring_user_capture_add(struct kring_user *u);
void kring_user_capture_del(struct kring_user *u);
void kring_users_exit(void);

#endif /* _KRING_USER_H */
