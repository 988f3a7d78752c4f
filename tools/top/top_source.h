// pfs_top's connection and refreshes: connects with psql's options, reconnects
// with backoff when the server goes away (the state says so), keeps each view's
// previous read for its rates, and collects the server's warnings (a damaged
// region's) so that each is shown once.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tools/top/top_model.h"
#include "tools/top/top_options.h"

namespace pfs::top {

struct refresh_result {
  shown rows;
  std::string error;                      // the view could not be read (the message to show)
  std::string exited;                     // "the program (pid N) has exited", or empty
  std::string unreachable;                // the server is unreachable: the message and the next try
  std::vector<std::string> new_warnings;  // the server's warnings not shown before
  double seconds = 0;                     // since the view's previous read
};

class source {
 public:
  explicit source(const options& o) : options_(o) {}
  ~source();
  source(const source&) = delete;
  source& operator=(const source&) = delete;

  // False with the message when the first connection fails (refresh retries it).
  bool connect(std::string& error);
  std::string where() const;
  refresh_result refresh(const view& v);
  // A row's detail (Enter): the rows of detail_sql for key.
  bool detail(const view& v, const std::string& key, table& out, std::string& error);

 private:
  bool usable();

  const options& options_;
  PGconn* db_ = nullptr;
  std::map<char, table> previous_;
  std::map<char, std::chrono::steady_clock::time_point> previous_at_;
  std::vector<std::string> warnings_seen_, warnings_new_;
  std::string unreachable_;
  double backoff_ = 1;
  std::chrono::steady_clock::time_point retry_at_{};
  std::string where_;
  std::string exited_seen_, exited_at_;  // the exit said, and the clock when first seen
};

}  // namespace pfs::top
