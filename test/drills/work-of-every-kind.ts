// Work of every kind a drill submits through an api: structure runs, function executes, assistant runs, chat
// messages, knowledge base jobs, data jobs and builds, for one organization of the drill's own (the model
// double answers its assistant and chat requests). Each item answers how it ended. The overload drill submits
// many short ones at once; the upgrade drill long ones (`seconds`) across a rollout, through whichever api
// serves at the time (`baseUrl` is asked at each request).
import { randomUUID } from 'node:crypto';
import { structureWithBuild } from '../harness/builds';
import { chatRequest } from '../harness/chat-requests';
import { as } from '../harness/client';
import { uploadText } from '../harness/knowledge-bases';
import { TERMINAL } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { config, entriesOf, makeArchive, uploadToNewBucket } from '../fixtures/projects';
import { until } from './kit';

export interface Ending {
  what: string;
  status: string;
  reason?: string;
  /** The record's status_detail message, for a report. */
  message?: string;
}

/** How a record ended, from its status and status_detail. */
const endingOf = (what: string, r: { status: string; status_detail?: any }): Ending => ({
  what,
  status: r.status,
  reason: r.status_detail?.reason,
  message: r.status_detail?.message ?? r.status_detail?.error,
});

export const KINDS_OF_WORK = 7;

export type Kind = (created?: () => void) => Promise<Ending>;

/** The record at `path` once its status is terminal. */
const ended = (baseUrl: () => string, key: string, what: string, path: string) =>
  until(
    what,
    600_000,
    async () => {
      // An api stopped between two looks (the upgrade drill's rollout) is asked again, through the next one.
      const r = (
        await as(key, baseUrl())
          .get(path)
          .catch(() => undefined)
      )?.body;
      return r && TERMINAL.includes(r.status) ? r : undefined;
    },
    250,
  );

/**
 * An organization's resources, and its kinds of work. `seconds`: structure runs, function handlers and
 * assistant answers take that long (the assistant's answer streams one word a second); unset, they are short.
 * A chat message is a request held open until the answer, so it is short always. Each kind calls `created`
 * once the api has answered its create request (its workflow started).
 */
export async function workOfEveryKind(
  label: string,
  baseUrl: () => string,
  opts: { seconds?: number } = {},
): Promise<{ organizationId: string; key: string; kinds: Kind[] }> {
  const t = await newTenant(label);
  const api = () => as(t.key, baseUrl());
  const seconds = opts.seconds;
  const { modelProvider } = getStack();
  const model = modelProvider.uniqueModel();
  const chatModel = modelProvider.uniqueModel();
  modelProvider.script({ model: chatModel, text: 'Busy, but here.', times: Infinity });
  modelProvider.script(
    seconds
      ? {
          model,
          text: Array.from({ length: seconds }, (_, i) => `word${i}`).join(' '),
          chunkDelayMs: 1000,
          times: Infinity,
        }
      : { model, text: 'Busy, but here.', times: Infinity },
  );
  const structure = await structureWithBuild(t.organizationId, {
    files: { 'structure.py': `import time\ntime.sleep(${seconds ?? 1})\nprint("done")\n` },
  });
  const fn = await structureWithBuild(t.organizationId, {
    kind: 'function',
    files: {
      'main.py': `import time\ndef handler(event):\n    time.sleep(${seconds ?? 0})\n    return {"ok": True}\n`,
    },
    mainFile: 'main.py',
  });
  const assistant = (await api().post('/api/assistants', { name: 'busy', input: 'Hi' })).body.assistant_id as string;
  const bucketId = (await api().post('/api/buckets', { name: 'docs' })).body.bucket_id as string;
  await uploadText(api(), bucketId, 'notes.md', 'Narwhals carry a spiral tusk.');
  const project = makeArchive(
    'zip',
    entriesOf({ 'structure_config.yaml': config('python3', '  main_file: s.py\n'), 's.py': 'print("built")\n' }),
  );
  const codeBucket = await uploadToNewBucket(t.key, 'code.zip', project, baseUrl());

  const answered = (what: string, res: { status: number; text: string }): Ending => ({
    what,
    status: `HTTP ${res.status}`,
    reason: res.status >= 500 ? res.text.slice(0, 200) : undefined,
  });
  const kinds: Kind[] = [
    async (created) => {
      const res = await api().post(`/api/structures/${structure.structureId}/runs`, { args: [] });
      created?.();
      if (res.status !== 201) return answered('structure run', res);
      const run = await ended(baseUrl, t.key, 'a structure run', `/api/structure-runs/${res.body.structure_run_id}`);
      return endingOf('structure run', run);
    },
    async (created) => {
      const res = await api().post(`/api/functions/${fn.structureId}/execute`, {});
      created?.();
      if (res.status === 200) return { what: 'function', status: 'SUCCEEDED' };
      // Not ended within FUNCTION_EXECUTE_TIMEOUT_SECONDS: the run to poll.
      if (res.status !== 202) return answered('function', res);
      const run = await ended(baseUrl, t.key, 'a function run', `/api/function-runs/${res.body.function_run_id}`);
      return endingOf('function', run);
    },
    async (created) => {
      const res = await api().post(`/api/assistants/${assistant}/runs`, { input: 'Hi', model: `local/${model}` });
      created?.();
      if (res.status !== 201) return answered('assistant run', res);
      const run = await ended(baseUrl, t.key, 'an assistant run', `/api/assistant-runs/${res.body.assistant_run_id}`);
      return endingOf('assistant run', run);
    },
    async (created) => {
      const res = await api().post('/api/chat/messages', chatRequest(chatModel));
      created?.();
      return res.status === 201 ? { what: 'chat message', status: 'SUCCEEDED' } : answered('chat message', res);
    },
    async (created) => {
      const kb = await api().post('/api/knowledge-bases', {
        name: `kb-${randomUUID()}`,
        type: 'gtc_hybrid_sql_pg_vector',
        config: { gtc_hybrid_sql_pg_vector: {} },
        asset_paths: [`${bucketId}/notes.md`],
      });
      const job = await api().post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
      created?.();
      if (job.status !== 202) return answered('knowledge base job', job);
      const j = await ended(
        baseUrl,
        t.key,
        'a knowledge base job',
        `/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`,
      );
      return endingOf('knowledge base job', j);
    },
    async (created) => {
      const connector = await api().post('/api/data-connectors', {
        name: `copy-${randomUUID()}`,
        type: 'data_lake',
        config: { data_lake: { bucket_id: bucketId, asset_paths: ['notes.md'] } },
      });
      created?.();
      if (connector.status !== 201) return answered('data job', connector);
      const j = await ended(baseUrl, t.key, 'a data job', `/api/data-jobs/${connector.body.data_job_id}`);
      return endingOf('data job', j);
    },
    async (created) => {
      const structureOfCode = await api().post('/api/structures', {
        name: `built-${randomUUID().slice(0, 8)}`,
        code: { data_lake: { bucket_id: codeBucket, asset_path: 'code.zip' } },
      });
      created?.();
      if (structureOfCode.status !== 201) return answered('build', structureOfCode);
      const deploymentId = structureOfCode.body.latest_deployment_id as string;
      const d = await ended(baseUrl, t.key, 'a build', `/api/deployments/${deploymentId}`);
      return endingOf('build', d);
    },
  ];
  return { organizationId: t.organizationId, key: t.key, kinds };
}
