// The seccomp filter of every sandboxed process (bubblewrap loads it with --seccomp just before the exec):
// classic BPF over struct seccomp_data, x86_64 only. It refuses (EPERM) the syscalls a tenant needs for
// nothing but attacking the kernel or its neighbours: tracing, mounts, kernel modules and keyrings, BPF,
// io_uring, new namespaces (unshare, setns, clone with CLONE_NEW*), every socket family but unix, IPv4, IPv6 and
// route netlink (no vsock to the hypervisor, no raw packets, no bluetooth, can, xdp, ...), and the x32 ABI that
// could sidestep the filter. Unix sockets are allowed: abstract addresses belong to a network namespace, and
// every sandboxed process has one of its own (network.ts), so the host's (D-Bus, systemd, containerd) are out
// of reach; the sandbox's file system holds no socket of the host's to connect to by path.
// Everything else is allowed: interpreters, pip and npm work unchanged.

const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

/** x86_64 numbers of the refused syscalls. */
export const REFUSED_SYSCALLS: Record<string, number> = {
  ptrace: 101,
  syslog: 103,
  vhangup: 153,
  pivot_root: 155,
  adjtimex: 159,
  acct: 163,
  settimeofday: 164,
  mount: 165,
  umount2: 166,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  sethostname: 170,
  setdomainname: 171,
  iopl: 172,
  ioperm: 173,
  init_module: 175,
  delete_module: 176,
  quotactl: 179,
  lookup_dcookie: 212,
  clock_settime: 227,
  kexec_load: 246,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  unshare: 272,
  perf_event_open: 298,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  clock_adjtime: 305,
  setns: 308,
  process_vm_readv: 310,
  process_vm_writev: 311,
  finit_module: 313,
  kexec_file_load: 320,
  bpf: 321,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
};
const SOCKET = 41;
const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
/** The one netlink protocol user code needs: glibc's getaddrinfo asks it for the host's addresses. */
const NETLINK_ROUTE = 0;
/** The families socket() may open (Python and Node need nothing else); socketpair is not filtered. */
export const ALLOWED_SOCKET_FAMILIES = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
const CLONE = 56;
const CLONE3 = 435;
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME. */
const CLONE_NEW_ANY =
  0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;

type Insn = [code: number, jt: number, jf: number, k: number];

/** The filter as bytes (struct sock_filter[]), or undefined on an architecture it does not cover. */
export function seccompProgram(arch: string = process.arch): Buffer | undefined {
  if (arch !== 'x64') return undefined;
  const p: Insn[] = [
    [LD_W_ABS, 0, 0, 4], // arch
    [JEQ_K, 1, 0, AUDIT_ARCH_X86_64],
    [RET_K, 0, 0, RET_KILL_PROCESS],
    [LD_W_ABS, 0, 0, 0], // syscall number
    [JGE_K, 0, 1, X32_SYSCALL_BIT],
    [RET_K, 0, 0, retErrno(EPERM)],
  ];
  for (const nr of Object.values(REFUSED_SYSCALLS)) p.push([JEQ_K, 0, 1, nr], [RET_K, 0, 0, retErrno(EPERM)]);
  // socket(): an allow-list of families; any other is "not supported" (EAFNOSUPPORT), which libraries probe
  // for. Netlink only for routes (getaddrinfo).
  p.push(
    [JEQ_K, 0, 9, SOCKET],
    [LD_W_ABS, 0, 0, 16], // args[0] (domain)
    [JEQ_K, 6, 0, AF_UNIX],
    [JEQ_K, 5, 0, AF_INET],
    [JEQ_K, 4, 0, AF_INET6],
    [JEQ_K, 0, 2, AF_NETLINK],
    [LD_W_ABS, 0, 0, 32], // args[2] (protocol)
    [JEQ_K, 1, 0, NETLINK_ROUTE],
    [RET_K, 0, 0, retErrno(EAFNOSUPPORT)],
    [RET_K, 0, 0, RET_ALLOW],
  );
  // clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes libc fall back to clone.
  p.push([JEQ_K, 0, 1, CLONE3], [RET_K, 0, 0, retErrno(ENOSYS)]);
  p.push(
    [JEQ_K, 0, 3, CLONE],
    [LD_W_ABS, 0, 0, 16], // args[0] (flags), low 32 bits
    [JSET_K, 0, 1, CLONE_NEW_ANY],
    [RET_K, 0, 0, retErrno(EPERM)],
    [RET_K, 0, 0, RET_ALLOW],
  );
  const out = Buffer.alloc(p.length * 8);
  p.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
