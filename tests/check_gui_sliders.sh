#!/usr/bin/env bash
# Every slider and drag of the window goes through widgets/widgets.cpp's SafeSlider* (limits that ImGui
# accepts whatever the tensor: finite, ordered, within FLT_MAX/2 and INT_MAX/2): a direct ImGui::Slider*,
# VSlider* or Drag* anywhere else in app/gui is reported, since its limits could come straight from data.
#   usage: tests/check_gui_sliders.sh [REPO]
set -euo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
found=$(cd "$repo" && grep -rnE 'ImGui::(Slider|VSlider|Drag)[A-Za-z0-9]*\(' app/gui --include='*.cpp' --include='*.hpp' |
        grep -v '^app/gui/widgets/widgets\.cpp:' || true)
if [ -n "$found" ]; then
    echo "sliders: use SafeSliderFloat / SafeSliderInt (gui/widgets/widgets.hpp) instead of:"
    echo "$found"
    exit 1
fi
