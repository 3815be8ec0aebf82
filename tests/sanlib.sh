#!/usr/bin/env bash
# Builds the runtime library again with clang and sanitizer flags, for the
# fuzz targets and the ThreadSanitizer test:
#   tests/sanlib.sh OUT.a CFLAGS...
# The sources are exactly the library's: every `build build/obj/X.o: cc SRC`
# edge of build.ninja and the generated fragment whose SRC is runtime/*.c or
# a generated .c other than a CPU reference; so a new file in the library is
# picked up without editing this. The bundle's embedded fatbins are not
# rebuilt (build/obj/kg_bundle.o is linked as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
shift
dir=${out%.a}.obj
mkdir -p "$dir"
archs=$(sed -n 's/^archs = //p' build.ninja)
ptx=$(sed -n 's/^ptx_arch = *//p' build.ninja)
text="$(echo $archs | sed 's/\([0-9]*\)/sm_\1/g; s/ /, /g')${ptx:+ (+PTX compute_$ptx)}"
srcs=$(cat build.ninja generated/build.ninja | sed -n 's/^build build\/obj\/[^ ]*\.o: cc \(\(runtime\|generated\)\/[^ ]*\.c\).*/\1/p' |
       grep -v 'reference\.c$' | sort -u)
objs=()
for src in $srcs; do
    o=$dir/$(basename "$src" .c).o
    objs+=("$o")
    if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ "$out" -ot build/libkgen.a ]; then
        clang -std=c11 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE -Iruntime -Igenerated -Itemplates \
            -I/usr/local/cuda/include "$@" -DKG_BUNDLE_ARCHS="$(echo $archs | sed 's/ /,/g')" \
            -DKG_BUNDLE_PTX="${ptx:-0}" -DKG_BUNDLE_ARCHS_TEXT="\"$text\"" -c "$src" -o "$o" &
        while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
    fi
done
wait
rm -f "$out"
ar crs "$out" "${objs[@]}"
echo "$out: ${#objs[@]} objects"
