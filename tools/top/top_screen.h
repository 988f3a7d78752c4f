// pfs_top's full screen (ncurses): the header, the view's state lines (server
// unreachable, program exited, the server's warnings), its rows with the cursor,
// the help and a row's detail; colour when the terminal has it.
#pragma once

#include <string>

#include "tools/top/top_keys.h"

namespace pfs::top {

void screen_open();
void screen_close();
void draw(const ui_state& s, const std::string& header);

}  // namespace pfs::top
