// Blob keys are made by the platform from ids and hashes, never from user text: an asset name like
// `../../etc/passwd` can never become a filesystem path or an object-store key with surprises.
import { createHash } from 'node:crypto';

/** Everything stored for one bucket lives under this prefix (deleted at once with the bucket). */
export const bucketBlobPrefix = (bucketId: string) => `buckets/${bucketId}`;

/** `buckets/<bucket_id>/<sha256 hex of the name>`. */
export const assetBlobKey = (bucketId: string, name: string) =>
  `${bucketBlobPrefix(bucketId)}/${createHash('sha256').update(name, 'utf8').digest('hex')}`;

/** Everything stored of one deployment's build (its artifact; an earlier attempt's too) lives under this prefix. */
export const buildBlobPrefix = (deploymentId: string) => `builds/${deploymentId}`;

/** `builds/<deployment_id>/<sha256>.tar.gz`: content-addressed, so an artifact's key names its digest. */
export const buildArtifactKey = (deploymentId: string, sha256: string) =>
  `${buildBlobPrefix(deploymentId)}/${sha256}.tar.gz`;
