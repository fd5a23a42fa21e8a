// Functions or tools of the organization (paged by the server) and a form that creates one from the
// built-in example project, whose first deployment starts at once.
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { createResource, listResources, type CodeKind } from '../api/code-resources';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Section, shortId, Time } from '../ui';
import { Writes } from '../role';

export const PLURAL: Record<CodeKind, string> = { function: 'Functions', tool: 'Tools' };

export function CodeResourcesPage({ kind }: { kind: CodeKind }) {
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const navigate = useNavigate();
  const list = useQuery({
    queryKey: queryKeys.codeResources(kind, page),
    placeholderData: keepPreviousData,
    queryFn: () => listResources(kind, page),
  });
  const detail = kind === 'function' ? '/functions/$resourceId' : '/tools/$resourceId';
  const create = useMutation({
    mutationFn: () => createResource(kind, name),
    onSuccess: (r) => navigate({ to: detail, params: { resourceId: r.id } }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>{PLURAL[kind]}</h1>
      <Writes>
        <Section title={`New ${kind} from the example project`}>
          <form onSubmit={submit} className="inline-form">
            <label htmlFor={`${kind}-name`}>Name</label>
            <input
              id={`${kind}-name`}
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={200}
            />
            <button type="submit" disabled={!name.trim() || create.isPending}>
              Create and deploy
            </button>
          </form>
          <ErrorBox error={create.error} />
        </Section>
      </Writes>
      <ErrorBox error={list.error} />
      <table className="list" aria-label={PLURAL[kind]}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Latest deployment</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((r) => (
            <tr key={r.id}>
              <td>
                <Link to={detail} params={{ resourceId: r.id }}>
                  {r.name}
                </Link>
              </td>
              <td className="mono">{shortId(r.latest_deployment_id ?? undefined)}</td>
              <td>
                <Time at={r.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.items.length === 0 && <p className="muted">No {kind} yet.</p>}
      {list.data && <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />}
    </>
  );
}
