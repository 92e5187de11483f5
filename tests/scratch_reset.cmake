# Empties the scratch folder of a ctest run (tests/CMakeLists.txt) and creates its temp folder,
# so every run starts from nothing. Usage: cmake -DSCRATCH=<folder> -P scratch_reset.cmake
if(NOT SCRATCH)
  message(FATAL_ERROR "scratch_reset.cmake: SCRATCH not set")
endif()
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}/tmp")
