// Identifiers: what a record id looks like (uuid), and the ids griptape gives its own objects.
import { randomUUID } from 'node:crypto';

/** A uuid as the api issues and accepts them (the schemas' `uuid` format, without its version check). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (text: string) => UUID_PATTERN.test(text);

/** griptape's ids: a uuid4 without dashes. */
export const griptapeId = () => randomUUID().replace(/-/g, '');
