// What the hostile tenant's structure runs (python): every attack of issue 10's list, each reported on its
// own line as `VERDICT <attack> blocked <how>` or `VERDICT <attack> ESCAPED <what it got>`. argv[1] is a JSON
// object of targets the drill found on the host (paths and ports of the platform and of the other tenant):
// the attacker is assumed to know every path and port, which is the worst case.
export const HOSTILE_PROGRAM = String.raw`
import ctypes, errno, json, os, signal, socket, sys, time
T = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)

def verdict(name, escaped, detail):
    print("VERDICT %s %s %s" % (name, "ESCAPED" if escaped else "blocked", str(detail).replace("\n", " ")[:300]), flush=True)

def attempt(name, fn):
    try:
        got = fn()
        verdict(name, True, got)
    except Exception as e:
        verdict(name, False, "%s: %s" % (type(e).__name__, e))

def write_file(path):
    with open(path, "a") as f:
        f.write("\nprint('INJECTED BY ORG B')\n")
    return "appended to " + path

def read(path):
    with open(path, "rb") as f:
        return "read %d bytes of %s" % (len(f.read()), path)

def listdir(path):
    return "listed %s: %s" % (path, os.listdir(path)[:5])

def connect(port, host="127.0.0.1"):
    s = socket.create_connection((host, port), timeout=3)
    s.close()
    return "connected to %s:%d" % (host, port)

# 1. Identity: not root, not the worker's uid, no capabilities, no_new_privs, seccomp.
status = open("/proc/self/status").read()
field = lambda k: [l.split()[1] for l in status.splitlines() if l.startswith(k + ":")][0]
uid = os.getuid()
verdict("uid-not-platform", uid == 0 or uid == T["worker_uid"], "uid %d gid %d groups %s" % (uid, os.getgid(), os.getgroups()))
verdict("no-capabilities", int(field("CapEff"), 16) != 0 or int(field("CapBnd"), 16) != 0, "CapEff %s CapBnd %s" % (field("CapEff"), field("CapBnd")))
verdict("no-new-privs", field("NoNewPrivs") != "1", "NoNewPrivs %s" % field("NoNewPrivs"))
verdict("seccomp", field("Seccomp") != "2", "Seccomp %s" % field("Seccomp"))

# 2. Files: the other tenant's build, the builds root, the platform's secrets key, blobs, database files.
attempt("write-other-build", lambda: write_file(T["a_build_file"]))
attempt("read-other-build", lambda: read(T["a_build_file"]))
def list_builds():
    foreign = [e for e in os.listdir(T["builds_root"]) if not os.getcwd().startswith(os.path.join(T["builds_root"], e))]
    if foreign:
        return "sees other builds: %s" % foreign[:5]
    raise PermissionError("only its own build is visible there")
attempt("list-builds-root", list_builds)
attempt("read-secrets-key", lambda: read(T["secrets_key_file"]))
attempt("list-blobs", lambda: listdir(T["blob_dir"]))
attempt("list-postgres-data", lambda: listdir(T["pg_data_dir"]))
attempt("write-own-build", lambda: write_file(os.path.join(os.getcwd(), "structure.py")))
for d in ["/root", "/var/tmp", "/etc", "/usr/local/bin"]:
    attempt("write-" + d.strip("/").replace("/", "-"), lambda d=d: write_file(os.path.join(d, "hostile-" + T["marker"])))
with open("/tmp/hostile-" + T["marker"], "w") as f:
    f.write("private?")

# 3. Processes: other processes' environments, the worker, signals.
def proc_environs():
    seen = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            env = open("/proc/%s/environ" % p, "rb").read().decode("latin1")
        except OSError:
            continue
        if "DATABASE_URL" in env or "SECRETS_KEY" in env or T["a_run_marker"] in env:
            seen.append(p)
    if seen:
        return "read platform or other-tenant environments of pids %s" % seen
    raise PermissionError("no foreign environment among %d visible processes" % len([p for p in os.listdir("/proc") if p.isdigit()]))
attempt("read-proc-environ", proc_environs)
attempt("read-worker-environ", lambda: read("/proc/%d/environ" % T["worker_pid"]))
def signal_worker():
    os.kill(T["worker_pid"], 0)
    return "may signal the worker (pid %d)" % T["worker_pid"]
attempt("signal-worker", signal_worker)

# 4. Network: platform ports, the model provider, cloud metadata, abstract unix sockets.
for name, port in sorted(T["ports"].items()):
    attempt("connect-" + name, lambda port=port: connect(port))
attempt("connect-host-address", lambda: connect(T["host_port"], T["host_address"]))
attempt("connect-metadata", lambda: connect(80, "169.254.169.254"))
def abstract_socket():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect("\0" + T["abstract_socket"])
    s.close()
    return "connected to the host's abstract unix socket @%s" % T["abstract_socket"]
attempt("unix-socket", abstract_socket)
def reach_api():
    connect(T["api_port"])
    raise PermissionError("the api is reachable, as it must be")
attempt("api-reachable-control", reach_api)

# 5. Kernel attack surface: namespaces, ptrace, mount.
def syscall(name, *args):
    r = getattr(libc, name)(*args)
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (name, os.strerror(e)))
    return "%s succeeded" % name
attempt("unshare-userns", lambda: syscall("unshare", 0x10000000))
attempt("ptrace-attach", lambda: syscall("ptrace", 16, 1, None, None))
attempt("mount-tmpfs", lambda: syscall("mount", b"none", b"/tmp", b"tmpfs", 0, None))

# 6. Leave a process behind: double fork, new session, sleep with the marker in its argv.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "120", T["marker"]])
    os._exit(0)
os.wait()

# 7. Resources: fork bomb, disk, memory.
def fork_bomb():
    kids = []
    try:
        for i in range(100000):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
        return "forked %d processes" % len(kids)
    finally:
        for k in kids:
            os.kill(k, signal.SIGKILL)
        for k in kids:
            os.waitpid(k, 0)
attempt("fork-bomb", fork_bomb)
def fill_disk():
    chunk = b"x" * (1 << 20)
    n = 0
    try:
        with open(os.path.join(os.environ["HOME"], "fill"), "wb") as f:
            while n < 8192:
                f.write(chunk)
                n += 1
        return "wrote %d MiB" % n
    finally:
        try:
            os.remove(os.path.join(os.environ["HOME"], "fill"))
        except OSError:
            pass
attempt("fill-disk", fill_disk)
def exhaust_memory():
    # In a child: the run's control group kills the process that holds the most when the run passes its limit;
    # without one (rootless, no delegated cgroup v2) the per-process address-space limit refuses the allocation.
    pid = os.fork()
    if pid == 0:
        try:
            hold = []
            while len(hold) < 256:
                hold.append(bytearray(64 << 20))
            os._exit(0)
        except MemoryError:
            os._exit(3)
        finally:
            os._exit(4)
    status = os.waitpid(pid, 0)[1]
    if os.WIFSIGNALED(status):
        raise MemoryError("killed by signal %d at the run's memory limit" % os.WTERMSIG(status))
    if os.WEXITSTATUS(status) == 3:
        raise MemoryError("refused past the address-space limit of the process")
    return "allocated %d MiB" % (64 * 256)
attempt("exhaust-memory", exhaust_memory)
def memory_across_processes():
    # 4 processes, each holding 40% of the run's limit at once: 160% of it in all, each under it.
    each = T["memory_mb"] * 2 // 5
    kids = []
    for i in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                hold = bytearray(b"\x01") * (each << 20)
                time.sleep(3)
                os._exit(0)
            except MemoryError:
                os._exit(3)
            finally:
                os._exit(4)
        kids.append(pid)
    statuses = [os.waitpid(k, 0)[1] for k in kids]
    held = sum(1 for s in statuses if os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0)
    if held == 4:
        return "4 processes held %d MiB each at once: %d MiB, over the run's %d MiB" % (each, 4 * each, T["memory_mb"])
    raise MemoryError("%d of 4 processes held %d MiB at once; the rest were stopped" % (held, each))
attempt("memory-across-processes", memory_across_processes)
print("hostile done", flush=True)
`;

/** Organization A's structure: reads its secret, works a few seconds beside B, and says so. */
export const VICTIM_PROGRAM = `
import os, sys, time
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0)
print("A ok " + os.environ["A_SECRET"], flush=True)
`;
