// Rules (one instruction for a model each) and rulesets (named, ordered lists of rules). A ruleset's
// `rule_ids` are rows of ruleset_rules with their position; deleting a rule removes it from every
// ruleset (foreign key cascade). Assistant runs read them through `rulesetInstructions`.
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../caller';
import { HttpError, missingReferences, notFound } from '../../errors';
import { PageRequest, paginate, Pagination, skipTake } from '../../persistence/pagination';
import { Rule, Ruleset, RulesetRule } from '../../persistence/entities';
import { findInOrg } from '../../persistence/scoped';
import { aliasGuard, checkMetadata } from '../record-fields';
import { forgetDeleted } from '../../persistence/references';

/** A ruleset holds at most this many rules; `GET /rules` returns this many per page by default. */
export const MAX_RULES_PER_RULESET = 100;
export const MAX_RULE_TEXT = 2000;

export type RulesetView = Ruleset & { rule_ids: string[] };

type Metadata = Record<string, unknown>;

/** 409 (missingReferences) naming each id of `ids` that is not a record of the organization, with its position in the request. */
function missingIds(what: string, ids: string[], found: Set<string>, path: string): HttpError | undefined {
  const errors = ids.flatMap((id, i) =>
    found.has(id) ? [] : [{ message: `${what} ${id} not found`, path: `${path}/${i}` }],
  );
  return errors.length ? missingReferences(errors) : undefined;
}

// ---- Rules ----

export interface RuleFields {
  name?: string;
  rule?: string;
  metadata?: Metadata;
}

function checkRuleFields(f: RuleFields): void {
  checkMetadata(f.metadata, '/body/metadata');
}

export const findRule = (ds: DataSource, caller: Caller, ruleId: string) =>
  findInOrg(ds, Rule, caller.organizationId, { rule_id: ruleId }, 'Rule');

/** Newest first; with `rulesetId`, that ruleset's rules in its order (404 for a ruleset not of the organization). */
export async function listRules(
  ds: DataSource,
  caller: Caller,
  page: PageRequest,
  filter: { rulesetId?: string },
): Promise<{ items: Rule[]; pagination: Pagination }> {
  const { skip, take } = skipTake(page);
  const q = ds
    .getRepository(Rule)
    .createQueryBuilder('r')
    .where('r.organization_id = :org', { org: caller.organizationId });
  if (filter.rulesetId !== undefined) {
    const ruleset = await ds
      .getRepository(Ruleset)
      .findOneBy({ ruleset_id: filter.rulesetId, organization_id: caller.organizationId });
    if (!ruleset)
      throw new HttpError(404, 'NotFoundError', [
        { message: `Ruleset ${filter.rulesetId} not found`, path: '/query/ruleset_id' },
      ]);
    q.innerJoin(RulesetRule, 'rr', 'rr.rule_id = r.rule_id AND rr.ruleset_id = :rs', { rs: filter.rulesetId }).orderBy(
      'rr.position',
      'ASC',
    );
  } else {
    // rule_id breaks ties between rules created in the same millisecond, so pages never overlap.
    q.orderBy('r.created_at', 'DESC').addOrderBy('r.rule_id', 'DESC');
  }
  const [items, total] = await q.offset(skip).limit(take).getManyAndCount();
  return { items, pagination: paginate(page, total) };
}

export async function createRule(
  ds: DataSource,
  caller: Caller,
  f: Required<Pick<RuleFields, 'name' | 'rule'>> & RuleFields,
): Promise<Rule> {
  checkRuleFields(f);
  const now = new Date();
  return ds.getRepository(Rule).save({
    rule_id: randomUUID(),
    organization_id: caller.organizationId,
    name: f.name,
    rule: f.rule,
    metadata: f.metadata ?? {},
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  });
}

/** `metadata`, when given, replaces the rule's metadata. */
export async function updateRule(ds: DataSource, rule: Rule, f: RuleFields): Promise<Rule> {
  checkRuleFields(f);
  if (f.name !== undefined) rule.name = f.name;
  if (f.rule !== undefined) rule.rule = f.rule;
  if (f.metadata !== undefined) rule.metadata = f.metadata;
  rule.updated_at = new Date();
  return ds.getRepository(Rule).save(rule);
}

/** Also removes the rule from every ruleset (cascade); the others keep their order. */
export async function deleteRule(ds: DataSource, rule: Rule): Promise<void> {
  await ds.getRepository(Rule).delete({ rule_id: rule.rule_id });
}

// ---- Rulesets ----

export interface RulesetFields {
  name?: string;
  description?: string;
  alias?: string | null;
  rule_ids?: string[];
  metadata?: Metadata;
}

function checkRulesetFields(f: RulesetFields): void {
  checkMetadata(f.metadata, '/body/metadata');
}

/** `rule_ids` of each ruleset, in order. */
async function ruleIdsOf(ds: DataSource | EntityManager, rulesetIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(rulesetIds.map((id) => [id, []]));
  if (!rulesetIds.length) return out;
  const rows = await ds
    .getRepository(RulesetRule)
    .createQueryBuilder('rr')
    .where('rr.ruleset_id IN (:...ids)', { ids: rulesetIds })
    .orderBy('rr.position', 'ASC')
    .getMany();
  for (const r of rows) out.get(r.ruleset_id)!.push(r.rule_id);
  return out;
}

async function withRuleIds(ds: DataSource | EntityManager, rulesets: Ruleset[]): Promise<RulesetView[]> {
  const ids = await ruleIdsOf(
    ds,
    rulesets.map((r) => r.ruleset_id),
  );
  return rulesets.map((r) => Object.assign(r, { rule_ids: ids.get(r.ruleset_id) ?? [] }));
}

export async function findRuleset(ds: DataSource, caller: Caller, rulesetId: string): Promise<RulesetView> {
  const ruleset = await findInOrg(ds, Ruleset, caller.organizationId, { ruleset_id: rulesetId }, 'Ruleset');
  return (await withRuleIds(ds, [ruleset]))[0];
}

/** Newest first; `alias` matches exactly. */
export async function listRulesets(
  ds: DataSource,
  caller: Caller,
  page: PageRequest,
  filter: { alias?: string },
): Promise<{ items: RulesetView[]; pagination: Pagination }> {
  const [rows, total] = await ds.getRepository(Ruleset).findAndCount({
    where: { organization_id: caller.organizationId, ...(filter.alias !== undefined ? { alias: filter.alias } : {}) },
    order: { created_at: 'DESC', ruleset_id: 'DESC' },
    ...skipTake(page),
  });
  return { items: await withRuleIds(ds, rows), pagination: paginate(page, total) };
}

/**
 * Replaces the ruleset's rules by `ruleIds`, in that order. Every id must be a rule of the organization;
 * the rules are locked (FOR SHARE) so a concurrent delete cannot slip in between the check and the insert.
 */
async function setRuleIds(
  em: EntityManager,
  organizationId: string,
  rulesetId: string,
  ruleIds: string[],
): Promise<void> {
  if (ruleIds.length) {
    const rows: Array<{ rule_id: string }> = await em.query(
      `SELECT rule_id FROM rules WHERE organization_id = $1 AND rule_id = ANY($2::uuid[]) FOR SHARE`,
      [organizationId, ruleIds],
    );
    const err = missingIds('Rule', ruleIds, new Set(rows.map((r) => r.rule_id)), '/body/rule_ids');
    if (err) throw err;
  }
  await em.query(`DELETE FROM ruleset_rules WHERE ruleset_id = $1`, [rulesetId]);
  if (ruleIds.length) {
    await em.query(
      `INSERT INTO ruleset_rules (ruleset_id, rule_id, position)
       SELECT $1, id, ord - 1 FROM unnest($2::uuid[]) WITH ORDINALITY AS t(id, ord)`,
      [rulesetId, ruleIds],
    );
  }
}

export async function createRuleset(
  ds: DataSource,
  caller: Caller,
  f: RulesetFields & { name: string },
): Promise<RulesetView> {
  checkRulesetFields(f);
  const now = new Date();
  const ruleset: Ruleset = {
    ruleset_id: randomUUID(),
    organization_id: caller.organizationId,
    name: f.name,
    description: f.description ?? '',
    alias: f.alias ?? null,
    metadata: f.metadata ?? {},
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  await aliasGuard('rulesets_alias_idx', 'ruleset', f.alias, () =>
    ds.transaction(async (em) => {
      await em.getRepository(Ruleset).save(ruleset);
      await setRuleIds(em, caller.organizationId, ruleset.ruleset_id, f.rule_ids ?? []);
    }),
  );
  return { ...ruleset, rule_ids: f.rule_ids ?? [] };
}

/** Given fields replace the old ones: `rule_ids` the whole list, `metadata` the whole object; `alias: null` clears it. */
export async function updateRuleset(
  ds: DataSource,
  caller: Caller,
  rulesetId: string,
  f: RulesetFields,
): Promise<RulesetView> {
  checkRulesetFields(f);
  return aliasGuard('rulesets_alias_idx', 'ruleset', f.alias, () =>
    ds.transaction(async (em) => {
      const rows: Ruleset[] = await em
        .getRepository(Ruleset)
        .createQueryBuilder('r')
        .where('r.ruleset_id = :id AND r.organization_id = :org', { id: rulesetId, org: caller.organizationId })
        .setLock('pessimistic_write')
        .getMany();
      if (!rows.length) throw notFound('Ruleset');
      const ruleset = rows[0];
      if (f.name !== undefined) ruleset.name = f.name;
      if (f.description !== undefined) ruleset.description = f.description;
      if (f.alias !== undefined) ruleset.alias = f.alias;
      if (f.metadata !== undefined) ruleset.metadata = f.metadata;
      ruleset.updated_at = new Date();
      await em.getRepository(Ruleset).save(ruleset);
      if (f.rule_ids !== undefined) await setRuleIds(em, caller.organizationId, rulesetId, f.rule_ids);
      return (await withRuleIds(em, [ruleset]))[0];
    }),
  );
}

/** Deletes the ruleset; the assistants that name it no longer do (same transaction). */
export async function deleteRuleset(ds: DataSource, ruleset: Ruleset): Promise<void> {
  await ds.transaction(async (em) => {
    await forgetDeleted(em, 'ruleset', ruleset.organization_id, ruleset.ruleset_id);
    await em.getRepository(Ruleset).delete({ ruleset_id: ruleset.ruleset_id });
  });
}

// ---- For assistants ----

/**
 * 409 naming every id of `ids` that is not a ruleset of the caller's organization, each with its
 * position under `path` (`/body/ruleset_ids/2`).
 */
export async function assertRulesetsExist(
  ds: DataSource,
  caller: Caller,
  ids: string[],
  path = '/body/ruleset_ids',
): Promise<void> {
  if (!ids.length) return;
  const rows: Array<{ ruleset_id: string }> = await ds.query(
    `SELECT ruleset_id FROM rulesets WHERE organization_id = $1 AND ruleset_id = ANY($2::uuid[])`,
    [caller.organizationId, ids],
  );
  const err = missingIds('Ruleset', ids, new Set(rows.map((r) => r.ruleset_id)), path);
  if (err) throw err;
}

/**
 * The rulesets of `rulesetIds` in that order, each with its rule texts in order: what a model is told.
 * Ids that are not rulesets of the organization (deleted since) are skipped; a repeated id counts once.
 */
export async function rulesetInstructions(
  ds: DataSource,
  organizationId: string,
  rulesetIds: string[],
): Promise<Array<{ ruleset_id: string; name: string; rules: string[] }>> {
  const wanted = [...new Set(rulesetIds)];
  if (!wanted.length) return [];
  const rows: Array<{ ruleset_id: string; name: string; rule: string | null }> = await ds.query(
    `SELECT rs.ruleset_id, rs.name, r.rule
       FROM rulesets rs
       LEFT JOIN ruleset_rules rr ON rr.ruleset_id = rs.ruleset_id
       LEFT JOIN rules r ON r.rule_id = rr.rule_id
      WHERE rs.organization_id = $1 AND rs.ruleset_id = ANY($2::uuid[])
      ORDER BY rs.ruleset_id, rr.position`,
    [organizationId, wanted],
  );
  const byId = new Map<string, { ruleset_id: string; name: string; rules: string[] }>();
  for (const row of rows) {
    let entry = byId.get(row.ruleset_id);
    if (!entry) byId.set(row.ruleset_id, (entry = { ruleset_id: row.ruleset_id, name: row.name, rules: [] }));
    if (row.rule !== null) entry.rules.push(row.rule);
  }
  return wanted.flatMap((id) => byId.get(id) ?? []);
}
