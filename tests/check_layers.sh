#!/usr/bin/env bash
# check_layers.sh - the runtime core calls no op family (README "How it
# works"): every kg_/kgi_ symbol a core object needs is defined by a core
# object, the generated kernel table or the embedded bundle. Run by
# `ninja test` from the repository root, on the objects of the build.
set -euo pipefail
# every object build.ninja lists under "runtime core" (libkgen.a before $family_obj_list),
# and the generated table and bundle
core="error archs tensor geometry context bundle scratch layout version dlpack kg_table kg_bundle"
objs=""
for o in $core; do objs="$objs build/obj/$o.o"; done
defined=$(nm --defined-only $objs | awk 'NF == 3 && $3 ~ /^kg/ {print $3}' | sort -u)
bad=0
for o in $core; do
  for s in $(nm -u "build/obj/$o.o" | awk '$2 ~ /^kg/ {print $2}'); do
    if ! grep -qx "$s" <<<"$defined"; then
      echo "check_layers: $o.o (runtime/ or generated/) calls $s, which no core file defines (a call up into a family)" >&2
      bad=1
    fi
  done
done
[ $bad = 0 ] && echo "check_layers: ok: the core ($core) calls no family"
exit $bad
