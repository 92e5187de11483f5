# Run after a test executable is built (tests/CMakeLists.txt): writes CTEST_FILE with one ctest entry
# per gtest suite of EXE, named "<Suite>.*" and run with --gtest_filter=<Suite>.*, for executables
# whose tests are cheap next to a process start plus their shared setup (gtest_discover_tests makes
# one process per TEST). A failing entry's output names the failing TESTs at its end.
# Usage: cmake -DEXE=... -DCTEST_FILE=... -DWORKDIR=... -DFIXTURE=... -DENV1=... -DENVMOD1=... -P gtest_suites.cmake
execute_process(COMMAND "${EXE}" --gtest_list_tests OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  file(REMOVE "${CTEST_FILE}")
  message(FATAL_ERROR "${EXE} --gtest_list_tests failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(script "")
foreach(line IN LISTS lines)
  # Suite lines are not indented and end in "." (a parameterised one may carry a "# TypeParam" note).
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.( .*)?$")
    set(name "${CMAKE_MATCH_1}.*")
    string(APPEND script
      "add_test([==[${name}]==] [==[${EXE}]==] [==[--gtest_filter=${name}]==])\n"
      "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKDIR}]==]"
      " FIXTURES_REQUIRED [==[${FIXTURE}]==] ENVIRONMENT [==[${ENV1}]==] ENVIRONMENT_MODIFICATION [==[${ENVMOD1}]==])\n")
  endif()
endforeach()
if(script STREQUAL "")
  message(FATAL_ERROR "${EXE} lists no test suite")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
