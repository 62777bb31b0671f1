// Files the tool opens for reading because a recording or an option names
// them: the files of MMAP records (their ELF symbols and build ids) and
// kallsyms. A recording may come from anyone, so a path in it may name a
// FIFO (whose open blocks until a writer comes), a device node (whose open
// has side effects), or a file too large to read: every such open goes
// through open_input(), which opens regular files only, never blocks and
// bounds the size.
//
//	auto f = open_input(path, max_elf_bytes);
//	if (!f) ... f.error().message()  // "PATH: not a regular file (a FIFO)"
//	elf_begin(f->fd.get(), ...);
#pragma once

#include <cstdint>
#include <string>

#include "kring/fd.hpp"
#include "kring/result.hpp"

namespace kring_tool {

// The most of an ELF file export --pprof maps for its symbols, and the
// most of a kallsyms file it reads (a distribution kernel's is about 20 MB).
inline constexpr std::uint64_t max_elf_bytes = std::uint64_t(1) << 30;
inline constexpr std::uint64_t max_kallsyms_bytes = std::uint64_t(256) << 20;

struct input_file {
    kring::unique_fd fd;
    std::uint64_t size = 0;  // st_size (0 for a procfs file such as /proc/kallsyms)
};

// @path opened O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY when it is a
// regular file of at most @max_size bytes. It is stat()ed first, so that a
// FIFO, a device node, a socket or a directory is refused without being
// opened, and fstat()ed after the open (the same file, still regular), so
// that one swapped in between is refused too (opened without blocking and
// closed, never read). Errors: the errno of stat or open; EINVAL "PATH:
// not a regular file (a FIFO)" and the like; EFBIG "PATH: N bytes, more
// than the M this reads".
// @unsized: a file that says size 0 may be opened (procfs: /proc/kallsyms);
// without it such a file is refused unopened, as the pseudo files of
// procfs and sysfs (whose open may have side effects: /proc/kmsg) say
// size 0 and an ELF file never does.
kring::result<input_file> open_input(const std::string& path, std::uint64_t max_size,
                                     bool unsized = false);

// The whole of @path through open_input() (@unsized), at most @max_size
// bytes read (read to its end, as a procfs file says size 0: EFBIG past
// @max_size).
kring::result<std::string> read_input(const std::string& path, std::uint64_t max_size,
                                      bool unsized = false);

}  // namespace kring_tool
