// One bucket: its assets (paged by the server, narrowed by a name prefix), an upload form, and per asset a
// download link and Delete. Bytes move through presigned URLs (POST .../asset-urls/{name}): the upload is
// a PUT of the file to its URL, the download link is its GET URL, made when asked for (they expire).
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { assetUrl, deleteAsset, getBucket, listAssets, uploadAsset } from '../api/buckets';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Section, Time } from '../ui';
import { Writes } from '../role';

const sizeText = (bytes: number | null | undefined) =>
  bytes == null
    ? '—'
    : bytes < 1024
      ? `${bytes} B`
      : bytes < 1 << 20
        ? `${(bytes / 1024).toFixed(1)} KB`
        : `${(bytes / (1 << 20)).toFixed(1)} MB`;

function Upload({ bucketId, onDone }: { bucketId: string; onDone: () => void }) {
  const [file, setFile] = useState<File | undefined>();
  const [name, setName] = useState('');
  // A file input cannot be emptied by state: a new one replaces it after each upload.
  const [inputKey, setInputKey] = useState(0);
  const upload = useMutation({
    mutationFn: () => uploadAsset(bucketId, name.trim() || file!.name, file!),
    onSuccess: () => {
      setFile(undefined);
      setName('');
      setInputKey((k) => k + 1);
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    upload.mutate();
  };
  return (
    <Writes>
      <Section title="Upload">
        <form onSubmit={submit} className="run-form">
          <label htmlFor="upload-file">File</label>
          <input key={inputKey} id="upload-file" type="file" onChange={(e) => setFile(e.target.files?.[0])} required />
          <label htmlFor="upload-name">Asset name (optional; a path like notes/a.txt, default the file's name)</label>
          <input id="upload-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={1000} />
          <button type="submit" disabled={!file || upload.isPending}>
            {upload.isPending ? 'Uploading…' : 'Upload'}
          </button>
        </form>
        <ErrorBox error={upload.error} />
      </Section>
    </Writes>
  );
}

function Download({ bucketId, name }: { bucketId: string; name: string }) {
  const link = useMutation({ mutationFn: () => assetUrl(bucketId, name, 'GET') });
  if (link.data)
    return (
      <a href={link.data.url} download={name.split('/').pop()} aria-label={`Download ${name}`}>
        Download
      </a>
    );
  return (
    <button type="button" onClick={() => link.mutate()} disabled={link.isPending} aria-label={`Link to ${name}`}>
      {link.isError ? 'Retry link' : 'Get link'}
    </button>
  );
}

export function BucketPage() {
  const { bucketId } = useParams({ from: '/buckets/$bucketId' });
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [prefix, setPrefix] = useState('');
  const bucket = useQuery({
    queryKey: queryKeys.bucket(bucketId),
    queryFn: () => getBucket(bucketId),
  });
  const assets = useQuery({
    queryKey: queryKeys.assets.page(bucketId, page, prefix),
    placeholderData: keepPreviousData,
    queryFn: () => listAssets(bucketId, page, prefix),
  });
  const refresh = () => void queries.invalidateQueries({ queryKey: queryKeys.assets.of(bucketId) });
  const remove = useMutation({
    mutationFn: (name: string) => deleteAsset(bucketId, name),
    onSettled: refresh,
  });
  return (
    <>
      <header className="page-header">
        <h1>{bucket.data?.name ?? 'Bucket'}</h1>
        <span className="mono muted">{bucketId}</span>
      </header>
      <ErrorBox error={bucket.error} />
      <Upload bucketId={bucketId} onDone={refresh} />
      <Section title="Assets">
        <div className="filters">
          <label>
            Name starts with
            <input value={prefix} onChange={(e) => (setPrefix(e.target.value), setPage(1))} />
          </label>
        </div>
        <ErrorBox error={assets.error ?? remove.error} />
        <table className="list" aria-label="Assets">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Size</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {assets.data?.assets.map((a) => (
              <tr key={a.name} data-asset={a.name}>
                <td className="mono">{a.name}</td>
                <td>{sizeText(a.size)}</td>
                <td>
                  <Time at={a.updated_at} />
                </td>
                <td className="actions">
                  <Writes>
                    <Download bucketId={bucketId} name={a.name} />
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Delete ${a.name}`}
                      onClick={() => window.confirm(`Delete the asset "${a.name}"?`) && remove.mutate(a.name)}
                    >
                      Delete
                    </button>
                  </Writes>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {assets.data && assets.data.assets.length === 0 && <p className="muted">No asset.</p>}
        {assets.data && <Pager page={page} totalPages={assets.data.pagination.total_pages} onPage={setPage} />}
      </Section>
    </>
  );
}
