// The organization's buckets (paged by the server) and a form that creates one; each opens its assets.
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { createBucket, listBuckets } from '../api/buckets';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Section, Time } from '../ui';
import { Writes } from '../role';

export function BucketsPage() {
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const navigate = useNavigate();
  const buckets = useQuery({
    queryKey: queryKeys.buckets(page),
    placeholderData: keepPreviousData,
    queryFn: () => listBuckets(page),
  });
  const create = useMutation({
    mutationFn: () => createBucket(name),
    onSuccess: (b) => navigate({ to: '/buckets/$bucketId', params: { bucketId: b.bucket_id } }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>Buckets</h1>
      <Writes>
        <Section title="New bucket">
          <form onSubmit={submit} className="inline-form">
            <label htmlFor="bucket-name">Name</label>
            <input id="bucket-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
            <button type="submit" disabled={!name.trim() || create.isPending}>
              Create bucket
            </button>
          </form>
          <ErrorBox error={create.error} />
        </Section>
      </Writes>
      <ErrorBox error={buckets.error} />
      <table className="list" aria-label="Buckets">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Bucket</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {buckets.data?.buckets.map((b) => (
            <tr key={b.bucket_id}>
              <td>
                <Link to="/buckets/$bucketId" params={{ bucketId: b.bucket_id }}>
                  {b.name}
                </Link>
              </td>
              <td className="mono">{b.bucket_id}</td>
              <td>
                <Time at={b.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {buckets.data && buckets.data.buckets.length === 0 && <p className="muted">No bucket yet.</p>}
      {buckets.data && <Pager page={page} totalPages={buckets.data.pagination.total_pages} onPage={setPage} />}
    </>
  );
}
