// The tests' tracepoint formats: sched_switch and sched_wakeup as tracefs
// serves them on 6.12 (x86-64), and the header files, for files that hold
// tracepoint samples (perf_data_*_test.cpp, tool_test.cpp).
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>

#include "kring/perf_data.hpp"

namespace tp_fixture {

// A tracepoint event's sample_type and attr with the sample id @sid, as
// kring record writes them.
constexpr std::uint64_t sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                      PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
inline kring::perf_data::event_attr attr(const char* name, std::uint32_t id, std::uint64_t sid) {
    return kring::perf_data::sample_event(name, PERF_TYPE_TRACEPOINT, id, sample_type, {sid});
}

inline const char* const header_page =
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
inline const char* const header_event =
    "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
    "\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
    "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";
inline const char* const common =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
inline const std::string sched_switch =
    std::string("name: sched_switch\nID: 316\nformat:\n") + common +
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
    "next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
    "(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
    "0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & "
    "((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
    "0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, "
    "\"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { "
    "0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", "
    "REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
    "0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, "
    "REC->next_pid, REC->next_prio\n";
inline const std::string sched_wakeup =
    std::string("name: sched_wakeup\nID: 318\nformat:\n") + common +
    "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, "
    "REC->target_cpu\n";

// A producer's record layout as KRING_IOC_GET_FORMATS serves it (kmod/format.c
// renders it: the ID the kring record type, offsets from the record's body),
// and the tracepoint it becomes in a recording (ID 65280, the common header
// ahead, every offset + 8).
inline const char* const producer_block =
    "name: my_record\nID: 65792\nformat:\n"
    "\tfield:u64 total;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield:char who[16];\toffset:8;\tsize:16;\tsigned:1;\n"
    "\tfield:pid_t owner;\toffset:24;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"total=%llu who=%s owner=%d\", REC->total, REC->who, REC->owner\n";
inline const std::string producer_tracepoint =
    std::string("name: my_record\nID: 65280\nformat:\n") + common +
    "\tfield:u64 total;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:char who[16];\toffset:16;\tsize:16;\tsigned:1;\n"
    "\tfield:pid_t owner;\toffset:32;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"total=%llu who=%s owner=%d\", REC->total, REC->who, REC->owner\n";

}  // namespace tp_fixture
