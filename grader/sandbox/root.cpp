#include "sandbox/root.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace course::sandbox {

namespace fs = std::filesystem;
using Op = RootStep::Op;

namespace {

// The child first makes a small tmpfs on /tmp its root, with the old root below it at
// /oldroot and the new one being filled at /newroot; the second pivot keeps only /newroot.
constexpr const char* kBase = "/tmp";
const std::string kOld = "/oldroot";
const std::string kNew = "/newroot";

struct Planner {
  std::vector<RootStep> steps;
  std::set<std::string> made;  // folders created inside, by inside path
  uint64_t copied_bytes = 0;   // files copied into the root tmpfs

  void add(Op op, std::string a, std::string b = "", std::string data = "", unsigned long flags = 0) {
    steps.push_back({op, std::move(a), std::move(b), std::move(data), flags});
  }

  // Creates every folder of `inside` (an inside path) below the new root.
  void folders(const fs::path& inside) {
    fs::path at;
    for (const fs::path& part : inside) {
      at /= part;
      if (at == "/" || made.count(at.string())) continue;
      made.insert(at.string());
      add(Op::mkdir, kNew + at.string());
    }
  }

  // Binds (or copies) `source` (outside) at `target` (inside).
  void bind(const fs::path& source, const fs::path& target, bool writable, bool copy = false) {
    std::error_code ec;
    const fs::path real = fs::canonical(source, ec);
    if (ec) throw std::runtime_error("cannot put " + source.string() + " in the sandbox: " + ec.message());
    folders(target.parent_path());
    if (copy) {
      copied_bytes += fs::file_size(real, ec);
      add(Op::copy, kOld + real.string(), kNew + target.string());
      return;
    }
    if (fs::is_directory(real, ec))
      folders(target);
    else
      add(Op::touch, kNew + target.string());
    add(Op::bind, kOld + real.string(), kNew + target.string());
    if (!writable) add(Op::bind_readonly, kNew + target.string());
  }

  // /usr, and /bin, /sbin, /lib* as they are: links into /usr (merged /usr) or folders.
  void system() {
    bind("/usr", "/usr", false);
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
      std::error_code ec;
      const auto status = fs::symlink_status(top, ec);
      if (ec || !fs::exists(status)) continue;
      if (fs::is_symlink(status))
        add(Op::symlink, fs::read_symlink(top, ec).string(), kNew + top);
      else if (fs::is_directory(status))
        bind(top, top, false);
    }
  }

  void dev() {
    folders("/dev");
    for (const char* node : {"null", "zero", "full", "random", "urandom"}) {
      const std::string path = std::string("/dev/") + node;
      if (!fs::exists(path)) continue;
      add(Op::touch, kNew + path);
      add(Op::bind, kOld + path, kNew + path);
    }
    add(Op::symlink, "/proc/self/fd", kNew + "/dev/fd");
    add(Op::symlink, "/proc/self/fd/0", kNew + "/dev/stdin");
    add(Op::symlink, "/proc/self/fd/1", kNew + "/dev/stdout");
    add(Op::symlink, "/proc/self/fd/2", kNew + "/dev/stderr");
  }
};

bool make_folder(const char* path) { return ::mkdir(path, 0755) == 0 || errno == EEXIST; }

bool make_file(const char* path) {
  int fd = ::open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// A bind mount made read-only. In a user namespace the flags the source mount already
// has (nosuid, nodev, noexec, atime) are locked and must be kept on the remount.
bool make_readonly(const char* path) {
  struct statvfs st;
  if (::statvfs(path, &st) != 0) return false;
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  if (st.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (st.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (st.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (st.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (st.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (st.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return ::mount(nullptr, path, nullptr, flags, nullptr) == 0;
}

// Copies a file into the new root, readable and executable by everyone.
bool copy_file(const char* from, const char* to) {
  const int in = ::open(from, O_RDONLY | O_CLOEXEC);
  const int out = in < 0 ? -1 : ::open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0555);
  bool ok = in >= 0 && out >= 0;
  while (ok) {
    const ssize_t n = ::sendfile(out, in, nullptr, size_t(1) << 30);
    if (n == 0) break;
    ok = n > 0;
  }
  ok = ok && ::fchmod(out, 0555) == 0;
  if (in >= 0) ::close(in);
  if (out >= 0) ::close(out);
  return ok;
}

bool pivot(const char* new_root, const char* put_old) {
  return ::syscall(SYS_pivot_root, new_root, put_old) == 0;
}

}  // namespace

std::vector<RootStep> plan_root(const RootPlan& plan) {
  Planner p;
  p.add(Op::make_private, "/");
  p.add(Op::mount_tmpfs, kBase, "", "mode=0755,size=64k", MS_NOSUID | MS_NODEV);
  p.add(Op::mkdir, std::string(kBase) + kNew);
  p.add(Op::mkdir, std::string(kBase) + kOld);
  p.add(Op::pivot_into, kBase, std::string(kBase) + kOld);
  p.add(Op::mount_tmpfs, kNew, "", "mode=0755,size=1m", MS_NOSUID | MS_NODEV);
  const size_t root_mount = p.steps.size() - 1;
  p.made.insert("/");
  p.system();
  p.folders("/etc");
  for (const std::string& name : plan.etc_files) {
    const fs::path path = fs::path("/etc") / name;
    if (fs::exists(path)) p.bind(path, path, false);
  }
  p.dev();
  if (plan.proc) {
    p.folders("/proc");
    p.add(Op::mount_proc, kNew + "/proc");
  }
  p.folders("/tmp");
  p.add(Op::mount_tmpfs, kNew + "/tmp", "",
        "mode=1777,size=" + std::to_string(plan.scratch_bytes > 0 ? plan.scratch_bytes : 4096),
        MS_NOSUID | MS_NODEV | MS_NOEXEC);
  for (const Bind& b : plan.binds) p.bind(b.source, b.target, b.writable, b.copy);
  p.steps[root_mount].data = "mode=0755,size=" + std::to_string((uint64_t(1) << 20) + p.copied_bytes);
  p.folders(plan.workdir);
  p.add(Op::pivot_final, kNew);
  p.add(Op::readonly_root, "/");
  p.add(Op::chdir, plan.workdir);
  return std::move(p.steps);
}

const char* enter_root(const std::vector<RootStep>& steps, const char** failed_path) {
  for (const RootStep& s : steps) {
    const char* a = s.a.c_str();
    *failed_path = a;
    switch (s.op) {
      case Op::make_private:
        if (::mount(nullptr, a, nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return "making mounts private";
        break;
      case Op::mount_tmpfs:
        if (::mount("tmpfs", a, "tmpfs", s.flags, s.data.c_str()) != 0) return "mounting a tmpfs";
        break;
      case Op::mkdir:
        if (!make_folder(a)) return "creating a folder";
        break;
      case Op::touch:
        if (!make_file(a)) return "creating a mount point";
        break;
      case Op::bind:
        *failed_path = s.b.c_str();
        if (::mount(a, s.b.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return "binding";
        break;
      case Op::copy:
        *failed_path = s.b.c_str();
        if (!copy_file(a, s.b.c_str())) return "copying";
        break;
      case Op::bind_readonly:
        if (!make_readonly(a)) return "making a bind read-only";
        break;
      case Op::symlink:
        *failed_path = s.b.c_str();
        if (::symlink(a, s.b.c_str()) != 0 && errno != EEXIST) return "creating a link";
        break;
      case Op::mount_proc:
        if (::mount("proc", a, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return "mounting /proc";
        break;
      case Op::pivot_into:
        if (!pivot(a, s.b.c_str()) || ::chdir("/") != 0) return "pivoting into the staging root";
        break;
      case Op::pivot_final:
        // pivot_root(".", ".") stacks the old root on the new one; detaching it leaves
        // only the new root, and with it every path of the machine out of reach.
        if (::chdir(a) != 0 || !pivot(".", ".") || ::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0)
          return "pivoting into the sandbox root";
        break;
      case Op::readonly_root:
        if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0)
          return "making the root read-only";
        break;
      case Op::chdir:
        if (::chdir(a) != 0) return "entering the working folder";
        break;
    }
  }
  return nullptr;
}

}  // namespace course::sandbox
