// The implementations of the units-of-work C ABI (agent_work.cpp), under C++
// names: work_c_abi.inc wraps each as the pfs_* function of pfs_c.h.
#pragma once

#include "agent/provider/pfs_c.h"

namespace pfs::detail::work_c {

pfs_key register_stage(const char* category, const char* name);
pfs_key register_statement(const char* category, const char* name);
int statement_start(pfs_key key, const char* schema, const char* file, unsigned line);
void statement_set_text(const char* text, size_t length);
void statement_set_digest_text(const char* normalized, size_t length);
void statement_set_rows(uint64_t affected, uint64_t sent, uint64_t examined);
void statement_set_error(unsigned mysql_errno, const char* sqlstate, const char* message);
void statement_add_warnings(unsigned count);
void statement_set_traceparent(const char* traceparent);
void statement_end(int level);
uint64_t stage_start(pfs_key key, const char* file, unsigned line);
void stage_set_progress(uint64_t completed, uint64_t estimated);
void stage_end(void);
void stage_end_event(uint64_t event_id);
int transaction_start(int read_only, int isolation, int autocommit, const char* file, unsigned line);
void transaction_set_gtid(const char* gtid);
void transaction_set_trx_id(uint64_t trx_id);
void transaction_set_xid(long format_id, const char* gtrid, const char* bqual);
void transaction_set_traceparent(const char* traceparent);
void transaction_savepoint(int kind);
void transaction_end(int committed);
int start_idle_wait(pfs_wait_locker* locker, const char* file, unsigned line);
void end_idle_wait(pfs_wait_locker* locker);
void set_thread_connection(uint64_t processlist_id, int connection_type);

}  // namespace pfs::detail::work_c
