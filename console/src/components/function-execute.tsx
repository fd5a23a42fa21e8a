// Executes a function with a JSON body (POST /api/functions/{id}/execute, answered once the run ends) and
// shows its answer; the run itself is in the function's recent runs.
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { executeFunction } from '../api/code-resources';
import { ErrorBox, Json, Section } from '../ui';
import { parseJson } from './json-input';

export function FunctionExecute(props: { functionId: string; deployed: boolean; onRan: () => void }) {
  const [body, setBody] = useState('{}');
  const parsed = parseJson(body);
  const execute = useMutation({
    mutationFn: () => executeFunction(props.functionId, parsed.value),
    onSettled: props.onRan,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    execute.mutate();
  };
  return (
    <Section title="Execute">
      <form onSubmit={submit} className="run-form">
        <label htmlFor="function-body">JSON body</label>
        <textarea id="function-body" rows={4} value={body} onChange={(e) => setBody(e.target.value)} />
        <button type="submit" disabled={!props.deployed || !!parsed.error || execute.isPending}>
          {execute.isPending ? 'Executing…' : 'Execute'}
        </button>
        {!props.deployed && <p className="muted">Executing needs a successful deployment.</p>}
      </form>
      {parsed.error && <p className="error">{parsed.error}</p>}
      <ErrorBox error={execute.error} />
      {execute.isSuccess && (
        <>
          <h3>Answer</h3>
          <Json label="Answer" value={execute.data} />
        </>
      )}
    </Section>
  );
}
