#!/bin/sh
# dumplens where no window can open: exit 1 with a message naming dumplens-cli, never an abort
# (134) or a hang. Usage: no_display.sh PATH_TO_DUMPLENS
app="$1"
fail=0
expect() {   # name expected-code output-fragment -- command...
  name="$1" want="$2" fragment="$3"
  shift 4
  out=$("$@" 2>&1)
  code=$?
  if [ "$code" -ne "$want" ]; then
    echo "FAIL $name: exit $code, expected $want: $out"
    fail=1
  elif ! printf '%s' "$out" | grep -qF -- "$fragment"; then
    echo "FAIL $name: output lacks '$fragment': $out"
    fail=1
  else
    echo "ok $name"
  fi
}
bare="env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM"
# Nothing set: refused before Qt starts.
expect unset 1 "no display: set DISPLAY" -- $bare timeout 30 "$app"
expect unset-with-dir 1 "use dumplens-cli" -- $bare timeout 30 "$app" /nonexistent
# DISPLAY names no X server: Qt's platform plugin fails; said the same way, not aborted.
expect dead-display 1 "no display: set DISPLAY" -- $bare DISPLAY=:98765 timeout 30 "$app"
# --help needs no display.
expect help 0 "dump folder to open" -- $bare timeout 30 "$app" --help
exit $fail
