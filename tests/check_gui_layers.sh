#!/usr/bin/env bash
# The window's layers, lowest first: a file may include headers of its own layer and of the layers below,
# never above. document/ is the model: no ImGui, GL, GLFW or EGL, and nothing of platform/ or widgets/
# (which are ImGui code). Only app/ includes the command line's cli/ (the only layer that links it). core/
# includes nothing of the program at all.
#   usage: tests/check_gui_layers.sh [REPO]
set -euo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
layers=(platform widgets document panels app)
rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }

bad=0
report() { echo "layering: $1"; bad=1; }

for file in $(cd "$repo" && find app/gui -name '*.[ch]pp' | sort); do
    layer=$(echo "$file" | cut -d/ -f3)
    own=$(rank "$layer")
    [ "$own" -ge 0 ] || { report "$file is in no layer (app/gui/{${layers[*]}}/)"; continue; }
    while IFS= read -r included; do
        other=$(rank "$included")
        if [ "$other" -lt 0 ]; then report "$file includes gui/$included/, which is no layer"
        elif [ "$other" -gt "$own" ]; then report "$file ($layer) includes gui/$included/ (a higher layer)"
        elif [ "$layer" = document ] && [ "$included" != document ]; then
            report "$file (document) includes gui/$included/ (ImGui code)"
        fi
    done < <(grep -oE '^#include "gui/[a-z_]+/' "$repo/$file" | cut -d/ -f2 || true)
    if [ "$layer" != app ] && grep -qE '^#include "cli/' "$repo/$file"; then
        report "$file ($layer) includes cli/ (only app/ links the command line)"
    fi
    if [ "$layer" = document ] && grep -qE '^#include <(imgui|GL/|GLFW/|EGL/)' "$repo/$file"; then
        report "$file (document) includes ImGui, GL, GLFW or EGL"
    fi
done
if grep -rlE '^#include ("gui/|"cli/|<imgui|<GL/|<GLFW/|<EGL/)' "$repo/core" >/dev/null; then
    report "core includes the program, ImGui or GL: $(grep -rlE '^#include ("gui/|"cli/|<imgui|<GL/|<GLFW/|<EGL/)' "$repo/core" | head -3 | tr '\n' ' ')"
fi
[ "$bad" -eq 0 ] && echo "layering: every #include points down"
exit "$bad"
