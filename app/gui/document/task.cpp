// The one OS-specific part of Task (task.hpp), kept out of the header so that it stays portable.
#include "gui/document/task.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace qs::gui {

void LowerThreadPriority() {
#if defined(__linux__)
    // Linux keeps a nice value per thread, and the OpenMP threads this one starts inherit it.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
}

}  // namespace qs::gui
