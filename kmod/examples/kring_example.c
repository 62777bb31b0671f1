// SPDX-License-Identifier: GPL-2.0
/*
 * kring_example: the smallest module that writes into a kring channel
 * through the exported producer API (<kring/producer.h>), built the way any
 * other driver builds against the installed kring SDK (docs/PRODUCER.md).
 *
 *	insmod kring_example.ko channel=<id from KRING_IOC_ID> count=1000
 *
 * At load it writes @count SAMPLE records whose RAW data is the text
 * "kring example record <n>" with kring_channel_write_raw() (the other
 * fields the channel's sample_type asks for, the task's ids, the time, the
 * CPU, come from the context), then two
 * records of the kring-only type KRING_RECORD_EXAMPLE holding the count
 * accepted: one in one call with kring_channel_write() (misc 1), one with
 * the handle API (begin, the record written in place, end; misc 0), and
 * stays loaded until removed. Loading fails with -ENOENT when no open
 * channel has that id. Before writing, it describes KRING_RECORD_EXAMPLE
 * (kring_channel_add_format()), so that a consumer decodes its field by
 * name (KRING_IOC_GET_FORMATS); a channel that has the description
 * already (the module loaded twice) answers -EEXIST, which is fine.
 *
 * raw_trim=<n> takes n bytes off each text's RAW size, as a driver strips a
 * header it expected in front of its data: the tests' way to hand kring the
 * classic underflow (raw_size = len - hdr with len < hdr), which kring
 * refuses and counts as too big. A real driver checks len >= hdr first.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/preempt.h>
#include <kring/producer.h>

/* A kring-only record type of this example: header + u64 records written. */
#define KRING_RECORD_EXAMPLE	(KRING_RECORD_KRING_BASE + 0x100)

/* Its body, after the header: what its format describes. */
struct kring_example_body {
	u64 total;
};

struct kring_example_record {
	struct kring_record_header hdr;
	struct kring_example_body body;
};

/* Its layout, as ftrace would describe it: the compiler's, from the struct. */
static const struct kring_format_field kring_example_fields[] = {
	KRING_FORMAT_FIELD(struct kring_example_body, total, u64),
};

static const struct kring_format kring_example_format = {
	.name = "kring_example",
	.type = KRING_RECORD_EXAMPLE,
	.size = sizeof(struct kring_example_body),
	.fields = kring_example_fields,
	.nr_fields = ARRAY_SIZE(kring_example_fields),
	.print_fmt = "\"total=%llu\", REC->total",
};

/*
 * The channel by its id, as a parameter: only root loads a module, so only
 * root names the channel. An interface an unprivileged user reaches would
 * take the channel's file descriptor instead (kring_channel_get_fd();
 * docs/PRODUCER.md, "Whose channel").
 */
static u64 channel;
module_param(channel, ullong, 0444);
MODULE_PARM_DESC(channel, "id of the kring channel to write into (KRING_IOC_ID)");

static uint count = 100;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "SAMPLE records to write at load");

static uint raw_trim;
module_param(raw_trim, uint, 0444);
MODULE_PARM_DESC(raw_trim, "bytes taken off each RAW size (more than the text underflows it)");

static uint written;
module_param(written, uint, 0444);
MODULE_PARM_DESC(written, "records that were accepted by the channel");

static int __init kring_example_init(void)
{
	struct kring_record_header hdr = { .type = KRING_RECORD_EXAMPLE };
	struct kring_example_body body;
	struct kring_output_handle h;
	struct kring_channel *ch;
	char text[48];
	u32 size;
	uint i;
	int ret;

	ch = kring_channel_get(channel);
	if (!ch) {
		pr_err("kring_example: no kring channel %llu\n", channel);
		return -ENOENT;
	}
	ret = kring_channel_add_format(ch, &kring_example_format);
	if (ret && ret != -EEXIST) {
		kring_channel_put(ch);
		return ret;
	}
	for (i = 0; i < count; i++) {
		size = scnprintf(text, sizeof(text), "kring example record %u", i) + 1 - raw_trim;
		/* The producer calls want preemption disabled (one CPU per channel). */
		preempt_disable();
		if (!kring_channel_write_raw(ch, text, size))
			written++;
		preempt_enable();
	}

	/* One call: the header and the body, from any context. */
	body.total = written;
	kring_channel_write(ch, KRING_RECORD_EXAMPLE, 1, &body, sizeof(body));

	/*
	 * The handle API: a record of our own type, written in place (a
	 * channel's reservation is one piece; the copies are for rings that
	 * are not).
	 */
	hdr.size = sizeof(struct kring_example_record);
	preempt_disable();
	if (!kring_channel_output_begin(&h, ch, hdr.size)) {
		struct kring_example_record *r = kring_output_ptr(&h);

		if (r) {
			r->hdr = hdr;
			r->body = body;
		} else {
			kring_output_copy(&h, &hdr, sizeof(hdr));
			kring_output_copy(&h, &body, sizeof(body));
		}
		kring_channel_output_end(&h);
	}
	preempt_enable();

	kring_channel_put(ch);
	pr_info("kring_example: %u of %u records written to channel %llu\n",
		written, count, channel);
	return 0;
}

static void __exit kring_example_exit(void)
{
}

module_init(kring_example_init);
module_exit(kring_example_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Example producer writing into a kring channel");
