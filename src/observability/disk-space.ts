// Admission on free space: below a watermark on the data directory's filesystem (and the blob store's, when
// it is local), new runs, jobs and uploads are refused with 503 + Retry-After before the disk is full, so that
// what is already running (its events, logs and final status) still finds room. Read with statfs at most
// once a second (cached), never per request; shown by /ready and /metrics.
import fs from 'node:fs';
import path from 'node:path';
import { Gauge } from 'prom-client';
import type { Config } from '../config';
import { temporarilyUnavailable } from '../errors';
import { registry } from './metrics';

export interface WatchedFilesystem {
  /** Bounded label: `data` (DATA_DIR) or `blobs` (BLOB_DIR). */
  name: 'data' | 'blobs';
  /** A directory on it (need not exist yet: its nearest existing parent is measured). */
  dir: string;
}

export interface FilesystemReading extends WatchedFilesystem {
  freeBytes: number;
  totalBytes: number;
  /** Below the watermark. */
  low: boolean;
}

export interface DiskStatus {
  admitting: boolean;
  /** Why new work is refused (names the filesystem and its directory); undefined while admitting. */
  reason?: string;
  filesystems: FilesystemReading[];
}

export interface Watermark {
  freeMinBytes: number;
  freeMinPercent: number;
}

const MiB = 1024 * 1024;

/** Free bytes an unprivileged writer can use (`bavail`), and the filesystem's size. */
async function measure(dir: string): Promise<{ freeBytes: number; totalBytes: number }> {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      const s = await fs.promises.statfs(at);
      return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(at) === at) throw err;
    }
  }
}

export class DiskSpace {
  private reading: { at: number; status: Promise<DiskStatus> } | undefined;

  constructor(
    private readonly watched: WatchedFilesystem[],
    private readonly watermark: Watermark,
    private readonly maxAgeMs = 1_000,
  ) {}

  static fromConfig(config: Config): DiskSpace {
    const watched: WatchedFilesystem[] = [{ name: 'data', dir: config.dataDir }];
    if (!config.blobS3) watched.push({ name: 'blobs', dir: config.blobDir });
    return new DiskSpace(watched, {
      freeMinBytes: config.disk.freeMinMb * MiB,
      freeMinPercent: config.disk.freeMinPercent,
    });
  }

  /** The latest reading, taken again when older than `maxAgeMs` (concurrent callers share one). */
  status(): Promise<DiskStatus> {
    const now = Date.now();
    if (!this.reading || now - this.reading.at >= this.maxAgeMs)
      // A filesystem that cannot be measured does not stop the service: it is admitted, as without a watermark.
      this.reading = {
        at: now,
        status: this.read()
          .catch(() => ({ admitting: true, filesystems: [] }))
          .then(publish),
      };
    return this.reading.status;
  }

  /** Throws 503 (Retry-After) with the reason while a watched filesystem is below its watermark. */
  async admit(): Promise<void> {
    const { admitting, reason } = await this.status();
    if (!admitting) throw temporarilyUnavailable(reason!);
  }

  private async read(): Promise<DiskStatus> {
    const { freeMinBytes, freeMinPercent } = this.watermark;
    const filesystems = await Promise.all(
      this.watched.map(async (fsys) => {
        const { freeBytes, totalBytes } = await measure(fsys.dir);
        const low = freeBytes < freeMinBytes || (totalBytes > 0 && (freeBytes / totalBytes) * 100 < freeMinPercent);
        return { ...fsys, freeBytes, totalBytes, low };
      }),
    );
    const low = filesystems.find((f) => f.low);
    return {
      admitting: !low,
      filesystems,
      ...(low
        ? {
            reason:
              `Low disk space: the ${low.name === 'data' ? 'data directory' : 'blob store'}'s filesystem (${low.dir}) ` +
              `has ${Math.floor(low.freeBytes / MiB)} MiB free, below the watermark (DISK_FREE_MIN_MB=${freeMinBytes / MiB}, ` +
              `DISK_FREE_MIN_PERCENT=${freeMinPercent}); new runs, jobs and uploads are refused until space is freed`,
          }
        : {}),
    };
  }
}

/** The DiskSpace whose readings /metrics shows (the api's, set by createApp); read again on a scrape. */
let metered: DiskSpace | undefined;
export function meterDiskSpace(disk: DiskSpace): void {
  metered = disk;
}
async function refresh() {
  if (metered) await metered.status();
}

const freeBytesGauge = new Gauge({
  name: 'tarmac_disk_free_bytes',
  help: 'Free bytes of a watched filesystem (data: DATA_DIR, blobs: BLOB_DIR when local), as of the last reading',
  labelNames: ['filesystem'] as const,
  registers: [registry],
  collect: refresh,
});
const admittingGauge = new Gauge({
  name: 'tarmac_disk_admitting',
  help: '1 while new runs, jobs and uploads are admitted; 0 while a watched filesystem is below its free-space watermark',
  registers: [registry],
  collect: refresh,
});

function publish(status: DiskStatus): DiskStatus {
  for (const f of status.filesystems) freeBytesGauge.set({ filesystem: f.name }, f.freeBytes);
  admittingGauge.set(status.admitting ? 1 : 0);
  return status;
}
