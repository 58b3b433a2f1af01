#!/usr/bin/env bash
# core's rooms call only downwards: every symbol of namespace qs that a room's library needs and does not define
# itself must come from a room below it, never from one above (an include can point down while a call runs
# up: a function declared in a lower room's header and defined in a higher room's source). The libraries are
# given lowest room first, as core/CMakeLists.txt builds them.
#   usage: tests/check_core_links.sh LIB... (lowest room first)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 LIB... (lowest room first)" >&2; exit 2; }
libs=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# defined.N: the qs symbols library N defines (mangled: functions and data _ZN2qs..., vtables, typeinfo, guards and local statics _ZTV/_ZTI/_ZTS/_ZGV/_ZZ); undefined.N: those it needs.
for i in "${!libs[@]}"; do
    nm --defined-only "${libs[$i]}" 2>/dev/null | awk '$3 ~ /^_Z(T[VIS]|GV|Z)?N(K)?2qs/ {print $3}' | sort -u > "$tmp/defined.$i"
    nm --undefined-only "${libs[$i]}" 2>/dev/null | awk '$NF ~ /^_Z(T[VIS]|GV|Z)?N(K)?2qs/ {print $NF}' | sort -u > "$tmp/undefined.$i"
done

bad=0
: > "$tmp/below"
for i in "${!libs[@]}"; do
    cat "$tmp/below" "$tmp/defined.$i" | sort -u > "$tmp/here"
    comm -23 "$tmp/undefined.$i" "$tmp/here" > "$tmp/missing"
    for j in "${!libs[@]}"; do
        [ "$j" -gt "$i" ] || continue
        comm -12 "$tmp/missing" "$tmp/defined.$j" > "$tmp/up"
        if [ -s "$tmp/up" ]; then
            echo "core rooms: $(basename "${libs[$i]}") calls up into $(basename "${libs[$j]}"): $(c++filt < "$tmp/up" | head -5 | paste -sd';' -)"
            bad=1
        fi
    done
    cp "$tmp/here" "$tmp/below"
done
[ "$bad" -eq 0 ] && echo "core rooms: every call points down (${#libs[@]} libraries)"
exit "$bad"
