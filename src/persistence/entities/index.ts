import { ApiKey } from './api-key';
import { Asset, Bucket } from './bucket';
import { Invite } from './invite';
import { Organization } from './organization';
import { Secret } from './secret';
import { Membership, User } from './user';

export { ApiKey, Asset, Bucket, Invite, Membership, Organization, Secret, User };

/** Every entity the data source knows; add new ones here. */
export const entities = [Organization, User, Membership, ApiKey, Secret, Invite, Bucket, Asset];
