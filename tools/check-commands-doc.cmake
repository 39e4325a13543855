# Fails when docs/commands.md differs from `feedkv-server --commands-markdown`.
# Regenerate with: build/feedkv-server --commands-markdown > docs/commands.md
execute_process(COMMAND ${SERVER} --commands-markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "feedkv-server --commands-markdown failed: ${rc}")
endif()
file(READ ${DOC} current)
if(NOT generated STREQUAL current)
  message(FATAL_ERROR "docs/commands.md is stale; run: build/feedkv-server --commands-markdown > docs/commands.md")
endif()
