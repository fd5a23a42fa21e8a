// Retrieval on top of knowledge bases through HTTP: searches (the default model answers from the retrieved
// chunks, citing them; persisted and listed), retrievers (CRUD, components naming only the organization's
// knowledge bases, queries fused by reciprocal rank fusion across knowledge bases and reranked by the
// model), and the refusals (empty query, no model configured, unknown component). The stack's model
// provider embeds with a hashed bag of words and answers chat requests as scripted.
import { expect } from 'chai';
import { as } from '../harness/client';
import { runKnowledgeBaseJob, uploadText } from '../harness/knowledge-bases';
import { getStack, newTenant } from '../harness/stack';
import { searchKnowledgeBase } from '../../src/services/knowledge/retrieval/search';
import { HttpError } from '../../src/errors';

type Api = ReturnType<typeof as>;

/** A knowledge base over `paths`, its first job SUCCEEDED. */
export async function builtKnowledgeBase(api: Api, name: string, paths: string[]): Promise<string> {
  const kb = await api.post('/api/knowledge-bases', {
    name,
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: {} },
    asset_paths: paths,
  });
  expect(kb.status, kb.text).to.equal(201);
  const id = kb.body.knowledge_base_id as string;
  await runKnowledgeBaseJob(api, id, 30_000);
  return id;
}

describe('knowledge base search and retrievers', function () {
  this.timeout(90_000);
  let api: Api;
  let bucketId: string;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let geography: string;
  let animals: string;

  before(async () => {
    tenant = await newTenant('kb-retrieval');
    api = as(tenant.key);
    bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id;
    await uploadText(api, bucketId, 'geo/france.txt', 'The capital of France is Paris. Paris lies on the Seine river.');
    await uploadText(api, bucketId, 'geo/iceland.md', '# Iceland\n\nIceland has many active volcanoes and glaciers.');
    await uploadText(
      api,
      bucketId,
      'zoo/penguins.txt',
      'Penguins live in Antarctica and eat krill. Penguins cannot fly.',
    );
    await uploadText(api, bucketId, 'zoo/octopus.txt', 'An octopus has eight arms and three hearts.');
    geography = await builtKnowledgeBase(api, 'Geography', [`${bucketId}/geo/`]);
    animals = await builtKnowledgeBase(api, 'Animals', [`${bucketId}/zoo/`]);
  });

  it('answers a search with the default model from the retrieved chunks, citing them; persisted and listed', async () => {
    const provider = getStack().modelProvider;
    let prompt: any;
    provider.script({
      model: 'test-model',
      respond: (body) => {
        prompt = body;
        return { text: 'The capital of France is Paris [1].' };
      },
    });
    const search = await api.post(`/api/knowledge-bases/${geography}/search`, {
      query: 'What is the capital of France?',
      query_args: { count: 2 },
    });
    expect(search.status, search.text).to.equal(200);
    expect(search.body).to.include({
      knowledge_base_id: geography,
      query: 'What is the capital of France?',
      result: 'The capital of France is Paris [1].',
      model: 'local/test-model',
      created_by: tenant.userId,
    });
    expect(search.body.entries[0].namespace).to.equal(`${bucketId}/geo/france.txt`);
    // The model was given the numbered passages (the best first) and told to cite them.
    expect(prompt.messages[0].content).to.include('Cite the passages');
    expect(prompt.messages[1].content).to.include(
      `[1] (${bucketId}/geo/france.txt)\nfrance\n\nThe capital of France is Paris.`,
    );
    expect(prompt.messages[1].content).to.include('Question: What is the capital of France?');

    const stored = await api.get(`/api/knowledge-base-searches/${search.body.knowledge_base_search_id}`);
    expect(stored.body).to.deep.equal(search.body);
    const listed = await api.get(`/api/knowledge-bases/${geography}/searches`);
    expect(listed.body.knowledge_base_searches.map((s: any) => s.knowledge_base_search_id)).to.deep.equal([
      search.body.knowledge_base_search_id,
    ]);
    expect((await api.get(`/api/knowledge-bases/${animals}/searches`)).body.pagination.total_count).to.equal(0);

    // Nothing to retrieve (a knowledge base without chunks): the answer says so without asking the model.
    const empty = await api.post('/api/knowledge-bases', {
      name: 'Empty',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
    });
    const none = await api.post(`/api/knowledge-bases/${empty.body.knowledge_base_id}/search`, { query: 'Paris' });
    expect(none.status, none.text).to.equal(200);
    expect(none.body).to.include({ result: 'No passage of the knowledge base matches the query.', model: null });

    for (const bad of [{ query: '' }, {}, { query: 'x', query_args: { count: 0 } }]) {
      const res = await api.post(`/api/knowledge-bases/${geography}/search`, bad);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
    }
    expect(provider.unused('test-model')).to.deep.equal([]);
  });

  it('is a 503 naming DEFAULT_MODEL when no model is configured, and when the provider refuses', async () => {
    const { ds, env, config } = getStack();
    const unconfigured = { ...config, models: { ...config.models, defaultModel: undefined } };
    const caller = {
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      apiKeyId: tenant.userId,
      actor: tenant.userId,
      runId: null,
      role: 'owner' as const,
    };
    const refusal = await searchKnowledgeBase({ ds, temporal: env.client, config: unconfigured }, caller, geography, {
      query: 'Paris',
    }).catch((e: unknown) => e);
    expect(refusal).to.be.instanceOf(HttpError);
    expect((refusal as HttpError).status).to.equal(503);
    expect((refusal as HttpError).message).to.include('DEFAULT_MODEL');

    const provider = getStack().modelProvider;
    provider.script({ model: 'test-model', error: { status: 400, message: 'context too long' } });
    const failed = await api.post(`/api/knowledge-bases/${geography}/search`, { query: 'Paris' });
    expect(failed.status, failed.text).to.equal(503);
    expect(failed.body.type).to.equal('ServiceUnavailableError');
    expect(failed.text).to.include('context too long');
    // Nothing was persisted by the failed search.
    expect((await api.get(`/api/knowledge-bases/${geography}/searches`)).body.pagination.total_count).to.equal(1);
  });

  it('creates, reads, lists, updates and deletes retrievers; components name only the organization’s knowledge bases', async () => {
    const created = await api.post('/api/retrievers', {
      name: 'Everything',
      description: 'Geography and animals',
      retriever_components: [
        { name: 'geo', type: 'knowledge_base', config: { knowledge_base_id: geography } },
        { name: 'zoo', type: 'knowledge_base', config: { knowledge_base_id: animals, query_args: { count: 2 } } },
      ],
    });
    expect(created.status, created.text).to.equal(201);
    const r = created.body;
    expect(r).to.include({
      name: 'Everything',
      description: 'Geography and animals',
      organization_id: tenant.organizationId,
    });
    expect(r.retriever_components.map((c: any) => [c.name, c.type, c.config.knowledge_base_id])).to.deep.equal([
      ['geo', 'knowledge_base', geography],
      ['zoo', 'knowledge_base', animals],
    ]);
    expect(Object.keys(r.retriever_components_schema.properties)).to.deep.equal(['geo', 'zoo']);
    expect((await api.get(`/api/retrievers/${r.retriever_id}`)).body).to.deep.equal(r);
    expect((await api.get('/api/retrievers')).body.retrievers.map((x: any) => x.retriever_id)).to.deep.equal([
      r.retriever_id,
    ]);
    const patched = await api.patch(`/api/retrievers/${r.retriever_id}`, {
      name: 'Geo only',
      retriever_components: [{ name: 'geo', type: 'knowledge_base', config: { knowledge_base_id: geography } }],
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.name).to.equal('Geo only');
    // A component kept by name keeps its id.
    expect(patched.body.retriever_components[0].retriever_component_id).to.equal(
      r.retriever_components[0].retriever_component_id,
    );

    const other = await newTenant('kb-retrieval-other');
    const foreign = await as(other.key).post('/api/retrievers', {
      name: 'Borrowed',
      retriever_components: [{ name: 'geo', type: 'knowledge_base', config: { knowledge_base_id: geography } }],
    });
    expect(foreign.status, foreign.text).to.equal(409);
    expect(foreign.body.errors[0]).to.deep.equal({
      message: `Knowledge base not found: ${geography}`,
      path: '/body/retriever_components/0/config/knowledge_base_id',
    });
    expect((await as(other.key).get(`/api/retrievers/${r.retriever_id}`)).status).to.equal(404);
    // The schema has one shape per component type: a config that does not fit its type is a 400.
    for (const body of [
      { name: 'x', retriever_components: [{ name: 'a', type: 'knowledge_base', config: {} }] },
      { name: 'x', retriever_components: [{ name: 'a', type: 'knowledge_base' }] },
      {
        name: 'x',
        retriever_components: [{ name: 'a', type: 'model_rerank', config: { knowledge_base_id: geography } }],
      },
      { name: 'x', retriever_components: [{ name: 'a', type: 'sql' }] },
      { name: 'x', retriever_component_ids: ['not-a-uuid'] },
    ]) {
      const res = await api.post('/api/retrievers', body);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
    }

    expect((await api.delete(`/api/retrievers/${r.retriever_id}`)).status).to.equal(204);
    expect((await api.get(`/api/retrievers/${r.retriever_id}`)).status).to.equal(404);
  });

  it('serves retriever components as their own resource; retrievers name them by id and query them as they are now', async () => {
    const created = await api.post('/api/retriever-components', {
      name: 'zoo',
      description: 'Animals',
      type: 'knowledge_base',
      config: { knowledge_base_id: animals, query_args: { count: 1 } },
    });
    expect(created.status, created.text).to.equal(201);
    const component = created.body;
    expect(component).to.include({ name: 'zoo', description: 'Animals', type: 'knowledge_base' });
    expect(component).to.include({ organization_id: tenant.organizationId });
    expect(component.config).to.deep.equal({ knowledge_base_id: animals, query_args: { count: 1 } });
    const id = component.retriever_component_id;
    expect((await api.get(`/api/retriever-components/${id}`)).body).to.deep.equal(component);
    const listed = await api.get('/api/retriever-components?page_size=1');
    expect(listed.body.retriever_components[0]).to.deep.equal(component);
    expect(listed.body.pagination.total_count).to.be.at.least(1);

    // A retriever names it beside an inline component; it is shown after the inline ones.
    const retriever = await api.post('/api/retrievers', {
      name: 'Mixed',
      retriever_components: [{ name: 'geo', type: 'knowledge_base', config: { knowledge_base_id: geography } }],
      retriever_component_ids: [id],
    });
    expect(retriever.status, retriever.text).to.equal(201);
    expect(retriever.body.retriever_component_ids).to.deep.equal([id]);
    expect(retriever.body.retriever_components.map((c: any) => c.name)).to.deep.equal(['geo', 'zoo']);
    expect(retriever.body.retriever_components[1]).to.deep.equal(component);
    expect(Object.keys(retriever.body.retriever_components_schema.properties)).to.deep.equal(['geo', 'zoo']);
    const rid = retriever.body.retriever_id;
    const both = await api.post(`/api/retrievers/${rid}/query`, {
      query: 'Paris penguins',
      retriever_components_query_args: { geo: { count: 1 } },
    });
    expect(both.status, both.text).to.equal(200);
    expect(both.body.outputs.map((o: any) => o.retriever_component_id).sort()).to.deep.equal(
      [retriever.body.retriever_components[0].retriever_component_id, id].sort(),
    );

    // Changing the component changes what the retriever queries: now geography.
    const patched = await api.patch(`/api/retriever-components/${id}`, {
      type: 'knowledge_base',
      config: { knowledge_base_id: geography },
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.include({ name: 'zoo', description: 'Animals' });
    const renamed = await api.patch(`/api/retriever-components/${id}`, { name: 'geo2' });
    expect(renamed.body).to.include({ name: 'geo2', type: 'knowledge_base' });
    expect(renamed.body.config).to.deep.equal({ knowledge_base_id: geography });
    const after = await api.post(`/api/retrievers/${rid}/query`, { query: 'Paris' });
    expect(new Set(after.body.outputs.map((o: any) => o.knowledge_base_id))).to.deep.equal(new Set([geography]));

    // Its config comes with its type; a config of the wrong type, or alone, is a 400.
    for (const body of [
      { config: { knowledge_base_id: geography } },
      { type: 'model_rerank', config: { knowledge_base_id: geography } },
      { type: 'knowledge_base' },
    ]) {
      const res = await api.patch(`/api/retriever-components/${id}`, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).to.equal(400);
    }
    // Other organizations see none of it, nor may they name it.
    const other = await newTenant('kb-components-other');
    expect((await as(other.key).get(`/api/retriever-components/${id}`)).status).to.equal(404);
    const borrowed = await as(other.key).post('/api/retrievers', { name: 'B', retriever_component_ids: [id] });
    expect(borrowed.status, borrowed.text).to.equal(409);
    expect(borrowed.body.errors[0]).to.deep.equal({
      message: `Retriever component not found: ${id}`,
      path: '/body/retriever_component_ids',
    });
    const foreignKb = await as(other.key).post('/api/retriever-components', {
      name: 'x',
      type: 'knowledge_base',
      config: { knowledge_base_id: geography },
    });
    expect(foreignKb.status, foreignKb.text).to.equal(409);

    // A component a retriever names cannot be deleted; once the retriever lets it go, it can.
    const refused = await api.delete(`/api/retriever-components/${id}`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.errors[0].message).to.include(rid);
    const released = await api.patch(`/api/retrievers/${rid}`, { retriever_component_ids: [] });
    expect(released.body.retriever_components.map((c: any) => c.name)).to.deep.equal(['geo']);
    expect((await api.delete(`/api/retriever-components/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/retriever-components/${id}`)).status).to.equal(404);
    await api.delete(`/api/retrievers/${rid}`);
  });

  it('queries a retriever: rankings of several knowledge bases fused, then reranked by the model', async () => {
    const fused = await api.post('/api/retrievers', {
      name: 'Fused',
      retriever_components: [
        { name: 'geo', type: 'knowledge_base', config: { knowledge_base_id: geography } },
        { name: 'zoo', type: 'knowledge_base', config: { knowledge_base_id: animals } },
      ],
    });
    const geoComponent = fused.body.retriever_components[0].retriever_component_id;
    const answer = await api.post(`/api/retrievers/${fused.body.retriever_id}/query`, {
      query: 'Paris penguins',
      retriever_components_query_args: { geo: { count: 1 }, zoo: { count: 1 } },
    });
    expect(answer.status, answer.text).to.equal(200);
    // Both knowledge bases' best entries, each first in its own ranking: equal fused scores 1 / (60 + 1).
    expect(answer.body.outputs.map((o: any) => o.namespace).sort()).to.deep.equal([
      `${bucketId}/geo/france.txt`,
      `${bucketId}/zoo/penguins.txt`,
    ]);
    for (const o of answer.body.outputs) expect(o.score).to.be.closeTo(1 / 61, 1e-9);
    expect(answer.body.outputs.find((o: any) => o.knowledge_base_id === geography).retriever_component_id).to.equal(
      geoComponent,
    );
    const unknown = await api.post(`/api/retrievers/${fused.body.retriever_id}/query`, {
      query: 'x',
      retriever_components_query_args: { nope: { count: 1 } },
    });
    // Which names exist depends on the stored retriever: a conflict with it.
    expect(unknown.status, unknown.text).to.equal(409);
    expect(unknown.body.errors[0].message).to.include('"nope"');
    expect((await api.post(`/api/retrievers/${fused.body.retriever_id}/query`, { query: '' })).status).to.equal(400);

    const provider = getStack().modelProvider;
    const model = provider.uniqueModel('rerank');
    let rerankRequest: any;
    provider.script({
      model,
      respond: (body) => {
        rerankRequest = body;
        return { text: JSON.stringify({ order: [2] }) };
      },
    });
    const reranked = await api.post('/api/retrievers', {
      name: 'Reranked',
      retriever_components: [
        { name: 'geo', type: 'knowledge_base', config: { knowledge_base_id: geography, query_args: { count: 1 } } },
        { name: 'zoo', type: 'knowledge_base', config: { knowledge_base_id: animals, query_args: { count: 1 } } },
        { name: 'rerank', type: 'model_rerank', config: { model: `local/${model}`, count: 2 } },
      ],
    });
    expect(reranked.status, reranked.text).to.equal(201);
    const out = await api.post(`/api/retrievers/${reranked.body.retriever_id}/query`, { query: 'Paris penguins' });
    expect(out.status, out.text).to.equal(200);
    // The model put passage 2 first; the passage it left out follows.
    const passages = rerankRequest.messages[1].content as string;
    const second = out.body.outputs[0];
    expect(passages).to.include(`[2] (${second.namespace})`);
    expect(out.body.outputs.map((o: any) => o.score)).to.deep.equal([1, 0.5]);
    expect(rerankRequest.response_format.type).to.equal('json_schema');
  });

  it('gives an assistant run retrieval functions: the model searches the knowledge base and answers from it', async () => {
    const provider = getStack().modelProvider;
    const model = provider.uniqueModel('kb-assistant');
    const retriever = await api.post('/api/retrievers', {
      name: 'Zoo',
      retriever_components: [{ name: 'zoo', type: 'knowledge_base', config: { knowledge_base_id: animals } }],
    });
    const assistant = await api.post('/api/assistants', { name: 'Librarian', knowledge_base_ids: [geography] });
    expect(assistant.status, assistant.text).to.equal(201);
    expect(assistant.body.knowledge_base_ids).to.deep.equal([geography]);
    provider.script(
      {
        model,
        toolCalls: [
          { id: 'call_kb', name: 'knowledge_base_Geography', arguments: '{"query": "capital of France", "count": 1}' },
        ],
      },
      {
        model,
        respond: (body) => {
          const passage = body.messages.at(-1)!.content as string;
          // The passage's text, after `[1] (path)`, the chunk's heading line (its title) and a blank line.
          return { text: `From the documents: ${passage.split('\n')[3]}` };
        },
      },
    );
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'What is the capital of France?',
      model: `local/${model}`,
      additional_retriever_ids: [retriever.body.retriever_id],
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.deep.include({
      knowledge_base_ids: [geography],
      retriever_ids: [retriever.body.retriever_id],
    });
    const runId = created.body.assistant_run_id;
    let run: any;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      run = (await api.get(`/api/assistant-runs/${runId}`)).body;
      if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.status)) break;
    }
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.output.value).to.equal(
      'From the documents: The capital of France is Paris. Paris lies on the Seine river.',
    );

    const first = await provider.waitForRequest(model);
    const offered = first.body.tools.map((f: any) => f.function.name);
    expect(offered).to.deep.equal(['knowledge_base_Geography', 'retriever_Zoo']);
    expect(first.body.tools[0].function.parameters.required).to.deep.equal(['query']);
    const second = await provider.waitForRequest(model, 2);
    expect(second.body.messages.at(-1)).to.deep.include({ role: 'tool', tool_call_id: 'call_kb' });
    expect(second.body.messages.at(-1)!.content).to.match(/^\[1\] \(.+\/geo\/france\.txt\)\n/);

    const events = (await api.get(`/api/assistant-runs/${runId}/events?limit=1000`)).body.events;
    const started = events.find((e: any) => e.type === 'AssistantToolCallStarted');
    expect(started.payload).to.deep.equal({
      tool_call_id: 'call_kb',
      name: 'knowledge_base_Geography',
      kind: 'knowledge_base',
      knowledge_base_id: geography,
      query: 'capital of France',
    });
    const completed = events.find((e: any) => e.type === 'AssistantToolCallCompleted');
    expect(completed.payload.entries).to.have.length(1);
    expect(completed.payload.entries[0]).to.include({
      namespace: `${bucketId}/geo/france.txt`,
      content: 'france\n\nThe capital of France is Paris. Paris lies on the Seine river.',
    });
    expect(completed.payload).to.not.have.property('error');

    // Another organization's knowledge bases and retrievers cannot be given to a run.
    const other = as((await newTenant('kb-retrieval-intruder')).key);
    const own = await other.post('/api/assistants', { name: 'Intruder' });
    for (const body of [
      { input: 'x', additional_knowledge_base_ids: [geography] },
      { input: 'x', retriever_ids: [retriever.body.retriever_id] },
    ]) {
      const res = await other.post(`/api/assistants/${own.body.assistant_id}/runs`, body);
      expect(res.status, res.text).to.equal(409);
    }
  });
});
