// The result of a function or tool run travels over a pipe, not a file: the shim writes its JSON to the fd
// RESULT_FD of its process, and the platform reads at most the result limit from the other end. Nothing lands
// on the host's disk (a result file would, outside every limit of the run but RLIMIT_FSIZE), and a result past
// the limit is refused as soon as it crosses it: the pipe is closed, the writer gets EPIPE.
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

/** The fd of a run's process that its result is written to (fds 3.. are the sandbox's own files). */
export const RESULT_FD = 9;

export type ResultBytes = { bytes: Buffer } | { tooLarge: true };

/** Collects a stream up to `limitBytes`; past it, closes the stream and answers tooLarge. */
export function collectResult(stream: Readable, limitBytes: number): Promise<ResultBytes> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (r: ResultBytes) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limitBytes) {
        chunks.length = 0;
        stream.destroy();
        return finish({ tooLarge: true });
      }
      chunks.push(chunk);
    });
    stream.on('error', () => undefined);
    stream.once('close', () => finish({ bytes: Buffer.concat(chunks, size) }));
  });
}

/**
 * The stdio of a spawn: stdin ignored, stdout and stderr piped, `fds` as 3, 4, ..., then (`envPipe`) the pipe
 * its environment travels on (env-channel.ts), and the result pipe.
 */
export function stdioWith(fds: number[], result: boolean, envPipe = false): Array<'ignore' | 'pipe' | number> {
  const stdio: Array<'ignore' | 'pipe' | number> = [
    'ignore',
    'pipe',
    'pipe',
    ...fds,
    ...(envPipe ? ['pipe' as const] : []),
  ];
  if (!result) return stdio;
  if (stdio.length > RESULT_FD) throw new Error(`too many extra files for the result fd ${RESULT_FD}`);
  while (stdio.length < RESULT_FD) stdio.push('ignore');
  stdio.push('pipe');
  return stdio;
}

/** The parent's end of a child's result pipe (spawned with stdioWith(..., true)). */
export const resultStreamOf = (child: ChildProcess): Readable | undefined =>
  (child.stdio as unknown as Array<Readable | null>)[RESULT_FD] ?? undefined;
