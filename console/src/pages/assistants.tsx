// The organization's assistants (paged by the server) and a form that creates one (name and instructions);
// each opens its chat.
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { createAssistant, listAssistants } from '../api/assistants';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Section, Time } from '../ui';
import { Writes } from '../role';

export function AssistantsPage() {
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const navigate = useNavigate();
  const assistants = useQuery({
    queryKey: queryKeys.assistants(page),
    placeholderData: keepPreviousData,
    queryFn: () => listAssistants(page),
  });
  const create = useMutation({
    mutationFn: () => createAssistant(name, instructions),
    onSuccess: (a) => navigate({ to: '/assistants/$assistantId', params: { assistantId: a.assistant_id } }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>Assistants</h1>
      <Writes>
        <Section title="New assistant">
          <form onSubmit={submit} className="run-form">
            <label htmlFor="assistant-name">Name</label>
            <input
              id="assistant-name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={200}
            />
            <label htmlFor="assistant-input">Instructions (optional)</label>
            <textarea
              id="assistant-input"
              rows={2}
              value={instructions}
              onChange={(e) => setInstructions(e.target.value)}
            />
            <button type="submit" disabled={!name.trim() || create.isPending}>
              Create assistant
            </button>
          </form>
          <ErrorBox error={create.error} />
        </Section>
      </Writes>
      <ErrorBox error={assistants.error} />
      <table className="list" aria-label="Assistants">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {assistants.data?.assistants.map((a) => (
            <tr key={a.assistant_id}>
              <td>
                <Link to="/assistants/$assistantId" params={{ assistantId: a.assistant_id }}>
                  {a.name}
                </Link>
              </td>
              <td>{a.description ?? <span className="muted">—</span>}</td>
              <td>
                <Time at={a.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {assistants.data && assistants.data.assistants.length === 0 && <p className="muted">No assistant yet.</p>}
      {assistants.data && <Pager page={page} totalPages={assistants.data.pagination.total_pages} onPage={setPage} />}
    </>
  );
}
