/* Loads a plugin with dlopen and runs it (tests/end_to_end/test_static_init.cpp): the program
 * itself has no link with the agent. Usage: loader PLUGIN.so N; prints
 * agent_active=0|1. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    fprintf(stderr, "loader: %s\n", dlerror());
    return 3;
  }
  int (*run)(int);
  void* sym = dlsym(plugin, "static_init_plugin_run");
  if (sym == NULL) return 4;
  memcpy(&run, &sym, sizeof run); /* POSIX: a data pointer from dlsym is a function pointer */
  printf("agent_active=%d\n", run(atoi(argv[2])));
  return 0;
}
