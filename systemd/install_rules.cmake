# Run by `cmake --install` (systemd/CMakeLists.txt): writes RULES_OUT, the alert rules of
# RULES_IN with each runbook_url made absolute. The guide's URL is the environment's
# FDL_MIRROR_RUNBOOK_URL, else RUNBOOK_URL (the cache variable of that name), else the
# installed guide DEFAULT_GUIDE as a file:// URL.
set(runbook "${RUNBOOK_URL}")
if(DEFINED ENV{FDL_MIRROR_RUNBOOK_URL})
  set(runbook "$ENV{FDL_MIRROR_RUNBOOK_URL}")
endif()
if(runbook STREQUAL "")
  set(runbook "file://${DEFAULT_GUIDE}")
endif()
if(NOT runbook MATCHES "^[a-z][a-z0-9+.-]*://")
  message(FATAL_ERROR "FDL_MIRROR_RUNBOOK_URL '${runbook}' is not an absolute URL (such as https://wiki.example.org/fdl-mirror)")
endif()
file(READ "${RULES_IN}" rules)
string(REPLACE "runbook_url: docs/operations.md#" "runbook_url: ${runbook}#" rules "${rules}")
file(WRITE "${RULES_OUT}" "${rules}")
