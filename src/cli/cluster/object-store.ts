// The S3-compatible object store of the production shape on one machine: moto's server (tools/obtain-moto.sh),
// a child process on its own address with the platform's bucket created, and the BLOB_STORE=s3 variables
// (src/config/blobs.ts) that point the api and the workers at it.
//
// moto keeps every object in its process's memory (those over ~5 MB spill to unlinked temporary files, here in
// `dir`/spool): a restart of the store loses every object. It has no persistence of its own; its request
// recorder (MOTO_ENABLE_RECORDING) could replay single PUTs but not multipart uploads, whose ids change on
// replay, so it is not used. For a store that outlives restarts, run MinIO and set the same variables.
// Credentials are fixed and not checked: moto allows every request unless its IAM emulation is switched on.
import fs from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { ClusterProcess, waitUntilReady } from './node-process';

/** The moto tools/obtain-moto.sh pins (and test/harness/s3-server.ts). */
export const MOTO_VERSION = '5.2.5';

/** The venv's python that tools/obtain-moto.sh makes (it prints the same path). */
export const motoPython = (cacheDir: string) =>
  path.join(cacheDir, 'venvs', `moto-server-${MOTO_VERSION}`, 'bin', 'python');

export interface ObjectStoreOptions {
  dir: string;
  host: string;
  port: number;
  bucket: string;
  /** The python of tools/obtain-moto.sh's venv (motoPython). */
  python: string;
  region?: string;
}

export interface ObjectStore {
  /** http://host:port */
  endpoint: string;
  /** What the api and the workers read (BLOB_STORE=s3 and BLOB_S3_*), to add to their environment. */
  env: Record<string, string>;
  logFile: string;
  /** SIGTERM, SIGKILL after 5 s. The objects go with it. */
  stop(): Promise<void>;
  kill(): Promise<void>;
}

const CREDENTIALS = { accessKeyId: 'tarmac-cluster', secretAccessKey: 'tarmac-cluster-secret' };

export async function startObjectStore(options: ObjectStoreOptions): Promise<ObjectStore> {
  const dir = path.resolve(options.dir);
  const spool = path.join(dir, 'spool');
  fs.rmSync(spool, { recursive: true, force: true });
  fs.mkdirSync(spool, { recursive: true });
  const region = options.region ?? 'us-east-1';
  const hostPort = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
  const endpoint = `http://${hostPort}`;
  const logFile = path.join(dir, 'moto.log');
  if (!fs.existsSync(options.python))
    throw new Error(`object store: ${options.python} is missing: run tools/obtain-moto.sh`);
  // TMPDIR: where moto spools large objects (spawn's env is the whole environment).
  const proc = new ClusterProcess(
    'object store',
    '/usr/bin/env',
    [`TMPDIR=${spool}`, options.python, '-m', 'moto.server', '-H', options.host, '-p', String(options.port)],
    logFile,
  );
  const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: CREDENTIALS });
  try {
    await waitUntilReady(
      proc,
      'moto server',
      async () => (await fetch(`${endpoint}/moto-api/data.json`)).ok,
      60_000, // its first start compiles the package's bytecode
    );
    await client.send(new CreateBucketCommand({ Bucket: options.bucket }));
  } catch (err) {
    await proc.kill();
    throw err;
  } finally {
    client.destroy();
  }
  return {
    endpoint,
    env: {
      BLOB_STORE: 's3',
      BLOB_S3_BUCKET: options.bucket,
      BLOB_S3_ENDPOINT: endpoint,
      BLOB_S3_REGION: region,
      BLOB_S3_FORCE_PATH_STYLE: 'true',
      BLOB_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      BLOB_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    logFile,
    stop: async () => {
      await proc.stop(5_000);
    },
    kill: async () => {
      await proc.kill();
    },
  };
}
