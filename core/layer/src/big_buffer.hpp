// Uninitialised arrays for the layer's large temporaries (a 4096 x 4096 W dequantized is 64 MiB). Fresh
// memory costs a page fault per 4 KiB page when first written, which for such arrays takes as long as the
// arithmetic: above a few MiB the array is aligned to 2 MiB and asks for transparent huge pages, so that
// it faults in 2 MiB at a time. Private to the layer.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace qs::detail {

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};

template <class T>
class BigBuffer {
public:
    BigBuffer() = default;
    explicit BigBuffer(std::size_t n) : size_(n) {
        constexpr std::size_t kHuge = std::size_t{2} << 20;
        const std::size_t bytes = n * sizeof(T);
        if (bytes == 0) return;
        void* p = nullptr;
        if (bytes >= 2 * kHuge) {
            const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
            p = std::aligned_alloc(kHuge, rounded);
#ifdef MADV_HUGEPAGE
            if (p) ::madvise(p, rounded, MADV_HUGEPAGE);
#endif
        } else {
            p = std::malloc(bytes);
        }
        if (!p) throw std::bad_alloc();
        data_.reset(static_cast<T*>(p));
    }
    T* data() { return data_.get(); }
    const T* data() const { return data_.get(); }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& operator[](std::size_t i) { return data_.get()[i]; }
    const T& operator[](std::size_t i) const { return data_.get()[i]; }

private:
    std::unique_ptr<T, FreeDeleter> data_;
    std::size_t size_ = 0;
};

}  // namespace qs::detail
