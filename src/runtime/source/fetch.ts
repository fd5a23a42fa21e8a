// Puts a deployment's source into a fresh directory: the default project, a data-lake asset (an archive
// is unpacked, any other file is placed as is) or a git checkout. Answers what was fetched, for the
// deployment's code_source and fingerprint.
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../blobs/blob-store';
import { assetBlobKey } from '../../blobs/keys';
import { Asset } from '../../persistence/entities';
import type { CodeLocation, CodeResourceKind } from '../../persistence/entities/code-resource';
import { OutputTail } from '../build/build-process';
import { DeploymentFailure } from '../build/failure';
import { DEFAULT_PROJECTS } from '../templates/default-code';
import type { OutboundPolicy } from '../../security/outbound-policy';
import { archiveKindOf, MAX_UNPACKED_BYTES, unpackArchive } from './archive';
import { CloneOptions, cloneRepository } from './git';

export interface FetchContext {
  ds: DataSource;
  blobs: BlobStore;
  codehostBaseUrl: string;
  /** The outbound address policy: the code host's address is checked before a clone. */
  outbound: OutboundPolicy;
  organizationId: string;
  /** Where the download of an archive may go (removed afterwards). */
  scratchDir: string;
  /** Bytes an archive may unpack to (the build's disk quota; never more than MAX_UNPACKED_BYTES). */
  maxUnpackedBytes?: number;
  env: Record<string, string>;
  /** git sources: cloned inside the sandbox, within limits, the code host's address checked. */
  git: Pick<CloneOptions, 'isolate' | 'limits'>;
  output: OutputTail;
  cancelled: Promise<never>;
}

export interface Fetched {
  codeSource: Record<string, unknown>;
  /** data_lake: the asset record as it was when its bytes were read. */
  asset?: { size: number | null; updated_at: Date };
  commitSha?: string;
}

export async function fetchSource(
  ctx: FetchContext,
  kind: CodeResourceKind,
  code: CodeLocation,
  dest: string,
  opts: { commitSha?: string; accessToken?: string },
): Promise<Fetched> {
  if ('default' in code) {
    for (const [rel, text] of Object.entries(DEFAULT_PROJECTS[kind])) {
      await fs.mkdir(path.dirname(path.join(dest, rel)), { recursive: true });
      await fs.writeFile(path.join(dest, rel), text);
    }
    return { codeSource: { default: {} } };
  }
  if ('codehost' in code) {
    const { commitSha } = await cloneRepository({
      baseUrl: ctx.codehostBaseUrl,
      source: code.codehost,
      commitSha: opts.commitSha,
      accessToken: opts.accessToken,
      dest,
      env: ctx.env,
      ...ctx.git,
      outbound: ctx.outbound,
      output: ctx.output,
      cancelled: ctx.cancelled,
    });
    return { codeSource: { codehost: { commit_sha: commitSha } }, commitSha };
  }
  if ('mcp' in code) throw new Error('A tool of `mcp` code has no source to fetch (its deployment lists its server)');
  return fetchAsset(ctx, code.data_lake, dest);
}

async function fetchAsset(
  ctx: FetchContext,
  where: { bucket_id: string; asset_path: string },
  dest: string,
): Promise<Fetched> {
  const codeSource = { data_lake: { bucket_id: where.bucket_id, asset_path: where.asset_path } };
  const shown = `${where.asset_path} (bucket ${where.bucket_id})`;
  // The record is read before the bytes: if they are replaced in between, the recorded update time is the
  // older one, so the next deploy builds again rather than wrongly reusing this build.
  const asset = await ctx.ds.getRepository(Asset).findOneBy({
    bucket_id: where.bucket_id,
    name: where.asset_path,
    organization_id: ctx.organizationId,
  });
  if (!asset) throw new DeploymentFailure('SourceUnavailable', `The asset ${shown} does not exist`);
  // A read error of the blob store is an infrastructure fault (thrown as is); no bytes is the user's.
  const blob = await ctx.blobs.get(assetBlobKey(where.bucket_id, where.asset_path));
  if (!blob) throw new DeploymentFailure('SourceUnavailable', `The asset ${shown} has no data: upload it first`);
  const kind = archiveKindOf(where.asset_path);
  const fileName = path.posix.basename(where.asset_path);
  if (!kind) {
    await fs.mkdir(dest, { recursive: true });
    await pipeline(blob.stream, createWriteStream(path.join(dest, fileName)));
  } else {
    await fs.mkdir(ctx.scratchDir, { recursive: true });
    const download = path.join(ctx.scratchDir, kind === 'zip' ? 'source.zip' : 'source.tar');
    await pipeline(blob.stream, createWriteStream(download));
    try {
      await unpackArchive(kind, download, dest, Math.min(MAX_UNPACKED_BYTES, ctx.maxUnpackedBytes ?? Infinity));
    } finally {
      await fs.rm(download, { force: true });
    }
  }
  return { codeSource, asset: { size: asset.size, updated_at: asset.updated_at } };
}
