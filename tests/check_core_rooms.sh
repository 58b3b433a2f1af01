#!/usr/bin/env bash
# core's rooms, lowest first (core/CMakeLists.txt says what each holds): a file of core may include headers of
# its own room and of the rooms below, never above. A header is found where it lives: "quantscope/x.hpp" in
# some room's include/quantscope/, a plain "x.hpp" in the including file's own src/ or in another room's src/
# (a room's internal header). Every folder of core is a room, and every header a file includes is one of core's.
#   usage: tests/check_core_rooms.sh [REPO]
set -euo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
rooms=(numerics formats quantize analysis view layer io)
rank() { local i; for i in "${!rooms[@]}"; do [ "${rooms[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }

bad=0
report() { echo "core rooms: $1"; bad=1; }

# The room that holds an included header, given as written ("quantscope/x.hpp" or "x.hpp") and the
# including file's own room (a plain name is first looked up beside the file).
room_of() {
    local included="$1" own="$2" room
    if [[ "$included" == quantscope/* ]]; then
        for room in "${rooms[@]}"; do
            [ -f "$repo/core/$room/include/$included" ] && { echo "$room"; return; }
        done
    else
        [ -f "$repo/core/$own/src/$included" ] && { echo "$own"; return; }
        for room in "${rooms[@]}"; do
            [ -f "$repo/core/$room/src/$included" ] && { echo "$room"; return; }
        done
    fi
    echo ""
}

for dir in "$repo"/core/*/; do
    name=$(basename "$dir")
    [ "$(rank "$name")" -ge 0 ] || report "core/$name/ is in no room (core/{${rooms[*]}}/)"
done

for file in $(cd "$repo" && find core -name '*.[ch]pp' | sort); do
    room=$(echo "$file" | cut -d/ -f2)
    own=$(rank "$room")
    [ "$own" -ge 0 ] || continue
    while IFS= read -r included; do
        [ -n "$included" ] || continue
        where=$(room_of "$included" "$room")
        if [ -z "$where" ]; then report "$file includes \"$included\", which no room of core holds"
        elif [ "$(rank "$where")" -gt "$own" ]; then report "$file ($room) includes \"$included\" of $where (a higher room)"
        fi
    done < <(grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]*("[^"]+"|<quantscope/[^>]+>)' "$repo/$file" |
             sed -E 's/.*["<]([^">]+)[">]$/\1/' || true)
done
[ "$bad" -eq 0 ] && echo "core rooms: every #include points down (${rooms[*]})"
exit "$bad"
