import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobStore, BlobTooLargeError, checkBlobKey } from './blob-store';

/** Blobs as files under one root directory. Writes go to a temp file and are renamed into place. */
export class FsBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(key: string): string {
    checkBlobKey(key);
    return path.join(this.root, key);
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<{ size: number }> {
    const target = this.file(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.${randomUUID()}.partial`;
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        done(size > maxBytes ? new BlobTooLargeError(maxBytes) : null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(tmp));
      await fs.rename(tmp, target);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    return { size };
  }

  async get(key: string): Promise<{ stream: Readable; size: number } | undefined> {
    const file = this.file(key);
    try {
      const handle = await fs.open(file, 'r');
      const { size } = await handle.stat();
      return { stream: createReadStream('', { fd: handle }), size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    await fs.rm(this.file(prefix), { recursive: true, force: true });
  }
}
