// A mutex between the processes of one host: a listening abstract Unix socket. Binding a name is atomic and
// exclusive, and the kernel frees the name when its process dies, so a crashed holder leaves nothing to
// reclaim (unlike a lock file). Abstract names belong to a network namespace: the workers of a host share the
// host's; a sandboxed run, in a namespace of its own, can neither see nor take them.
import net from 'node:net';

/** Takes the mutex `name`, or answers undefined at once when another process (or this one) holds it. */
export async function tryHostMutex(name: string): Promise<(() => Promise<void>) | undefined> {
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ path: `\0${name}`, exclusive: true }, resolve);
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
    throw err;
  }
  server.unref();
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
