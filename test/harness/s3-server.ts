/**
 * A real S3-compatible server for tests: moto's server mode (`moto[server]` from PyPI, pinned below), installed
 * once into a venv cached outside the repository (test/harness/python-venv.ts) and started on a free loopback
 * port. Path-style addressing, region us-east-1.
 *
 *   const s3 = await startS3Server();
 *   await s3.createBucket('b');
 *   s3.client();                                   // an S3Client for the server (the admin's credentials)
 *   const reader = await s3.createUser('reader', { Effect: 'Allow', Action: 's3:*', Resource: 'arn:aws:s3:::b/public/*' });
 *   await s3.enforceAuth(true);                    // from now on keys and policies are checked (403 AccessDenied)
 *   await s3.stop();
 *
 * By default moto accepts any credentials and allows everything. `enforceAuth(true)` switches on its IAM
 * emulation: requests must be signed (SigV4) with an access key of a user created here, and that user's
 * policies are evaluated (identity policies only; moto does not evaluate bucket ACLs), so a key without a
 * permission gets a real 403 and an unknown key a real `InvalidAccessKeyId`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { S3Client, CreateBucketCommand } from '@aws-sdk/client-s3';
import { pythonVenv } from './python-venv';
import { freePort, OUTSIDE_HOST } from './stack';

export const MOTO = 'moto[server]==5.2.5';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3Server {
  endpoint: string;
  region: string;
  /** Allowed everything, also once auth is enforced. */
  admin: S3Credentials;
  client(credentials?: S3Credentials): S3Client;
  createBucket(name: string): Promise<void>;
  /** A new IAM user with one inline policy of `statements`, and an access key of it. */
  createUser(name: string, ...statements: object[]): Promise<S3Credentials>;
  enforceAuth(on: boolean): Promise<void>;
  stop(): Promise<void>;
}

const REGION = 'us-east-1';

export async function startS3Server(): Promise<S3Server> {
  const python = await pythonVenv('moto', [MOTO]);
  const port = await freePort();
  const endpoint = `http://${OUTSIDE_HOST}:${port}`;
  const child: ChildProcess = spawn(python, ['-m', 'moto.server', '-H', OUTSIDE_HOST, '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // mocha --exit or a crash skips `stop()`: never leave the server behind.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`moto server exited (${child.exitCode}): ${stderr}`);
    const ok = await fetch(`${endpoint}/moto-api/data.json`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 600) {
      child.kill('SIGKILL');
      throw new Error(`moto server did not answer on ${endpoint}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  let authOn = false;
  const setAuth = async (on: boolean) => {
    // moto checks signatures and policies after INITIAL_NO_AUTH_ACTION_COUNT requests: 0 is on, inf is off.
    const r = await fetch(`${endpoint}/moto-api/reset-auth`, { method: 'POST', body: on ? '0' : 'inf' });
    if (!r.ok) throw new Error(`moto reset-auth: ${r.status} ${await r.text()}`);
    authOn = on;
  };
  /** IAM's query API, unsigned: only while auth is off (moto then reads the service from the credential scope). */
  const iam = async (params: Record<string, string>) => {
    const r = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `AWS4-HMAC-SHA256 Credential=setup/20250101/${REGION}/iam/aws4_request, SignedHeaders=host, Signature=0`,
      },
      body: new URLSearchParams({ Version: '2010-05-08', ...params }).toString(),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`moto IAM ${params.Action}: ${r.status} ${text}`);
    return text;
  };
  const createUser = async (name: string, ...statements: object[]): Promise<S3Credentials> => {
    const wasOn = authOn;
    if (wasOn) await setAuth(false);
    try {
      await iam({ Action: 'CreateUser', UserName: name });
      await iam({
        Action: 'PutUserPolicy',
        UserName: name,
        PolicyName: `${name}-policy`,
        PolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: statements }),
      });
      const xml = await iam({ Action: 'CreateAccessKey', UserName: name });
      const pick = (tag: string) => new RegExp(`<${tag}>([^<]+)</${tag}>`).exec(xml)?.[1];
      const accessKeyId = pick('AccessKeyId');
      const secretAccessKey = pick('SecretAccessKey');
      if (!accessKeyId || !secretAccessKey) throw new Error(`moto CreateAccessKey answered ${xml}`);
      return { accessKeyId, secretAccessKey };
    } finally {
      if (wasOn) await setAuth(true);
    }
  };

  const admin = await createUser('admin', { Effect: 'Allow', Action: '*', Resource: '*' });
  const clients: S3Client[] = [];
  const client = (credentials: S3Credentials = admin) => {
    const c = new S3Client({ endpoint, region: REGION, forcePathStyle: true, credentials });
    clients.push(c);
    return c;
  };
  const adminClient = client();

  return {
    endpoint,
    region: REGION,
    admin,
    client,
    createBucket: async (name) => {
      await adminClient.send(new CreateBucketCommand({ Bucket: name }));
    },
    createUser,
    enforceAuth: setAuth,
    stop: async () => {
      process.removeListener('exit', orphanGuard);
      for (const c of clients) c.destroy();
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
