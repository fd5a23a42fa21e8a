// A network namespace per sandboxed process tree (a run, a build step): bubblewrap makes it
// (--unshare-net), and pasta (Debian's `passt`), a user-mode network helper, connects it to the outside
// through ordinary sockets of the host. So a run sees none of the host's sockets (/proc/net/tcp, abstract
// unix sockets) and cannot listen on a host port: the helper forwards nothing inwards.
//
// The helper runs as the run's own uid (it is started after setpriv): every connection it makes on the
// host's side belongs to that uid, and the owner-matched firewall of firewall.ts decides as it always did.
// One list of refused ranges covers a run whichever way it goes out, and the helper can reach nothing the
// run's uid could not.
//
// Inside, the namespace has an address of its own (not the host's), so the host's own addresses are remote
// from there and go through the helper and the firewall like any other. The gateway is not mapped to the
// host (--no-map-gw). The only way to the host's loopback is the helper's outbound forwarding (-T) of
// chosen ports: the api's (GT_CLOUD_BASE_URL on 127.0.0.1) and the operator's SANDBOX_ALLOW_HOST_PORTS.
// DNS: the host's resolvers (/etc/resolv.conf, seen by the run too) are reached through the helper as they
// are. A resolver on the host's loopback (systemd-resolved's 127.0.0.53) is out of reach: this pasta's DNS
// forwarding ignores loopback resolvers, so Sandbox.open warns (see loopbackResolvers).
//
// The launcher (LAUNCHER, a bash script run as the run's uid) starts bubblewrap, writes the uid and gid map
// of its user namespace, attaches pasta to its network namespace, lets the program start once the network
// is up, and ends the helper when bubblewrap ends (the helper also dies with the launcher: --pdeathsig).
import fs from 'node:fs';
import net from 'node:net';
import { SANDBOX_SETUP_EXIT_CODE, SANDBOX_SETUP_PREFIX } from './setup-failure';

/** The namespace's side: a private /24 of its own, not the host's address; the gateway is the helper. */
export const NS_ADDRESS = {
  v4: '10.0.2.100',
  prefix: 24,
  gateway: '10.0.2.2',
  v6: 'fd7a:7a72::100',
  gateway6: 'fd7a:7a72::2',
};

/**
 * How long the launcher waits for a step of the sandbox's set-up (bubblewrap's namespaces, the loopback, pasta's
 * report) that shows no sign of work (see `working` in LAUNCHER), and for one that does. A busy host makes set-up
 * slow, not failed: 100 runs starting at once on 2 cores kept pasta waiting over 20 s for the kernel's network
 * lock (bench/RESULTS.md, `pasta-starve`). A run's own time limit still applies meanwhile.
 */
export const SETUP_STALL_S = 20;
export const SETUP_LIMIT_S = 300;

/** The fds the launcher gives bubblewrap (below the 10+ that bash gives its own). */
const INFO_FD = 5;
const USERNS_GATE_FD = 6;
const EXEC_GATE_FD = 7;

/**
 * Run as `bash -c LAUNCHER tarmac-netns <pasta> <setpriv> <uid> <gid> <inside uid> <inside gid> <pasta options...>
 * -- <n> <setup: n words> <m> <limits: m words> <command...>`, where <command> is bubblewrap (with bwrapArgs()),
 * <uid>:<gid> (the launcher's own) is mapped to <inside uid>:<inside gid> in the run's user namespace, <setup>
 * (empty, or the rootless mode's firewall loader) runs once the map is written, and each word of <limits> is the
 * options of one `ulimit` (bash's builtin: no program of its own) set in the process that then executes <command>,
 * so that they bind the run's processes and not the helper.
 */
export const LAUNCHER = String.raw`
set -u
pasta=$1 setpriv=$2 uid=$3 gid=$4 inside_uid=$5 inside_gid=$6
shift 6
helper_options=()
while [ "$1" != -- ]; do helper_options+=("$1"); shift; done
shift
# The setup command by its number of words (it may hold a -- of its own), then the limits.
setup=("${'${@:2:$1}'}")
shift $(($1 + 1))
limits=("${'${@:2:$1}'}")
shift $(($1 + 1))
# A pipe without a fork: bash (5.1+) gives a short here-string as the read end of a pipe it has written it to;
# /dev/fd/N opens that pipe again for reading and for writing, and the read takes the here-string's newline
# off. An older bash gives a file instead: then a process substitution's pipe (one fork each).
pipe() {
  local p
  exec {p}<<<''
  if [ -p /dev/fd/$p ]; then
    eval "exec {$1}</dev/fd/$p {$2}>/dev/fd/$p {p}<&-"
    read -r -u ${'${!1}'} _
  else
    exec {p}<&- {p}<> <(:)
    eval "exec {$1}</dev/fd/$p {$2}>/dev/fd/$p {p}>&-"
  fi
}
# Whether the step that sets up the sandbox (bubblewrap, or pasta with its threads and children: family) is still
# at work, asked about once a second while the launcher waits for it: a step that is slow because the host is
# busy waits, one that is stuck or gone fails. At work: one of the processes named is running or waiting in the
# kernel (state R or D: on a busy host,
# mostly the kernel's network lock, RTNL, which every network namespace's set-up and teardown on the host takes in
# turn; pasta waits in D for the child it runs in the namespace), or their CPU time (with their reaped children's)
# grew. Else it fails, $why saying how: the first is gone, nothing moved for ${SETUP_STALL_S} s, or ${SETUP_LIMIT_S} s
# passed since watch() (a bound for a step that keeps moving and never reports).
watch() { since=$EPOCHSECONDS moved=$EPOCHSECONDS seen= why=; }
# A process, its other threads and its children (into fam): a helper that waits for a child of its own (pasta
# enters the namespace in one, and sleeps meanwhile) is at work while the child is.
family() {
  local t c
  fam=($1)
  for t in /proc/$1/task/*; do
    [ "${'${t##*/}'}" = "$1" ] || fam+=(${'${t##*/}'})
    # (The list ends without a newline, so read answers 1 although it read it.)
    c=
    read -r c <$t/children 2>/dev/null
    fam+=($c)
  done
}
working() {
  local p line f sig= busy=
  for p; do
    read -r line </proc/$p/stat 2>/dev/null || continue
    f=(${'${line##*) }'})
    [ $p != $1 ] || [ ${'${f[0]}'} != Z ] || break
    [[ ${'${f[0]}'} == [RD] ]] && busy=1
    sig+="${'${f[11]}'}+${'${f[12]}'}+${'${f[13]}'}+${'${f[14]}'} "
  done
  if [ -z "$sig" ] || ! kill -0 $1 2>/dev/null; then
    why="it is gone"
    return 1
  fi
  [ -z "$busy" ] && [ "$sig" == "$seen" ] || moved=$EPOCHSECONDS
  seen=$sig
  ((EPOCHSECONDS - moved < ${SETUP_STALL_S})) || { why="no progress for ${SETUP_STALL_S} s"; return 1; }
  ((EPOCHSECONDS - since < ${SETUP_LIMIT_S})) || { why="no report within ${SETUP_LIMIT_S} s"; return 1; }
}
pipe info_r info_w
pipe userns_r userns_w
pipe exec_r exec_w
pipe ready_r ready_w
pipe helper_err_r helper_err_w
# (What bash adds to its commands' environment, SHLVL and _, does not reach the program: bubblewrap's --clearenv.)
# The limits are set in the forked process that then becomes bubblewrap (a limit that cannot be set: exit 125,
# as prlimit would), not in the launcher: the helper started below is not bound by them.
{
  for limit in "${'${limits[@]}'}"; do ulimit $limit || exit 125; done
  exec "$@"
} ${INFO_FD}>&$info_w ${USERNS_GATE_FD}<&$userns_r ${EXEC_GATE_FD}<&$exec_r \
  {info_r}<&- {info_w}>&- {userns_r}<&- {userns_w}>&- {exec_r}<&- {exec_w}>&- {ready_r}<&- {ready_w}>&- {helper_err_r}<&- {helper_err_w}>&- &
sandbox=$!
exec {info_w}>&- {userns_r}<&- {exec_r}<&-
# bubblewrap's child (pid 1 of the run) is killed too: it loses bubblewrap's parent-death signal when its
# credentials change, and would otherwise run the program, without its network, once the launcher's exit
# closes the gate it waits on.
child=
# Its line is the launcher's last on stderr (the supervisor reads the last): bash's own report of the job it
# killed ("... Killed ...") is kept off stderr, or the run ended FAILED "exited with code 125" instead.
fail() {
  kill -KILL $child $sandbox 2>/dev/null
  wait $sandbox 2>/dev/null
  echo "${SANDBOX_SETUP_PREFIX}the sandbox's network could not be set up: $1" >&2
  exit ${SANDBOX_SETUP_EXIT_CODE}
}
# bubblewrap reports its child's pid once the namespaces exist; the child then waits for its uid map.
# (read fails on end of file, bubblewrap gone, with a status of 1, on its 1 s timeout with one above 128.)
watch
while [ -z "$child" ]; do
  if read -r -t 1 -u $info_r line; then
    [[ $line =~ \"child-pid\":\ *([0-9]+) ]] && child=${'${BASH_REMATCH[1]}'}
  elif (($? <= 128)) || ! working $sandbox; then
    break
  fi
done
# No pid: bubblewrap failed first, and its own status and message say why; or it is stuck (it waits on the
# uid-map gate this launcher holds: ending the launcher ends it).
if [ -z "$child" ]; then
  kill -0 $sandbox 2>/dev/null && fail "bubblewrap did not report its namespaces ($why)"
  wait $sandbox
  exit $?
fi
{ echo deny >/proc/$child/setgroups && echo "$inside_uid $uid 1" >/proc/$child/uid_map && echo "$inside_gid $gid 1" >/proc/$child/gid_map; } 2>/dev/null ||
  fail "could not map the run's uid"
# The rootless mode's packet filter, loaded into the run's namespaces (@child@ is bubblewrap's child) before
# anything of the run starts (namespace-firewall.ts).
if [ ${'${#setup[@]}'} -gt 0 ]; then
  "${'${setup[@]/#@child@/$child}'}" {info_r}<&- {userns_w}>&- {exec_w}>&- {ready_r}<&- {ready_w}>&- \
    {helper_err_r}<&- {helper_err_w}>&- ||
    fail "could not install the run's firewall"
fi
# (info_r stays open: bubblewrap writes more after the pid, and a closed pipe would kill it with SIGPIPE.)
exec {userns_w}>&-
# bubblewrap's child then adds 127.0.0.1 to its loopback and brings it up, and fails if the loopback is up
# already: pasta brings it up too (the kernel then adds 127.0.0.1 itself, and bubblewrap's add meets EEXIST).
# So pasta starts once the namespace's loopback has its address. (The read is a sleep without a fork: 1 ms for
# the first 50 looks, where it mostly comes up within a few, then 4 ms.)
watch
pause=0.001
for ((tries = 1; ; tries++)); do
  [[ $(< /proc/$child/net/fib_trie) == *127.0.0.1* ]] 2>/dev/null && break
  kill -0 $sandbox 2>/dev/null || { wait $sandbox; exit $?; }
  ((tries % 250)) || working $child $sandbox || fail "the loopback did not come up ($why)"
  ((tries < 50)) || pause=0.004
  read -r -t $pause -u $ready_r _
done
# pasta writes its pid (-P) once the namespace's interface, addresses and routes are up: to its stdout, the
# ready pipe (passt since 2024 closes every inherited descriptor but 0-2, so /dev/fd/<n> is no longer open
# by then). Its stderr goes to a pipe of the launcher's, read only if it fails to start: on the run's stdout
# and stderr it would hold them open until its exit, and the run's output is finished only when they close.
"$setpriv" --pdeathsig KILL -- "$pasta" "${'${helper_options[@]}'}" -P /dev/stdout "$child" \
  {info_r}<&- {ready_r}<&- {exec_w}>&- {helper_err_r}<&- >&$ready_w 2>&$helper_err_w &
helper=$!
exec {ready_w}>&- {helper_err_w}>&-
watch
until read -r -t 1 -u $ready_r _; do
  if (($? > 128)); then
    family $helper
    working "${'${fam[@]}'}" && continue
  else
    why="it is gone"
  fi
  said=
  read -r -t 1 -d '' -u $helper_err_r said
  if [ "$why" != "it is gone" ] && kill -0 $helper 2>/dev/null; then
    how=$why
  else
    wait $helper 2>/dev/null
    how="it exited with status $?"
  fi
  fail "pasta did not start ($how): $(printf %s "$said" | tr '\n' ' ')"
done
# (pasta ignores SIGPIPE: whatever it writes later meets a closed pipe.)
exec {ready_r}<&- {exec_w}>&- {helper_err_r}<&-
wait $sandbox
status=$?
# The run's status does not depend on the helper's exit, which takes tens of milliseconds (it unmaps its
# buffers, closes its sockets and its tap device): it is killed and not waited for. Whatever is left of it as it
# dies is in the run's control group and runs as the run's uid, which release() empties (kill, wait, remove)
# before either is used again.
kill -KILL $helper 2>/dev/null
exit $status
`;

export interface RunNetworkPlan {
  /** Ports of the host's loopback that runs reach at the same address and port (the api, allowed host:ports). */
  loopbackPorts: number[];
  /** The host's resolvers (/etc/resolv.conf). */
  resolvers: string[];
}

const isLoopback = (address: string) => /^127\./.test(address) || address === '::1';

/** Whether a process of another uid may open the tun device, as pasta must inside the namespace. */
export function tunUsable(): boolean {
  try {
    const st = fs.statSync('/dev/net/tun');
    return st.isCharacterDevice() && (st.mode & 0o006) === 0o006;
  } catch {
    return false;
  }
}

/**
 * The helper's program for this CPU. Debian's pasta checks the CPU at every start and, where it has AVX2,
 * executes itself again as pasta.avx2 (the same source built for AVX2): naming that one directly saves one
 * program load per run. Its argv[0] ("...pasta.avx2") still selects pasta's mode, and the options are the same.
 */
export function helperProgram(pasta: string, cpuinfo = '/proc/cpuinfo'): string {
  const avx2 = `${pasta}.avx2`;
  try {
    if (!/^flags\s*:.*\bavx2\b/m.test(fs.readFileSync(cpuinfo, 'utf8'))) return pasta;
    fs.accessSync(avx2, fs.constants.X_OK);
    return avx2;
  } catch {
    return pasta;
  }
}

export class RunNetwork {
  constructor(
    private readonly tools: { pasta: string; setpriv: string },
    private readonly plan: RunNetworkPlan,
  ) {}

  /** The host's resolvers that runs cannot reach (on loopback: the namespace's loopback is its own). */
  get loopbackResolvers(): string[] {
    return this.plan.resolvers.filter(isLoopback);
  }

  /** bubblewrap options: a new network namespace, and the fds the launcher waits on. */
  bwrapArgs(): string[] {
    return [
      '--unshare-net',
      '--info-fd',
      String(INFO_FD),
      // bubblewrap's child waits here while the launcher writes its uid map (instead of nesting a second
      // user namespace that the helper could not join) ...
      '--userns-block-fd',
      String(USERNS_GATE_FD),
      // ... and here, before the program starts, while the helper brings the network up.
      '--block-fd',
      String(EXEC_GATE_FD),
    ];
  }

  /**
   * The command (file, argv) that runs `command` (bubblewrap with bwrapArgs()) as `uid`:`gid` with its network.
   * `inside`: the ids it has in its user namespace (default the same); `setup`: run once the ids are mapped, with
   * the word `@child@` replaced by the pid of bubblewrap's child (the rootless firewall, namespace-firewall.ts);
   * `limits`: the options of each `ulimit` that binds `command` (e.g. `-n 4096`).
   */
  launch(
    uid: number,
    gid: number,
    command: string[],
    opts: { inside?: { uid: number; gid: number }; setup?: string[]; limits?: string[] } = {},
  ): string[] {
    const ports = [...new Set(this.plan.loopbackPorts)].sort((a, b) => a - b);
    const helper = [
      '--config-net',
      '--quiet',
      '--foreground',
      // Nothing inwards: no port of the namespace is ever reachable from the host (the default is `auto`).
      '--tcp-ports',
      'none',
      '--udp-ports',
      'none',
      // Outwards to the host's loopback: these ports only.
      '--tcp-ns',
      ports.length ? ports.join(',') : 'none',
      '--udp-ns',
      'none',
      '--no-map-gw',
      '--address',
      NS_ADDRESS.v4,
      '--netmask',
      String(NS_ADDRESS.prefix),
      '--gateway',
      NS_ADDRESS.gateway,
      '--address',
      NS_ADDRESS.v6,
      '--gateway',
      NS_ADDRESS.gateway6,
    ];
    return [
      '-c',
      LAUNCHER,
      'tarmac-netns',
      this.tools.pasta,
      this.tools.setpriv,
      String(uid),
      String(gid),
      String(opts.inside?.uid ?? uid),
      String(opts.inside?.gid ?? gid),
      ...helper,
      '--',
      String(opts.setup?.length ?? 0),
      ...(opts.setup ?? []),
      String(opts.limits?.length ?? 0),
      ...(opts.limits ?? []),
      ...command,
    ];
  }
}

/** The host's loopback ports among `targets` (the api's and the allowed host:ports, resolved). */
export function loopbackPortsOf(targets: Array<{ address: string; port: number }>): number[] {
  return targets.filter((t) => net.isIP(t.address) && isLoopback(t.address)).map((t) => t.port);
}
