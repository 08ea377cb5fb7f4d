# SPDX-License-Identifier: Apache-2.0
# step(<command>...): run a command from a cmake -P test script, stopping the test with the command
# line and its exit code if it fails; STEP_LABEL (set by the includer) starts the message.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "${STEP_LABEL}: `${cmd}` failed (${rc})")
  endif()
endfunction()
