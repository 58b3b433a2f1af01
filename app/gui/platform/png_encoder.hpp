// PNG encoding for screenshots and rendered figures: stb_image_write (libstb-dev's header) compiled in this
// project with its allocations routed through functions that throw, because libstb's own build asserts (a
// signal) when memory runs out, as it does under an address-space cap; a failed encoding here is a `false`.
#pragma once

#include <cstdint>
#include <vector>

namespace qs::gui {

// Encodes `height` rows of `width` 8-bit RGBA pixels (bottom row first when `bottom_up`) as PNG into `png`.
// False, with `png` empty and everything the encoder allocated freed, when memory runs out.
bool EncodePng(int width, int height, const std::uint8_t* rgba, bool bottom_up, std::vector<std::uint8_t>& png);

// Tests only: the encoder's allocations after the first `count` fail (a negative count: none fail).
void FailPngAllocationsAfterForTest(long count);

}  // namespace qs::gui
