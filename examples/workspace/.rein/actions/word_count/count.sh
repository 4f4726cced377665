#!/usr/bin/env bash
# The word_count action: counts the words, lines and headings of one page.
# rein runs it in the workspace and passes the input's "path" property as
# REIN_INPUT_PATH (the whole input is in REIN_INPUT, as JSON).
set -euo pipefail
page="${REIN_INPUT_PATH:?the input has no path}"
case "$page" in
/* | *..*)
  echo "word_count: $page: give a path inside the workspace, without .." >&2
  exit 2
  ;;
esac
if [ ! -f "$page" ]; then
  echo "word_count: $page: no such page" >&2
  exit 1
fi
words=$(($(wc -w <"$page")))
lines=$(($(wc -l <"$page")))
headings=$(($(grep -c '^#' "$page" || true)))
echo "$page: $words words, $lines lines, $headings headings"
