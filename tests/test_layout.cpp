// The region layout is the contract between a provider and every reader built from
// another commit: a record that changes size or moves a field must come with a new
// kLayoutVersion (readers refuse versions they do not know). This test writes
// sizeof and offsetof of every region record, one line each, and compares them with
// tests/layout/v<kLayoutVersion>.txt: a change without a version bump fails here.
//
// After a deliberate change: bump kLayoutVersion in agent/region/region_layout.h,
// run this test once with PFS_LAYOUT_RECORD=1 to write the new file, and commit it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/region/region_layout.h"

namespace {

using namespace pfs::layout;

std::string layout_text() {
  std::ostringstream out;
#define PFS_RECORD(T) out << #T " size " << sizeof(T) << "\n"
#define PFS_FIELD(T, f) out << #T "." #f " " << offsetof(T, f) << " " << sizeof(T::f) << "\n"
  PFS_RECORD(wait_stat);
  PFS_FIELD(wait_stat, count);
  PFS_FIELD(wait_stat, sum);
  PFS_FIELD(wait_stat, min);
  PFS_FIELD(wait_stat, max);
  PFS_RECORD(class_record);
  PFS_FIELD(class_record, lock);
  PFS_FIELD(class_record, kind);
  PFS_FIELD(class_record, flags);
  PFS_FIELD(class_record, derived);
  PFS_FIELD(class_record, stat);
  PFS_FIELD(class_record, name);
  PFS_RECORD(thread_record);
  PFS_FIELD(thread_record, lock);
  PFS_FIELD(thread_record, class_index);
  PFS_FIELD(thread_record, thread_id);
  PFS_FIELD(thread_record, os_thread_id);
  PFS_FIELD(thread_record, parent_thread_id);
  PFS_FIELD(thread_record, instrumented);
  PFS_FIELD(thread_record, history);
  PFS_FIELD(thread_record, derived);
  PFS_FIELD(thread_record, foreground);
  PFS_FIELD(thread_record, stack_depth);
  PFS_FIELD(thread_record, event_id);
  PFS_FIELD(thread_record, history_index);
  PFS_FIELD(thread_record, name);
  PFS_FIELD(thread_record, user);
  PFS_FIELD(thread_record, host);
  PFS_FIELD(thread_record, role);
  PFS_FIELD(thread_record, horizon);
  PFS_RECORD(wait_record);
  PFS_FIELD(wait_record, seq);
  PFS_FIELD(wait_record, state);
  PFS_FIELD(wait_record, timer);
  PFS_FIELD(wait_record, operation);
  PFS_FIELD(wait_record, nesting_type);
  PFS_FIELD(wait_record, class_index);
  PFS_FIELD(wait_record, source_index);
  PFS_FIELD(wait_record, thread_id);
  PFS_FIELD(wait_record, event_id);
  PFS_FIELD(wait_record, end_event_id);
  PFS_FIELD(wait_record, nesting_event_id);
  PFS_FIELD(wait_record, timer_start);
  PFS_FIELD(wait_record, timer_end);
  PFS_FIELD(wait_record, object_instance_begin);
  PFS_FIELD(wait_record, number_of_bytes);
  PFS_FIELD(wait_record, object_kind);
  PFS_FIELD(wait_record, object_index);
  PFS_FIELD(wait_record, object_version);
  PFS_FIELD(wait_record, index_number);
  PFS_FIELD(wait_record, flags);
  PFS_RECORD(batch_record);
  PFS_FIELD(batch_record, owner);
  PFS_RECORD(sync_instance);
  PFS_FIELD(sync_instance, lock);
  PFS_FIELD(sync_instance, class_index);
  PFS_FIELD(sync_instance, identity);
  PFS_FIELD(sync_instance, owner_thread_id);
  PFS_FIELD(sync_instance, readers);
  PFS_FIELD(sync_instance, stat);
  PFS_RECORD(actor_record);
  PFS_FIELD(actor_record, lock);
  PFS_FIELD(actor_record, enabled);
  PFS_FIELD(actor_record, history);
  PFS_FIELD(actor_record, trace_enabled);
  PFS_FIELD(actor_record, host);
  PFS_FIELD(actor_record, user);
  PFS_FIELD(actor_record, role);
  PFS_RECORD(source_record);
  PFS_FIELD(source_record, state);
  PFS_FIELD(source_record, line);
  PFS_FIELD(source_record, key);
  PFS_FIELD(source_record, text);
  PFS_RECORD(io_stat);
  PFS_FIELD(io_stat, count);
  PFS_FIELD(io_stat, sum);
  PFS_FIELD(io_stat, min);
  PFS_FIELD(io_stat, max);
  PFS_FIELD(io_stat, bytes);
  PFS_RECORD(io_stats);
  PFS_FIELD(io_stats, read);
  PFS_FIELD(io_stats, write);
  PFS_FIELD(io_stats, misc);
  PFS_RECORD(file_instance);
  PFS_FIELD(file_instance, lock);
  PFS_FIELD(file_instance, class_index);
  PFS_FIELD(file_instance, open_count);
  PFS_FIELD(file_instance, name_seq);
  PFS_FIELD(file_instance, identity);
  PFS_FIELD(file_instance, stats);
  PFS_FIELD(file_instance, name);
  PFS_RECORD(table_io_stat);
  PFS_FIELD(table_io_stat, fetch);
  PFS_FIELD(table_io_stat, insert);
  PFS_FIELD(table_io_stat, update);
  PFS_FIELD(table_io_stat, del);
  PFS_RECORD(table_share);
  PFS_FIELD(table_share, lock);
  PFS_FIELD(table_share, class_index);
  PFS_FIELD(table_share, object_type);
  PFS_FIELD(table_share, derived);
  PFS_FIELD(table_share, index_count);
  PFS_FIELD(table_share, identity);
  PFS_FIELD(table_share, no_index);
  PFS_FIELD(table_share, schema);
  PFS_FIELD(table_share, name);
  PFS_RECORD(index_stat);
  PFS_FIELD(index_stat, stat);
  PFS_FIELD(index_stat, name);
  PFS_RECORD(object_record);
  PFS_FIELD(object_record, lock);
  PFS_FIELD(object_record, object_type);
  PFS_FIELD(object_record, enabled);
  PFS_FIELD(object_record, timed);
  PFS_FIELD(object_record, schema);
  PFS_FIELD(object_record, name);
  PFS_RECORD(array_desc);
  PFS_FIELD(array_desc, offset);
  PFS_FIELD(array_desc, count);
  PFS_FIELD(array_desc, stride);
  PFS_RECORD(region_header::timer_desc);
  PFS_FIELD(region_header::timer_desc, base);
  PFS_FIELD(region_header::timer_desc, mult);
  PFS_FIELD(region_header::timer_desc, shift);
  PFS_FIELD(region_header::timer_desc, available);
  PFS_FIELD(region_header::timer_desc, frequency);
  PFS_RECORD(region_header);
  PFS_FIELD(region_header, magic);
  PFS_FIELD(region_header, layout_version);
  PFS_FIELD(region_header, header_size);
  PFS_FIELD(region_header, file_size);
  PFS_FIELD(region_header, pid);
  PFS_FIELD(region_header, creation_time_ns);
  PFS_FIELD(region_header, ready);
  PFS_FIELD(region_header, exited);
  PFS_FIELD(region_header, max_classes);
  PFS_FIELD(region_header, max_threads);
  PFS_FIELD(region_header, wait_stack_depth);
  PFS_FIELD(region_header, history_per_thread);
  PFS_FIELD(region_header, history_long_size);
  PFS_FIELD(region_header, history_long_batch);
  PFS_FIELD(region_header, max_indexes_per_table);
  PFS_FIELD(region_header, timers);
  PFS_FIELD(region_header, setup_generation);
  PFS_FIELD(region_header, wait_timer);
  PFS_FIELD(region_header, consumers);
  PFS_FIELD(region_header, next_thread_id);
  PFS_FIELD(region_header, history_long_next_batch);
  PFS_FIELD(region_header, horizon_thread_id);
  PFS_FIELD(region_header, lost);
  PFS_FIELD(region_header, arrays);
#undef PFS_FIELD
#undef PFS_RECORD
  // The numbering of arrays, lost counters, consumers and kinds is layout too.
  out << "kArrayCount " << kArrayCount << "\n";
  out << "kLostSlots " << kLostSlots << "\n";
  out << "kConsumerSlots " << kConsumerSlots << "\n";
  out << "kHeaderSize " << kHeaderSize << "\n";
  out << "kAliveLockByte " << kAliveLockByte << " kSetupLockByte " << kSetupLockByte << "\n";
  return out.str();
}

TEST(Layout, RecordsMatchTheLayoutVersion) {
  const std::string path =
      std::string(PFS_SOURCE_DIR) + "/tests/layout/v" + std::to_string(kLayoutVersion) + ".txt";
  const std::string now = layout_text();
  if (std::getenv("PFS_LAYOUT_RECORD") != nullptr) {
    std::ofstream(path) << now;
    GTEST_SKIP() << "recorded " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "no record of layout version " << kLayoutVersion << " (" << path
                         << "): run this test with PFS_LAYOUT_RECORD=1 to write it";
  std::stringstream recorded;
  recorded << in.rdbuf();
  EXPECT_EQ(now, recorded.str()) << "the region layout changed but kLayoutVersion is still " << kLayoutVersion
                                 << ": bump it in agent/region/region_layout.h, then record the new layout "
                                    "(PFS_LAYOUT_RECORD=1)";
}

}  // namespace
