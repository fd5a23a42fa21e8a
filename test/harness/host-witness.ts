// A listener on every address of this host (0.0.0.0), as a service of the platform with the default HOST
// would be: it counts the connections that reach it and answers them as no PostgreSQL would (an HTTP 400),
// so tests and drills can aim outbound features at this host's own interface address and count what arrived.
import net from 'node:net';
import os from 'node:os';

export interface HostWitness {
  port: number;
  /** Connections accepted so far, with the local address each one reached. */
  connections: string[];
  close(): Promise<void>;
}

export async function startHostWitness(host = '0.0.0.0'): Promise<HostWitness> {
  const connections: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections.push(socket.localAddress ?? '?');
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A non-loopback IPv4 address of one of this host's interfaces (what a tenant would aim at to reach the host). */
export function hostInterfaceAddress(): string {
  const found = Object.values(os.networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((i) => i.family === 'IPv4' && !i.internal);
  if (!found) throw new Error('this host has no non-loopback IPv4 interface address');
  return found.address;
}
