# Fails when a library holds a global with a dynamic initializer (or a destructor
# run at exit). An instrumented object at namespace scope calls into the agent from
# its own constructor, possibly before the agent's translation units ran theirs, so
# every global of the agent, region, reader and timers libraries must be
# constant-initialized (constinit) or built on first use. GCC and clang emit one
# _GLOBAL__sub_I_<file> function per translation unit that needs such code.
# Usage: cmake -DNM=<nm> -DLIB=<archive or shared library> -P check_static_init.cmake
execute_process(COMMAND ${NM} -A ${LIB} OUTPUT_VARIABLE symbols ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_static_init: ${NM} -A ${LIB} failed")
endif()
string(REGEX MATCHALL "[^\n]*_GLOBAL__(sub_)?I_[^\n]*" found "${symbols}")
if(found)
  string(REPLACE ";" "\n  " found "${found}")
  message(FATAL_ERROR "${LIB} has globals with dynamic initialization:\n  ${found}\n"
                      "Make them constinit, or build them on first use (a function-local static "
                      "that is never destroyed); see cmake/check_static_init.cmake.")
endif()
