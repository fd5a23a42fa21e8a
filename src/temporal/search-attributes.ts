// Keyword search attributes that make every workflow findable in the Temporal UI, e.g.
//   TarmacResourceId="<uuid>"  or  TarmacOrganizationId="<uuid>" AND TarmacResourceKind="invite"
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const RESOURCE_ID = defineSearchAttributeKey('TarmacResourceId', SearchAttributeType.KEYWORD);
export const ORGANIZATION_ID = defineSearchAttributeKey('TarmacOrganizationId', SearchAttributeType.KEYWORD);
export const RESOURCE_KIND = defineSearchAttributeKey('TarmacResourceKind', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [RESOURCE_ID, ORGANIZATION_ID, RESOURCE_KIND];
