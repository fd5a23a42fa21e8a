// Data connectors: CRUD. Guarantees: the type is one of the six and the config's member matches it (400
// otherwise); every id the request names (bucket, the data lake's source bucket, the structure, the
// transforms' structures) is the organization's (409 naming it otherwise); secrets are sealed and never
// answered; the schedule expression parses (400 naming the forms) and has its Temporal Schedule; creating a
// connector, and replacing its config, starts a job (answered as `data_job_id`).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import type { Config } from '../../config';
import { badRequest, conflict } from '../../errors';
import type { PageRequest } from '../../persistence/pagination';
import { DataConnector, DataJob, Transform } from '../../persistence/entities/data-connector';
import { Organization } from '../../persistence/entities';
import { assertIdsInOrg, findInOrg, pageInOrg } from '../../persistence/scoped';
import type { SecretBox } from '../../security/secret-box';
import { deleteUserSchedule, parseScheduleExpression, putUserSchedule } from '../../temporal/user-schedules';
import { neutralWord } from '../provider-words';
import { checkConfig, ConnectorConfig, ConnectorType, sealConfig } from './config';
import { startDataJob, stopOpenDataJobs } from './jobs';

export interface ConnectorDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
  box: SecretBox;
}

export interface ConnectorFields {
  name?: string;
  description?: string;
  type?: string;
  config?: ConnectorConfig;
  bucket_id?: string;
  schedule_expression?: string | null;
  transforms?: Transform[];
}

/** Where a connector writes inside its bucket. */
export const connectorPrefix = (connectorId: string) => `data-connectors/${connectorId}/`;

export const findDataConnector = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, DataConnector, caller.organizationId, { data_connector_id: id }, 'Data connector');

export const listDataConnectors = (ds: DataSource, caller: Caller, page: PageRequest) =>
  pageInOrg(ds, DataConnector, caller.organizationId, page, {}, { created_at: 'DESC', data_connector_id: 'DESC' });

/** Checks what the type's config names and says (URLs, ids of the organization). */
async function checkConfigFields(ds: DataSource, caller: Caller, type: ConnectorType, config: ConnectorConfig) {
  const member = Object.values(config)[0] ?? {};
  const where = `/body/config/${Object.keys(config)[0]}`;
  if (type === 'webscraper') {
    (member.urls as string[]).forEach((u, i) => {
      let url: URL | undefined;
      try {
        url = new URL(u);
      } catch {
        /* refused below */
      }
      if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password)
        throw badRequest('Each URL must be an absolute http(s) URL without credentials', `${where}/urls/${i}`);
    });
  }
  if (type === 'data_lake')
    await assertIdsInOrg(ds, 'bucket', caller.organizationId, [member.bucket_id as string], `${where}/bucket_id`);
  if (type === 'structure')
    await assertIdsInOrg(
      ds,
      'structure',
      caller.organizationId,
      [member.structure_id as string],
      `${where}/structure_id`,
    );
}

async function checkTransforms(ds: DataSource, caller: Caller, transforms: Transform[] | undefined) {
  for (const [i, t] of (transforms ?? []).entries())
    await assertIdsInOrg(ds, 'structure', caller.organizationId, [t.structure.structure_id], `/body/transforms/${i}`);
}

export async function createDataConnector(
  deps: ConnectorDeps,
  caller: Caller,
  fields: ConnectorFields & { name: string; type: string; config: ConnectorConfig },
): Promise<{ connector: DataConnector; job: DataJob }> {
  const type = checkConfig(neutralWord(fields.type), fields.config);
  if (fields.schedule_expression) parseScheduleExpression(fields.schedule_expression);
  await checkConfigFields(deps.ds, caller, type, fields.config);
  await checkTransforms(deps.ds, caller, fields.transforms);
  let bucketId = fields.bucket_id;
  if (bucketId) await assertIdsInOrg(deps.ds, 'bucket', caller.organizationId, [bucketId], '/body/bucket_id');
  else {
    const org = await deps.ds.getRepository(Organization).findOneByOrFail({ organization_id: caller.organizationId });
    bucketId = org.default_bucket_id;
  }
  const id = randomUUID();
  const now = new Date();
  const connector: DataConnector = {
    data_connector_id: id,
    organization_id: caller.organizationId,
    name: fields.name,
    description: fields.description ?? null,
    type,
    config: sealConfig(deps.box, id, type, fields.config),
    bucket_id: bucketId,
    schedule_expression: fields.schedule_expression ?? null,
    transforms: fields.transforms ?? [],
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  await deps.ds.transaction(async (em) => {
    await em.getRepository(DataConnector).save(connector);
    await putUserSchedule(deps.temporal, deps.config.temporal.taskQueue, scheduleOf(connector));
  });
  try {
    return { connector, job: (await startDataJob(deps, caller, connector))! };
  } catch (err) {
    // No connector without its first job: the request failed as a whole (503 when Temporal is away).
    await deleteUserSchedule(deps.temporal, 'data-connector', id).catch(() => undefined);
    await deps.ds.getRepository(DataConnector).delete({ data_connector_id: id });
    throw err;
  }
}

const scheduleOf = (c: DataConnector) => ({
  target: 'data-connector' as const,
  id: c.data_connector_id,
  organizationId: c.organization_id,
  name: c.name,
  expression: c.schedule_expression,
});

/** Changes the given fields; a new config stops the open job and starts a new one (answered as `job`). */
export async function updateDataConnector(
  deps: ConnectorDeps,
  caller: Caller,
  id: string,
  fields: ConnectorFields,
): Promise<{ connector: DataConnector; job?: DataJob }> {
  const connector = await findDataConnector(deps.ds, caller, id);
  // Well-formed, but not for this connector: a conflict with what it is (409), like a missing reference.
  if (fields.type !== undefined && neutralWord(fields.type) !== connector.type)
    throw conflict(`A data connector's type cannot change (it is ${connector.type})`);
  if (fields.config !== undefined) {
    if (neutralWord(Object.keys(fields.config)[0] ?? '') !== connector.type)
      throw conflict(`config must have the member "${connector.type}" (the connector's type)`);
    const type = checkConfig(connector.type, fields.config);
    await checkConfigFields(deps.ds, caller, type, fields.config);
    connector.config = sealConfig(deps.box, connector.data_connector_id, type, fields.config);
  }
  if (fields.schedule_expression) parseScheduleExpression(fields.schedule_expression);
  await checkTransforms(deps.ds, caller, fields.transforms);
  if (fields.bucket_id !== undefined) {
    await assertIdsInOrg(deps.ds, 'bucket', caller.organizationId, [fields.bucket_id], '/body/bucket_id');
    connector.bucket_id = fields.bucket_id;
  }
  if (fields.name !== undefined) connector.name = fields.name;
  if (fields.description !== undefined) connector.description = fields.description;
  if (fields.transforms !== undefined) connector.transforms = fields.transforms;
  const scheduleChanged =
    fields.schedule_expression !== undefined && fields.schedule_expression !== connector.schedule_expression;
  if (fields.schedule_expression !== undefined) connector.schedule_expression = fields.schedule_expression;
  connector.updated_at = new Date();
  if (fields.config !== undefined) await stopOpenDataJobs(deps, caller.actor, connector.data_connector_id);
  await deps.ds.transaction(async (em) => {
    await em.getRepository(DataConnector).save(connector);
    if (scheduleChanged || fields.name !== undefined)
      await putUserSchedule(deps.temporal, deps.config.temporal.taskQueue, scheduleOf(connector));
  });
  if (fields.config === undefined) return { connector };
  return { connector, job: await startDataJob(deps, caller, connector, { ifOpen: 'skip' }) };
}

/** Deletes the connector with its jobs (open ones cancelled first, bounded wait) and its schedule; the assets it wrote stay. */
export async function deleteDataConnector(deps: ConnectorDeps, caller: Caller, id: string): Promise<void> {
  const connector = await findDataConnector(deps.ds, caller, id);
  await deleteUserSchedule(deps.temporal, 'data-connector', connector.data_connector_id);
  await stopOpenDataJobs(deps, caller.actor, connector.data_connector_id);
  await deps.ds.getRepository(DataConnector).delete({ data_connector_id: connector.data_connector_id });
}
