// A tool's activities (the paths of its OpenAPI document, GET /api/tools/{id}/openapi) and a form that runs
// one with JSON params (POST /api/tools/{id}/activities/{name}), showing its answer.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { getToolDocument, runToolActivity, type ToolDocument } from '../api/code-resources';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Json, Section } from '../ui';
import { parseJson } from './json-input';

const activitiesOf = (doc: ToolDocument | undefined) =>
  Object.entries(doc?.paths ?? {})
    .filter(([path]) => path.startsWith('/activities/'))
    .map(([path, item]) => ({ name: path.slice('/activities/'.length), description: item.post?.description }));

export function ToolActivity(props: { toolId: string; deployed: boolean; onRan: () => void }) {
  const doc = useQuery({
    queryKey: queryKeys.toolDocument(props.toolId),
    enabled: props.deployed,
    queryFn: () => getToolDocument(props.toolId),
  });
  const activities = activitiesOf(doc.data);
  const [chosen, setChosen] = useState('');
  const activity = chosen || activities[0]?.name || '';
  const [params, setParams] = useState('{}');
  const parsed = parseJson(params);
  const run = useMutation({
    mutationFn: () => runToolActivity(props.toolId, activity, parsed.value),
    onSettled: props.onRan,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    run.mutate();
  };
  const description = activities.find((a) => a.name === activity)?.description;
  return (
    <Section title="Run an activity">
      {!props.deployed && <p className="muted">Running an activity needs a successful deployment.</p>}
      <ErrorBox error={doc.error} />
      <form onSubmit={submit} className="run-form">
        <label htmlFor="tool-activity">Activity</label>
        <select id="tool-activity" value={activity} onChange={(e) => setChosen(e.target.value)}>
          {activities.map((a) => (
            <option key={a.name} value={a.name}>
              {a.name}
            </option>
          ))}
        </select>
        {description && <p className="muted">{description}</p>}
        <label htmlFor="tool-params">JSON params</label>
        <textarea id="tool-params" rows={4} value={params} onChange={(e) => setParams(e.target.value)} />
        <button type="submit" disabled={!activity || !!parsed.error || run.isPending}>
          {run.isPending ? 'Running…' : 'Run activity'}
        </button>
      </form>
      {parsed.error && <p className="error">{parsed.error}</p>}
      <ErrorBox error={run.error} />
      {run.isSuccess && (
        <>
          <h3>Answer</h3>
          <Json label="Answer" value={run.data} />
        </>
      )}
    </Section>
  );
}
