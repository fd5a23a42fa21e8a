// What `GET /api/config` returns: the data lake's object store and the drive connector's OAuth client.
import type { BlobS3Config } from './blobs';
import type { EnvReader } from './env';

export interface PublicConfigSettings {
  publicConfig: {
    data_lake_objstore_bucket: string;
    data_lake_objstore_region: string;
    data_lake_objstore_url: string;
    drive_data_connector_client_id: string;
  };
}

/** The data lake is the blob store's bucket when that is S3, unless DATA_LAKE_* say otherwise. */
export function readPublicConfig(env: EnvReader, blobS3: BlobS3Config | undefined): PublicConfigSettings {
  return {
    publicConfig: {
      data_lake_objstore_bucket: env.string('DATA_LAKE_OBJSTORE_BUCKET', blobS3?.bucket ?? ''),
      data_lake_objstore_region: env.string('DATA_LAKE_OBJSTORE_REGION', blobS3?.region ?? ''),
      data_lake_objstore_url: env.string(
        'DATA_LAKE_OBJSTORE_URL',
        blobS3 ? (blobS3.publicEndpoint ?? blobS3.endpoint ?? `https://s3.${blobS3.region}.amazonaws.com`) : '',
      ),
      drive_data_connector_client_id: env.string('DRIVE_DATA_CONNECTOR_CLIENT_ID', ''),
    },
  };
}
