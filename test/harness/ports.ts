// A free TCP port on loopback, for the servers the tests start (each is checked free, then let go).
//
// The port is chosen below the kernel's ephemeral range: a port the kernel hands out (listen(0), or the local end of
// an outgoing connection) would be free when checked and may be taken by the time the server binds it. The Temporal
// dev server, for one, opens its internal services on kernel-chosen ports while the stack starts; an api port taken
// that way failed a whole tier with EADDRINUSE.
import fs from 'node:fs';
import net from 'node:net';

const FALLBACK_EPHEMERAL_LOW = 32_768;
const LOWEST = 10_000;

function ephemeralLow(): number {
  try {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : FALLBACK_EPHEMERAL_LOW;
  } catch {
    return FALLBACK_EPHEMERAL_LOW;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    if (await portFree(port)) return port;
  }
  throw new Error(`no free port found between ${LOWEST} and ${high}`);
}
