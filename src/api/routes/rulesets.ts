// Rules and rulesets: what the griptape GriptapeCloudRulesetDriver reads (`GET /rulesets?alias=`,
// `GET /rules?ruleset_id=`) and what assistants are told. Domain logic in src/services/assistants/rulesets.ts.
import { Rule } from '../../persistence/entities';
import { iso } from '../../persistence/scoped';
import {
  createRule,
  createRuleset,
  deleteRule,
  deleteRuleset,
  findRule,
  findRuleset,
  listRules,
  listRulesets,
  MAX_RULE_TEXT,
  MAX_RULES_PER_RULESET,
  RulesetView,
  updateRule,
  updateRuleset,
} from '../../services/assistants/rulesets';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';

const metadata = { type: 'object', description: 'Any JSON object (at most 64 KiB as JSON).' } as const;
const nullableAlias = { type: ['string', 'null'], minLength: 1, maxLength: 200 } as const;

// ---- Rules ----

const RuleSchema = defineSchema('Rule', {
  type: 'object',
  required: ['rule_id', 'name', 'rule', 'metadata', 'organization_id', 'created_by', 'created_at', 'updated_at'],
  properties: {
    rule_id: uuid,
    name: { type: 'string' },
    rule: { type: 'string' },
    metadata: { type: 'object' },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

const presentRule = (r: Rule) => ({
  rule_id: r.rule_id,
  name: r.name,
  rule: r.rule,
  metadata: r.metadata,
  organization_id: r.organization_id,
  created_by: r.created_by,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

const ruleFields = { name: str(1, 200), rule: str(1, MAX_RULE_TEXT), metadata } as const;

route({
  operationId: 'ListRules',
  method: 'get',
  path: '/rules',
  tag: 'Rules',
  paged: true,
  // A ruleset holds at most MAX_RULES_PER_RULESET rules, and the griptape driver reads one page only.
  pageSize: { default: MAX_RULES_PER_RULESET, max: MAX_RULES_PER_RULESET },
  summary: `Rules, newest first; with \`ruleset_id\`, that ruleset's rules in its order (page_size defaults to ${MAX_RULES_PER_RULESET}).`,
  query: { ruleset_id: uuid },
  responses: { 200: { description: 'Rules', schema: pageOf('RuleList', 'rules', RuleSchema) } },
  handler: async ({ deps, caller, page, query }) => {
    const { items, pagination } = await listRules(deps.ds, caller, page, { rulesetId: query.ruleset_id });
    return { status: 200, body: { rules: items.map(presentRule), pagination } };
  },
});

route({
  operationId: 'CreateRule',
  method: 'post',
  path: '/rules',
  tag: 'Rules',
  bodyRequired: true,
  summary: 'Creates a rule: one instruction for a model.',
  body: defineSchema('CreateRuleRequest', { type: 'object', required: ['name', 'rule'], properties: ruleFields }),
  responses: { 201: { description: 'Rule', schema: RuleSchema } },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: presentRule(await createRule(deps.ds, caller, body)),
  }),
});

route({
  operationId: 'GetRule',
  method: 'get',
  path: '/rules/{rule_id}',
  tag: 'Rules',
  params: { rule_id: uuid },
  summary: 'A rule.',
  responses: { 200: { description: 'Rule', schema: RuleSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentRule(await findRule(deps.ds, caller, params.rule_id)),
  }),
});

route({
  operationId: 'UpdateRule',
  method: 'patch',
  path: '/rules/{rule_id}',
  tag: 'Rules',
  params: { rule_id: uuid },
  summary: 'Changes the given fields of a rule (`metadata` replaces the whole object).',
  body: defineSchema('UpdateRuleRequest', { type: 'object', properties: ruleFields }),
  responses: { 200: { description: 'Rule', schema: RuleSchema } },
  handler: async ({ deps, caller, params, body }) => {
    const rule = await findRule(deps.ds, caller, params.rule_id);
    return { status: 200, body: presentRule(await updateRule(deps.ds, rule, body)) };
  },
});

route({
  operationId: 'DeleteRule',
  method: 'delete',
  path: '/rules/{rule_id}',
  tag: 'Rules',
  params: { rule_id: uuid },
  summary: 'Deletes a rule and removes it from every ruleset.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteRule(deps.ds, await findRule(deps.ds, caller, params.rule_id));
    return { status: 204 };
  },
});

// ---- Rulesets ----

const RulesetSchema = defineSchema('Ruleset', {
  type: 'object',
  required: [
    'ruleset_id',
    'name',
    'description',
    'alias',
    'rule_ids',
    'metadata',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    ruleset_id: uuid,
    name: { type: 'string' },
    description: { type: 'string' },
    alias: { type: ['string', 'null'] },
    rule_ids: { type: 'array', items: uuid },
    metadata: { type: 'object' },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

const presentRuleset = (r: RulesetView) => ({
  ruleset_id: r.ruleset_id,
  name: r.name,
  description: r.description,
  alias: r.alias,
  rule_ids: r.rule_ids,
  metadata: r.metadata,
  organization_id: r.organization_id,
  created_by: r.created_by,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

const rulesetFields = {
  name: str(1, 200),
  description: str(0, 1000),
  alias: { ...nullableAlias, description: 'Unique per organization; null clears it.' },
  rule_ids: {
    type: 'array',
    items: uuid,
    uniqueItems: true,
    maxItems: MAX_RULES_PER_RULESET,
    description: 'Rules of the organization, in order.',
  },
  metadata,
} as const;

route({
  operationId: 'ListRulesets',
  method: 'get',
  path: '/rulesets',
  tag: 'Rulesets',
  paged: true,
  summary: 'Rulesets, newest first; `alias` matches exactly.',
  query: { alias: { type: 'string' } },
  responses: { 200: { description: 'Rulesets', schema: pageOf('RulesetList', 'rulesets', RulesetSchema) } },
  handler: async ({ deps, caller, page, query }) => {
    const { items, pagination } = await listRulesets(deps.ds, caller, page, { alias: query.alias });
    return { status: 200, body: { rulesets: items.map(presentRuleset), pagination } };
  },
});

route({
  operationId: 'CreateRuleset',
  method: 'post',
  path: '/rulesets',
  tag: 'Rulesets',
  bodyRequired: true,
  summary: 'Creates a ruleset (alias unique per organization: 409 when taken; unknown rule ids: 404).',
  body: defineSchema('CreateRulesetRequest', { type: 'object', required: ['name'], properties: rulesetFields }),
  responses: { 201: { description: 'Ruleset', schema: RulesetSchema } },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: presentRuleset(await createRuleset(deps.ds, caller, body)),
  }),
});

route({
  operationId: 'GetRuleset',
  method: 'get',
  path: '/rulesets/{ruleset_id}',
  tag: 'Rulesets',
  params: { ruleset_id: uuid },
  summary: 'A ruleset with its rule ids in order.',
  responses: { 200: { description: 'Ruleset', schema: RulesetSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentRuleset(await findRuleset(deps.ds, caller, params.ruleset_id)),
  }),
});

route({
  operationId: 'UpdateRuleset',
  method: 'patch',
  path: '/rulesets/{ruleset_id}',
  tag: 'Rulesets',
  params: { ruleset_id: uuid },
  summary: 'Changes the given fields; `rule_ids` replaces the whole list, `metadata` the whole object.',
  body: defineSchema('UpdateRulesetRequest', { type: 'object', properties: rulesetFields }),
  responses: { 200: { description: 'Ruleset', schema: RulesetSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 200,
    body: presentRuleset(await updateRuleset(deps.ds, caller, params.ruleset_id, body)),
  }),
});

route({
  operationId: 'DeleteRuleset',
  method: 'delete',
  path: '/rulesets/{ruleset_id}',
  tag: 'Rulesets',
  params: { ruleset_id: uuid },
  summary: 'Deletes a ruleset (its rules stay); assistants that name it no longer do.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteRuleset(deps.ds, await findRuleset(deps.ds, caller, params.ruleset_id));
    return { status: 204 };
  },
});
