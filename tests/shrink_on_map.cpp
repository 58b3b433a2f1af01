// LD_PRELOAD shim for the command-line tests: right after the program maps the file named by
// $QS_SHRINK_ON_MAP, the file is truncated to nothing, as if another process did it while it was mapped.
// $QS_SHRINK_ON_RENAME names a file truncated whenever the program renames a file (its outputs appear):
// whatever still reads that file afterwards fails. Deterministic, and no test hook in the program itself.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" void* mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
    using Mmap = void* (*)(void*, size_t, int, int, int, off_t);
    static const Mmap real_mmap = reinterpret_cast<Mmap>(dlsym(RTLD_NEXT, "mmap"));
    void* mapped = real_mmap(address, length, protection, flags, fd, offset);
    const char* victim = std::getenv("QS_SHRINK_ON_MAP");
    if (mapped == MAP_FAILED || fd < 0 || victim == nullptr) return mapped;
    char link[64], target[PATH_MAX];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        if (std::strcmp(target, victim) == 0 && truncate(target, 0) != 0) std::abort();
    }
    return mapped;
}

extern "C" int renameat(int old_dir, const char* old_name, int new_dir, const char* new_name) {
    using Renameat = int (*)(int, const char*, int, const char*);
    static const Renameat real_renameat = reinterpret_cast<Renameat>(dlsym(RTLD_NEXT, "renameat"));
    if (const char* victim = std::getenv("QS_SHRINK_ON_RENAME"))
        if (truncate(victim, 0) != 0) std::abort();
    return real_renameat(old_dir, old_name, new_dir, new_name);
}
