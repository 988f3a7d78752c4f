#include "tools/top/top_options.h"

#include <getopt.h>

#include <cstdio>
#include <cstdlib>

#include "tools/top/top_views.h"

namespace pfs::top {

namespace {

void usage(std::FILE* out) {
  std::fputs(
      "usage: pfs_top [OPTION]...\n"
      "A live view of a perfschema region, read through perfschema_fdw (keys: h in the screen).\n"
      "  -h, --host=HOST          database server host (default: PGHOST, libpq's)\n"
      "  -p, --port=PORT          database server port (default: PGPORT)\n"
      "  -U, --username=USER      database user (default: PGUSER)\n"
      "  -d, --dbname=DBNAME      database, or a connection string (default: PGDATABASE)\n"
      "  -s, --schema=SCHEMA      schema of the imported perfschema tables (default ps)\n"
      "  -S, --sys-schema=SCHEMA  schema of perfschema_create_views' views (default sys)\n"
      "  -N, --top=N              rows per refresh in batch mode (default 10)\n"
      "  -i, --interval=SECONDS   time between refreshes (default 1)\n"
      "  -n, --iterations=N       exit after N refreshes (default: until interrupted)\n"
      "  -b, --batch              plain text, no screen control (for files and pipes)\n"
      "  -v, --view=VIEW          the view (batch: the one printed): 1 waits, 2 locks,\n"
      "                           3 statements, 4 files, 5 threads, 6 processes, 7 memory\n"
      "      --sql                print the view's query (-s, -S, --view) and exit\n"
      "      --help               this help\n",
      out);
}

bool positive_int(const char* s, int& out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 1 || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

std::optional<options> parse_options(int argc, char** argv, bool& help) {
  static const option kLong[] = {
      {"host", required_argument, nullptr, 'h'},
      {"port", required_argument, nullptr, 'p'},
      {"username", required_argument, nullptr, 'U'},
      {"dbname", required_argument, nullptr, 'd'},
      {"schema", required_argument, nullptr, 's'},
      {"sys-schema", required_argument, nullptr, 'S'},
      {"top", required_argument, nullptr, 'N'},
      {"interval", required_argument, nullptr, 'i'},
      {"iterations", required_argument, nullptr, 'n'},
      {"batch", no_argument, nullptr, 'b'},
      {"view", required_argument, nullptr, 'v'},
      {"sql", no_argument, nullptr, 'Q'},
      {"help", no_argument, nullptr, 'H'},
      {nullptr, 0, nullptr, 0},
  };
  options o;
  help = false;
  int c;
  while ((c = getopt_long(argc, argv, "h:p:U:d:s:S:N:i:n:bv:", kLong, nullptr)) != -1) {
    switch (c) {
      case 'h':
        o.connection.emplace_back("host", optarg);
        break;
      case 'p':
        o.connection.emplace_back("port", optarg);
        break;
      case 'U':
        o.connection.emplace_back("user", optarg);
        break;
      case 'd':
        o.connection.emplace_back("dbname", optarg);
        break;
      case 's':
        o.schema = optarg;
        break;
      case 'S':
        o.sys_schema = optarg;
        break;
      case 'N':
        if (!positive_int(optarg, o.top)) {
          std::fprintf(stderr, "pfs_top: --top wants a positive number, not \"%s\"\n", optarg);
          return std::nullopt;
        }
        break;
      case 'n':
        if (!positive_int(optarg, o.iterations)) {
          std::fprintf(stderr, "pfs_top: --iterations wants a positive number, not \"%s\"\n", optarg);
          return std::nullopt;
        }
        break;
      case 'i': {
        char* end = nullptr;
        o.interval = std::strtod(optarg, &end);
        if (*end != '\0' || !(o.interval >= 0.05 && o.interval <= 3600)) {
          std::fprintf(stderr, "pfs_top: --interval wants seconds from 0.05 to 3600, not \"%s\"\n", optarg);
          return std::nullopt;
        }
        break;
      }
      case 'b':
        o.batch = true;
        break;
      case 'Q':
        o.print_sql = true;
        break;
      case 'v':
        if (find_view(optarg) == nullptr) {
          std::fprintf(stderr,
                       "pfs_top: --view wants 1-7 or a view's name (waits, locks, statements, files, "
                       "threads, processes, memory), not \"%s\"\n",
                       optarg);
          return std::nullopt;
        }
        o.view = optarg;
        break;
      case 'H':
        help = true;
        usage(stdout);
        return std::nullopt;
      default:
        usage(stderr);
        return std::nullopt;
    }
  }
  if (optind < argc) {
    std::fprintf(stderr, "pfs_top: unexpected argument \"%s\"\n", argv[optind]);
    usage(stderr);
    return std::nullopt;
  }
  return o;
}

}  // namespace pfs::top
