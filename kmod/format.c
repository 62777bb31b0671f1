// SPDX-License-Identifier: GPL-2.0
/*
 * Self-describing records: the layout of each record type a channel
 * carries, declared once as a struct kring_format (<kring/producer.h>) and
 * rendered in ftrace's event format language, which consumers read with
 * KRING_IOC_GET_FORMATS (docs/PRODUCER.md, "Describing your records").
 *
 * A declaration is validated before anything is kept: its name and every
 * field name are identifiers, the record type is one a producer may write,
 * every field has a known type whose size matches, lies inside the
 * described bytes and overlaps no other, and the print format is short
 * printable text. A refusal is an errno and one log line naming the
 * format and the field.
 *
 * Lifetime: a channel's formats are a list under its lock, appended by
 * kring_channel_add_format() (process context) and by configure (the
 * source's own, rendered then), read by the ioctl (copied out under the
 * lock, to user space after it), freed with the channel
 * (kring_formats_free(), when its last reference goes: no caller can
 * reach the list then).
 */
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/stdarg.h>

#include "compat.h"
#include "channel.h"

/* One rendered format: text[len] with its NUL. */
struct kring_format_text {
	struct list_head node;
	u32 type;
	size_t len;
	char text[];
};

struct kring_ftype {
	const char *name;
	u8 size;
	bool is_signed;
};

/*
 * char's signedness is the kernel's, as ftrace prints it: unsigned on
 * every architecture since Linux 6.2 (-funsigned-char), signed on x86
 * before.
 */
#define KRING_CHAR_SIGNED	is_signed_type(char)

/* The C types a field may have, with their sizes and signedness. */
static const struct kring_ftype kring_ftypes[] = {
	{ "u8", 1, false }, { "s8", 1, true }, { "u16", 2, false }, { "s16", 2, true },
	{ "u32", 4, false }, { "s32", 4, true }, { "u64", 8, false }, { "s64", 8, true },
	{ "__u8", 1, false }, { "__s8", 1, true }, { "__u16", 2, false },
	{ "__s16", 2, true }, { "__u32", 4, false }, { "__s32", 4, true },
	{ "__u64", 8, false }, { "__s64", 8, true }, { "char", 1, KRING_CHAR_SIGNED },
	{ "unsigned char", 1, false }, { "short", 2, true }, { "unsigned short", 2, false },
	{ "int", 4, true }, { "unsigned int", 4, false }, { "long", 8, true },
	{ "unsigned long", 8, false }, { "long long", 8, true },
	{ "unsigned long long", 8, false }, { "bool", 1, false }, { "pid_t", 4, true },
};

static bool kring_ident(const char *s)
{
	size_t i, n;

	if (!s)
		return false;
	n = strnlen(s, KRING_FORMAT_NAME_MAX + 1);
	if (!n || n > KRING_FORMAT_NAME_MAX || isdigit(s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum(s[i]) && s[i] != '_')
			return false;
	return true;
}

/*
 * @type as "T" or "T[N]": its base type and the element count (1 for a
 * scalar). Return: the base type, or NULL for a type not in the table or
 * a malformed or zero count.
 */
static const struct kring_ftype *kring_ftype_parse(const char *type, unsigned int *count)
{
	char base[24];
	const char *br;
	size_t n, i;

	if (!type)
		return NULL;
	n = strnlen(type, sizeof(base) + 8);
	br = strnchr(type, n, '[');
	*count = 1;
	if (br) {
		char num[8];
		size_t k = n - (br - type) - 2;

		if (type[n - 1] != ']' || !k || k >= sizeof(num))
			return NULL;
		memcpy(num, br + 1, k);
		num[k] = '\0';
		for (i = 0; i < k; i++)
			if (!isdigit(num[i]))
				return NULL;
		if (kstrtouint(num, 10, count) || !*count)
			return NULL;
		n = br - type;
	}
	if (n >= sizeof(base))
		return NULL;
	memcpy(base, type, n);
	base[n] = '\0';
	for (i = 0; i < ARRAY_SIZE(kring_ftypes); i++)
		if (!strcmp(base, kring_ftypes[i].name))
			return &kring_ftypes[i];
	return NULL;
}

static bool kring_print_fmt_ok(const char *s)
{
	size_t i, n;

	if (!s)
		return true;
	n = strnlen(s, KRING_FORMAT_PRINT_MAX + 1);
	if (n > KRING_FORMAT_PRINT_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

static int kring_field_cmp(const void *a, const void *b)
{
	const struct kring_format_field *x = *(const struct kring_format_field * const *)a;
	const struct kring_format_field *y = *(const struct kring_format_field * const *)b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* One log line naming the format and the field, and @err. */
static int kring_format_refuse(const struct kring_format *f,
			       const struct kring_format_field *fd, int err, const char *why)
{
	pr_warn_ratelimited("kring: format %.*s%s%.*s: %s\n", KRING_FORMAT_NAME_MAX,
			    f->name ?: "(no name)", fd ? ", field " : "", KRING_FORMAT_NAME_MAX,
			    fd ? (fd->name ?: "(no name)") : "", why);
	return err;
}

/**
 * kring_format_validate() - check a declaration before it is kept
 * @f: the declaration
 *
 * Return: 0; -EINVAL for a bad name, record type, field (unknown type,
 * size not the type's, outside the described bytes, overlapping another,
 * a duplicate name, signedness not the type's) or print format; -E2BIG
 * for more than KRING_FORMAT_MAX_FIELDS fields or a size above what a
 * record of that type can hold. Each refusal logs one line naming the
 * format and the field.
 */
int kring_format_validate(const struct kring_format *f)
{
	const struct kring_format_field *sorted[KRING_FORMAT_MAX_FIELDS];
	unsigned int i, j, max;

	if (!f)
		return -EINVAL;
	if (!kring_ident(f->name))
		return kring_format_refuse(f, NULL, -EINVAL,
					   "the name is not an identifier of 1 to 63 characters");
	if (f->type != KRING_RECORD_SAMPLE && f->type != KRING_RECORD_AUX &&
	    f->type <= KRING_RECORD_PAD)
		return kring_format_refuse(f, NULL, -EINVAL,
					   "not a type a producer describes (KRING_RECORD_SAMPLE, _AUX or above KRING_RECORD_PAD)");
	/* An AUX packet's header is bounded like a record's body. */
	max = f->type == KRING_RECORD_SAMPLE ? KRING_SAMPLE_RAW_MAX :
		KRING_RECORD_MAX_SIZE - sizeof(struct kring_record_header);
	if (!f->size || f->size > max)
		return kring_format_refuse(f, NULL, -E2BIG,
					   "size 0 or above what a record of its type holds");
	if (!f->nr_fields || !f->fields)
		return kring_format_refuse(f, NULL, -EINVAL,
					   "no fields");
	if (f->nr_fields > KRING_FORMAT_MAX_FIELDS)
		return kring_format_refuse(f, NULL, -E2BIG,
					   "more than KRING_FORMAT_MAX_FIELDS fields");
	if (!kring_print_fmt_ok(f->print_fmt))
		return kring_format_refuse(f, NULL, -EINVAL,
					   "print fmt longer than KRING_FORMAT_PRINT_MAX or not printable ASCII");
	for (i = 0; i < f->nr_fields; i++) {
		const struct kring_format_field *fd = &f->fields[i];
		const struct kring_ftype *t;
		unsigned int count;

		if (!kring_ident(fd->name))
			return kring_format_refuse(f, fd, -EINVAL, "the name is not an identifier");
		if (!strncmp(fd->name, "common_", 7))
			return kring_format_refuse(f, fd, -EINVAL, "common_ names are ftrace's");
		t = kring_ftype_parse(fd->type, &count);
		if (!t)
			return kring_format_refuse(f, fd, -EINVAL, "unknown type");
		/* count is at most 9999999: the product fits. */
		if ((u64)t->size * count != fd->size)
			return kring_format_refuse(f, fd, -EINVAL, "size is not its type's");
		if (fd->is_signed != t->is_signed)
			return kring_format_refuse(f, fd, -EINVAL, "signedness is not its type's");
		if ((u32)fd->offset + fd->size > f->size)
			return kring_format_refuse(f, fd, -EINVAL, "outside the record");
		for (j = 0; j < i; j++)
			if (!strcmp(f->fields[j].name, fd->name))
				return kring_format_refuse(f, fd, -EINVAL, "a duplicate name");
		sorted[i] = fd;
	}
	sort(sorted, f->nr_fields, sizeof(sorted[0]), kring_field_cmp, NULL);
	for (i = 1; i < f->nr_fields; i++)
		if ((u32)sorted[i - 1]->offset + sorted[i - 1]->size > sorted[i]->offset)
			return kring_format_refuse(f, sorted[i], -EINVAL,
						   "overlaps the field before it");
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kring_format_validate);

/* vsnprintf() at @*n of @buf (@size bytes, may be 0), @*n advanced as if it fit. */
static __printf(4, 5) void kring_append(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	*n += vsnprintf(*n < size ? buf + *n : NULL, *n < size ? size - *n : 0, fmt, ap);
	va_end(ap);
}

/*
 * ftrace's format text of a validated @f, its record type as its ID: into
 * @buf of @size bytes (0: only measured). Return: the length without the
 * NUL, whatever @size.
 */
static size_t kring_format_render(const struct kring_format *f, char *buf, size_t size)
{
	size_t n = 0;
	unsigned int i;

	kring_append(buf, size, &n, "name: %s\nID: %u\nformat:\n", f->name, f->type);
	for (i = 0; i < f->nr_fields; i++) {
		const struct kring_format_field *fd = &f->fields[i];
		const char *br = strchr(fd->type, '[');
		int base = br ? br - fd->type : (int)strlen(fd->type);

		kring_append(buf, size, &n,
			     "\tfield:%.*s %s%s;\toffset:%u;\tsize:%u;\tsigned:%u;\n",
			     base, fd->type, fd->name, br ?: "", fd->offset, fd->size,
			     fd->is_signed);
	}
	kring_append(buf, size, &n, "\nprint fmt: %s\n", f->print_fmt ?: "\"\"");
	return n;
}

/* The rendered text of a validated @f, or NULL (no memory). */
static struct kring_format_text *kring_format_text_new(const struct kring_format *f)
{
	struct kring_format_text *t;
	/* Bounded by the validation: 64 fields of at most ~200 bytes each. */
	size_t len = kring_format_render(f, NULL, 0) + 1;

	t = kmalloc(struct_size(t, text, len), GFP_KERNEL_ACCOUNT);
	if (!t)
		return NULL;
	t->type = f->type;
	t->len = len;
	kring_format_render(f, t->text, len);
	return t;
}

/*
 * Append @f to @ch's formats. Context: process; @ch->lock held.
 * Return: 0, a validation errno, -EEXIST for a second format of a type,
 * -ENOSPC beyond KRING_FORMATS_MAX formats or KRING_FORMATS_MAX_BYTES.
 */
static int kring_formats_add_locked(struct kring_channel *ch, const struct kring_format *f)
{
	struct kring_format_text *t, *old;
	unsigned int count = 0;
	size_t bytes = 0;
	int ret;

	lockdep_assert_held(&ch->lock);
	ret = kring_format_validate(f);
	if (ret)
		return ret;
	list_for_each_entry(old, &ch->formats, node) {
		if (old->type == f->type)
			return kring_format_refuse(f, NULL, -EEXIST,
						   "the channel has a format of this type");
		count++;
		bytes += old->len;
	}
	t = kring_format_text_new(f);
	if (!t)
		return -ENOMEM;
	if (count >= KRING_FORMATS_MAX || bytes + t->len > KRING_FORMATS_MAX_BYTES) {
		kfree(t);
		return kring_format_refuse(f, NULL, -ENOSPC,
					   "the channel's formats are full");
	}
	list_add_tail(&t->node, &ch->formats);
	return 0;
}

/**
 * kring_channel_add_format() - describe a record type a channel carries
 * @ch:	channel (a reference from kring_channel_get() or _get_fd())
 * @f:	the declaration; copied (rendered), the caller's memory is not kept
 *
 * Context: process context (takes the channel's mutex).
 * Return: 0; -EINVAL, -E2BIG for a declaration refused by validation
 * (one log line names the format and field); -EEXIST when @ch already
 * describes @f->type; -ENOSPC beyond the channel's KRING_FORMATS_MAX
 * formats or KRING_FORMATS_MAX_BYTES of text; -ENOMEM.
 */
int kring_channel_add_format(struct kring_channel *ch, const struct kring_format *f)
{
	int ret;

	might_sleep();
	mutex_lock(&ch->lock);
	ret = kring_formats_add_locked(ch, f);
	mutex_unlock(&ch->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(kring_channel_add_format);

/**
 * kring_formats_add_source() - a source's own formats, at configure
 * @ch: the channel, @ch->lock held
 * @fmts: NULL-terminated list
 *
 * Return: 0 or the first refusal's errno (a bug in kring: its own formats
 * are checked by its tests).
 */
int kring_formats_add_source(struct kring_channel *ch, const struct kring_format * const *fmts)
{
	int ret;

	for (; fmts && *fmts; fmts++) {
		ret = kring_formats_add_locked(ch, *fmts);
		if (ret)
			return ret;
	}
	return 0;
}

/* With the channel: its last reference is gone. */
void kring_formats_free(struct kring_channel *ch)
{
	struct kring_format_text *t, *n;

	list_for_each_entry_safe(t, n, &ch->formats, node)
		kfree(t);
	INIT_LIST_HEAD(&ch->formats);
}

/**
 * kring_ioctl_get_formats() - KRING_IOC_GET_FORMATS
 * @ch: the channel
 * @arg: a struct kring_formats in user memory
 *
 * Return: 0 (@count and @len filled in; the text copied when @buf is not
 * 0), -ENOSPC when @len is smaller than the text (@count and @len filled
 * in, nothing copied), -EINVAL for a short struct or a non-zero reserved
 * field, -E2BIG for unknown non-zero bytes past the struct, -EFAULT.
 */
long kring_ioctl_get_formats(struct kring_channel *ch, void __user *arg)
{
	struct kring_formats req;
	struct kring_format_text *t;
	u32 usize, count = 0;
	size_t need = 0;
	char *text = NULL;
	long ret = 0;

	if (get_user(usize, (u32 __user *)arg))
		return -EFAULT;
	if (usize < KRING_FORMATS_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&req, sizeof(req), arg, usize);
	if (ret)
		return ret;
	if (req.reserved)
		return -EINVAL;
	/*
	 * Copied out under the lock, to user space after it: the user's
	 * buffer may be the channel's own mapping, whose fault path must not
	 * wait for this lock.
	 */
	mutex_lock(&ch->lock);
	list_for_each_entry(t, &ch->formats, node) {
		count++;
		need += t->len;
	}
	if (req.buf && req.len >= need && need) {
		text = kvmalloc(need, GFP_KERNEL_ACCOUNT);
		if (text) {
			size_t at = 0;

			list_for_each_entry(t, &ch->formats, node) {
				memcpy(text + at, t->text, t->len);
				at += t->len;
			}
		}
	}
	mutex_unlock(&ch->lock);
	if (req.buf && req.len >= need && need && !text)
		return -ENOMEM;
	if (req.buf && req.len < need)
		ret = -ENOSPC;
	else if (text && copy_to_user(u64_to_user_ptr(req.buf), text, need))
		ret = -EFAULT;
	kvfree(text);
	if (ret == -EFAULT)
		return ret;
	req.count = count;
	/* KRING_FORMATS_MAX_BYTES bounds it: it fits the u32. */
	req.len = need;
	req.size = min_t(u32, usize, sizeof(req));
	if (copy_to_user(arg, &req, req.size))
		return -EFAULT;
	return ret;
}
