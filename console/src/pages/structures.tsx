// The organization's structures (paged by the server) and a form that creates one from the example project
// (`code: {default: {}}`), whose first deployment starts at once.
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { queryKeys } from '../api/query-keys';
import { createStructure, listStructures } from '../api/structures';
import { ErrorBox, Pager, Section, shortId, Time } from '../ui';
import { Writes } from '../role';

export function StructuresPage() {
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const navigate = useNavigate();
  const structures = useQuery({
    queryKey: queryKeys.structures(page),
    placeholderData: keepPreviousData,
    queryFn: () => listStructures(page),
  });
  const create = useMutation({
    mutationFn: () => createStructure(name),
    onSuccess: (s) => navigate({ to: '/structures/$structureId', params: { structureId: s.structure_id } }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>Structures</h1>
      <Writes>
        <Section title="New structure from the example project">
          <form onSubmit={submit} className="inline-form">
            <label htmlFor="structure-name">Name</label>
            <input
              id="structure-name"
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
      <ErrorBox error={structures.error} />
      <table className="list" aria-label="Structures">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Latest deployment</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {structures.data?.structures.map((s) => (
            <tr key={s.structure_id}>
              <td>
                <Link to="/structures/$structureId" params={{ structureId: s.structure_id }}>
                  {s.name}
                </Link>
              </td>
              <td className="mono">{shortId(s.latest_deployment_id)}</td>
              <td>
                <Time at={s.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {structures.data && structures.data.structures.length === 0 && <p className="muted">No structure yet.</p>}
      {structures.data && <Pager page={page} totalPages={structures.data.pagination.total_pages} onPage={setPage} />}
    </>
  );
}
