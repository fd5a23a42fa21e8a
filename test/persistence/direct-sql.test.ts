// The hot statements of src/persistence/direct-sql.ts answer exactly what TypeORM answers for the same row:
// the same entity class, every column hydrated the same way (dates, jsonb, nullable bigints through their
// transformers), and an INSERT that stores what `save` stored.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { findJoinedPrepared, findOnePrepared, insertRow, queryPrepared } from '../../src/persistence/direct-sql';
import { ApiKey, Asset, CodeResource, Deployment, Organization, Run } from '../../src/persistence/entities';
import { newRunRow } from '../../src/persistence/entities/run';
import { createApiKey } from '../../src/services/accounts/accounts';
import { getStack, newTenant } from '../harness/stack';
import { structureWithBuild } from '../harness/builds';

/** A new tenant with a built structure, and a (not yet stored) structure run row of it with `fields`. */
async function runRowOfANewTenant(
  name: string,
  fields: Pick<Parameters<typeof newRunRow>[0], 'args' | 'env_vars' | 'input'>,
) {
  const tenant = await newTenant(name);
  const { structureId, deploymentId } = await structureWithBuild(tenant.organizationId, {
    files: { 'structure.py': 'print(1)\n' },
  });
  const row = newRunRow({
    run_id: randomUUID(),
    kind: 'structure',
    organization_id: tenant.organizationId,
    resource_id: structureId,
    deployment_id: deploymentId,
    ...fields,
    created_by: tenant.userId,
  });
  return { tenant, row, structureId, deploymentId };
}

describe('direct SQL (prepared reads, one-statement inserts)', () => {
  it('prepares a statement once per connection, and answers as before after a migration adds a column', async () => {
    const { ds } = getStack();
    const table = `prepared_${randomUUID().replace(/-/g, '')}`;
    await ds.query(`CREATE TABLE ${table} (id int PRIMARY KEY, name text)`);
    try {
      await ds.transaction(async (em) => {
        const named = `SELECT id, name FROM ${table} WHERE id = $1`;
        const all = `UPDATE ${table} SET name = $2 WHERE id = $1 RETURNING *`;
        await queryPrepared(em, `INSERT INTO ${table} (id, name) VALUES ($1, $2)`, [1, 'one']);
        expect(await queryPrepared(em, named, [1])).to.deep.equal([{ id: 1, name: 'one' }]);
        expect(await queryPrepared(em, all, [1, 'uno'])).to.deep.equal([[{ id: 1, name: 'uno' }], 1]);
        // The expand step of a rolling upgrade, seen by a connection that prepared both already.
        await em.query(`ALTER TABLE ${table} ADD COLUMN added int`);
        expect(await queryPrepared(em, named, [1])).to.deep.equal([{ id: 1, name: 'uno' }]);
        expect(await queryPrepared(em, all, [1, 'eins'])).to.deep.equal([[{ id: 1, name: 'eins', added: null }], 1]);
        // In the transaction's own session: the prepared statements are its connection's.
        const [{ n }] = await em.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1`, [
          named,
        ]);
        expect(n).to.equal(1);
      });
    } finally {
      await ds.query(`DROP TABLE ${table}`);
    }
  });

  it('reads a record as TypeORM does, with dates, jsonb, transformed bigints and composite keys', async () => {
    const { ds } = getStack();
    const tenant = await newTenant('direct-sql');
    const org = await ds.getRepository(Organization).findOneByOrFail({ organization_id: tenant.organizationId });

    const prepared = await findOnePrepared(ds, Organization, { organization_id: org.organization_id });
    expect(prepared).to.be.instanceOf(Organization);
    expect(prepared).to.deep.equal(org);

    // An asset's size is a nullable bigint read through a transformer; its key has two columns.
    const now = new Date();
    const asset = await insertRow(ds.manager, Asset, {
      bucket_id: org.default_bucket_id,
      name: 'docs/a.txt',
      organization_id: org.organization_id,
      size: 12345,
      meta: { source: 'test' },
      created_by: tenant.userId,
      created_at: now,
      updated_at: now,
    });
    const where = { bucket_id: org.default_bucket_id, name: 'docs/a.txt' };
    const assetRead = await ds.getRepository(Asset).findOneByOrFail(where);
    expect(asset).to.deep.equal(assetRead);
    expect(await findOnePrepared(ds, Asset, where)).to.deep.equal(assetRead);
    expect(assetRead.size).to.equal(12345);

    // A key set read twice reuses its statement; a key that matches nothing is null.
    expect(await findOnePrepared(ds, Organization, { organization_id: org.organization_id })).to.deep.equal(org);
    expect(await findOnePrepared(ds, Organization, { organization_id: randomUUID() })).to.equal(null);
  });

  it('inserts a row with one statement and answers it as stored', async () => {
    const { ds } = getStack();
    const { tenant, row } = await runRowOfANewTenant('direct-sql-insert', {
      args: ['a', 'b c'],
      env_vars: [{ name: 'X', value: 'y', source: 'manual' }],
      input: { nested: [1, { two: null }] },
    });
    const stored = await insertRow(ds.manager, Run, row);
    const read = await ds.getRepository(Run).findOneByOrFail({ run_id: row.run_id });
    expect(stored).to.deep.equal(read);
    expect(read.args).to.deep.equal(['a', 'b c']);
    expect(read.input).to.deep.equal({ nested: [1, { two: null }] });
    expect(await findOnePrepared(ds, Run, { run_id: row.run_id })).to.deep.equal(read);

    const { key, value } = await createApiKey(ds, {
      organizationId: tenant.organizationId,
      userId: null,
      name: 'direct',
      createdBy: tenant.userId,
    });
    expect(value).to.be.a('string');
    expect(key).to.deep.equal(await ds.getRepository(ApiKey).findOneByOrFail({ api_key_id: key.api_key_id }));

    // null is IS NULL: a user's key has no run; a run's credential is not found that way.
    expect(await findOnePrepared(ds, ApiKey, { api_key_id: key.api_key_id, run_id: null })).to.deep.equal(key);
    const { key: runKey } = await createApiKey(ds, {
      organizationId: tenant.organizationId,
      userId: null,
      name: 'run',
      createdBy: tenant.userId,
      runId: row.run_id,
    });
    expect(await findOnePrepared(ds, ApiKey, { api_key_id: runKey.api_key_id, run_id: null })).to.equal(null);
    expect(await findOnePrepared(ds, ApiKey, { api_key_id: runKey.api_key_id, user_id: undefined })).to.deep.equal(
      runKey,
    );
  });

  it('reads a record with the records it refers to in one statement, each as TypeORM reads it; none is null', async () => {
    const { ds } = getStack();
    const { tenant, row, structureId, deploymentId } = await runRowOfANewTenant('direct-sql-joined', {
      args: [],
      env_vars: [],
      input: { a: 1 },
    });
    await insertRow(ds.manager, Run, row);
    const joins = {
      resource: { entity: CodeResource, key: 'resource_id', by: 'resource_id' },
      deployment: { entity: Deployment, key: 'deployment_id', by: 'deployment_id' },
      organization: { entity: Organization, key: 'organization_id', by: 'organization_id' },
    } as const;
    const read = await findJoinedPrepared<
      Run,
      { resource: CodeResource; deployment: Deployment; organization: Organization }
    >(ds, Run, { run_id: row.run_id }, joins);
    expect(read?.record).to.be.instanceOf(Run);
    expect(read?.record).to.deep.equal(await ds.getRepository(Run).findOneByOrFail({ run_id: row.run_id }));
    expect(read?.joined.resource).to.deep.equal(
      await ds.getRepository(CodeResource).findOneByOrFail({ resource_id: structureId }),
    );
    expect(read?.joined.deployment).to.deep.equal(
      await ds.getRepository(Deployment).findOneByOrFail({ deployment_id: deploymentId }),
    );
    expect(read?.joined.organization).to.deep.equal(
      await ds.getRepository(Organization).findOneByOrFail({ organization_id: tenant.organizationId }),
    );

    // A reference that is null (or names nothing) joins null; a record that does not exist is null.
    await ds.query(`UPDATE runs SET deployment_id = NULL WHERE run_id = $1`, [row.run_id]);
    const without = await findJoinedPrepared<
      Run,
      { resource: CodeResource; deployment: Deployment; organization: Organization }
    >(ds, Run, { run_id: row.run_id }, joins);
    expect(without?.joined.deployment).to.equal(null);
    expect(without?.joined.resource?.resource_id).to.equal(structureId);
    expect(await findJoinedPrepared(ds, Run, { run_id: randomUUID() }, joins)).to.equal(null);
  });

  it('refuses a key that is not a column of the entity', async () => {
    const { ds } = getStack();
    let error: Error | undefined;
    await findOnePrepared(ds, Organization, { no_such_column: 'x' } as never).catch((e: Error) => (error = e));
    expect(error?.message).to.match(/has no column no_such_column/);
  });
});
