#include "runner/crash_handler.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>

#include "wire/crash_record.hpp"
#include "wire/protocol.hpp"

namespace course {

namespace {

// The executable's mapping, found once at start-up: everything the handler needs is
// ready before a signal comes.
uintptr_t g_bias = 0, g_low = 0, g_high = 0;
[[maybe_unused]] alignas(16) char g_alternate_stack[64 * 1024];

int find_executable(dl_phdr_info* info, size_t, void*) {
  g_bias = info->dlpi_addr;  // the first object listed is the executable itself
  g_low = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    g_low = std::min<uintptr_t>(g_low, info->dlpi_addr + ph.p_vaddr);
    g_high = std::max<uintptr_t>(g_high, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  return 1;
}

uint64_t offset_in_executable(uintptr_t address) {
  return address >= g_low && address < g_high ? uint64_t(address - g_bias) : 0;
}

[[maybe_unused]] uintptr_t faulting_pc(void* context) {
#if defined(__x86_64__)
  return uintptr_t(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return uintptr_t(static_cast<ucontext_t*>(context)->uc_mcontext.pc);
#else
  (void)context;
  return 0;
#endif
}

// Async-signal-safe: backtrace() was called once at start-up (it loads the unwinder
// then), and the record is written in one write().
[[maybe_unused]] void on_fatal_signal(int sig, siginfo_t*, void* context) {
  CrashRecord record;
  std::memcpy(record.magic, "KVCR", 4);
  record.signal = uint32_t(sig);
  record.flags = 0;
  record.count = 0;
  const bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
  if (uintptr_t pc = fault ? faulting_pc(context) : 0) {
    record.frames[record.count++] = offset_in_executable(pc);
    record.flags |= kCrashExactPc;
  }
  void* stack[kMaxCrashFrames + 4];
  const int n = backtrace(stack, kMaxCrashFrames + 4);
  // Frame 0 is this handler. The grader keeps only the learner's frames and merges the
  // faulting function's second appearance (the unwinder's view of the same pc).
  for (int i = 1; i < n && record.count < kMaxCrashFrames; ++i)
    record.frames[record.count++] = offset_in_executable(uintptr_t(stack[i]));
  const size_t bytes = offsetof(CrashRecord, frames) + record.count * sizeof(uint64_t);
  (void)!::write(kCrashFd, &record, bytes);
  // SA_RESETHAND restored the default action: returning re-runs the faulting instruction,
  // and a raised signal (abort) is delivered again, so the runner dies of the same signal.
  if (!fault) ::raise(sig);
}

// Where each exception was thrown: the last few throws of each thread, by the address of
// the thrown object (what std::exception_ptr holds), so the stack reported is the one of
// the exception the runner caught, not of a later one the code caught itself.
struct ThrowStack {
  const void* object;
  uint32_t count;
  uint64_t frames[kMaxCrashFrames];
};
constexpr int kThrowsKept = 4;
thread_local ThrowStack t_throws[kThrowsKept];
thread_local unsigned t_next_throw = 0;
bool g_record_throws = false;

using CxaThrow = void (*)(void*, std::type_info*, void (*)(void*));
CxaThrow g_real_throw = nullptr;

// Inlined into __cxa_throw, so that backtrace()'s frame 0 is __cxa_throw itself.
__attribute__((always_inline)) inline void record_throw(const void* object) {
  ThrowStack& slot = t_throws[t_next_throw++ % kThrowsKept];
  slot.object = object;
  slot.count = 0;
  void* stack[kMaxCrashFrames + 1];
  const int n = backtrace(stack, kMaxCrashFrames + 1);
  // Frame 0 is __cxa_throw below; frame 1 is the throw expression's function, or a
  // library function (std::__throw_out_of_range_fmt, outside the executable: 0).
  for (int i = 1; i < n && slot.count < kMaxCrashFrames; ++i)
    slot.frames[slot.count++] = offset_in_executable(uintptr_t(stack[i]));
}

}  // namespace

std::vector<uint64_t> current_exception_stack() {
  if (!g_record_throws) return {};
  // libstdc++'s exception_ptr is the thrown object's address (the one __cxa_throw got).
  static_assert(sizeof(std::exception_ptr) == sizeof(void*));
  const std::exception_ptr current = std::current_exception();
  const void* object = nullptr;
  std::memcpy(&object, static_cast<const void*>(&current), sizeof object);
  if (!object) return {};
  for (int back = 1; back <= kThrowsKept; ++back) {
    const ThrowStack& slot = t_throws[(t_next_throw - back) % kThrowsKept];
    if (slot.object == object) return std::vector<uint64_t>(slot.frames, slot.frames + slot.count);
  }
  return {};
}

bool throws_recorded() { return g_record_throws; }

void install_crash_handler() {
  if (::fcntl(kCrashFd, F_GETFD) < 0) return;
  ::fcntl(kCrashFd, F_SETFD, FD_CLOEXEC);
  dl_iterate_phdr(find_executable, nullptr);
  void* warm[2];
  backtrace(warm, 2);
  // Throws are recorded in every build (AddressSanitizer's own __cxa_throw comes next).
  g_real_throw = reinterpret_cast<CxaThrow>(dlsym(RTLD_NEXT, "__cxa_throw"));
  g_record_throws = g_real_throw != nullptr;
#if !defined(__SANITIZE_ADDRESS__)
  stack_t alternate{};
  alternate.ss_sp = g_alternate_stack;
  alternate.ss_size = sizeof g_alternate_stack;
  ::sigaltstack(&alternate, nullptr);
  struct sigaction action{};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &action, nullptr);
#endif
}

}  // namespace course

// Every throw in the runner passes here: the executable's __cxa_throw comes before
// libstdc++'s, also for the library's own throws (vector::at's std::out_of_range). It
// records the stack, then throws as libstdc++ does. This file has no throw expression of
// its own (the compiler would declare __cxa_throw differently).
namespace __cxxabiv1 {
extern "C" void __cxa_throw(void* object, std::type_info* type, void (*destructor)(void*)) {
  using course::g_real_throw;
  if (!g_real_throw)
    g_real_throw = reinterpret_cast<course::CxaThrow>(dlsym(RTLD_NEXT, "__cxa_throw"));
  if (course::g_record_throws) course::record_throw(object);
  g_real_throw(object, type, destructor);
  __builtin_unreachable();
}
}  // namespace __cxxabiv1
