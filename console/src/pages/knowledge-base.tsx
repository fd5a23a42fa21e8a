// One knowledge base: the assets it covers, its jobs (progress and errors, re-read while one is open), a button
// that starts a job, and the query playground: the ranked chunks with their score, asset and retrieval mode.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import {
  getKnowledgeBase,
  listKnowledgeBaseJobs,
  queryKnowledgeBase,
  startKnowledgeBaseJob,
} from '../api/knowledge-bases';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Section, shortId, StatusBadge, Time } from '../ui';
import { Writes } from '../role';

const OPEN_JOB_POLL_MS = 1500;
const isOpen = (status: string) => status === 'QUEUED' || status === 'RUNNING';

export function KnowledgeBasePage() {
  const { knowledgeBaseId } = useParams({ from: '/knowledge-bases/$knowledgeBaseId' });
  const queries = useQueryClient();
  const kb = useQuery({
    queryKey: queryKeys.knowledgeBase(knowledgeBaseId),
    queryFn: () => getKnowledgeBase(knowledgeBaseId),
  });
  const jobs = useQuery({
    queryKey: queryKeys.knowledgeBaseJobs(knowledgeBaseId),
    queryFn: () => listKnowledgeBaseJobs(knowledgeBaseId),
    refetchInterval: (q) =>
      q.state.data?.knowledge_base_jobs.some((j) => isOpen(j.status)) ? OPEN_JOB_POLL_MS : false,
  });
  const startJob = useMutation({
    mutationFn: () => startKnowledgeBaseJob(knowledgeBaseId),
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.knowledgeBaseJobs(knowledgeBaseId) }),
  });

  const [question, setQuestion] = useState('');
  const [count, setCount] = useState(5);
  const query = useMutation({
    mutationFn: () => queryKnowledgeBase(knowledgeBaseId, question, count),
  });
  const ask = (e: FormEvent) => {
    e.preventDefault();
    query.mutate();
  };

  return (
    <>
      <h1>{kb.data?.name ?? 'Knowledge base'}</h1>
      <ErrorBox error={kb.error} />
      {kb.data && (
        <dl className="facts">
          <dt>Type</dt>
          <dd className="mono">{kb.data.type}</dd>
          <dt>Retrieval</dt>
          <dd>{kb.data.retrieval}</dd>
          <dt>Embedding dimensions</dt>
          <dd>{kb.data.embedding_dimensions ?? '—'}</dd>
          <dt>Assets</dt>
          <dd className="mono">{kb.data.asset_paths.join(', ') || '—'}</dd>
        </dl>
      )}
      <Section
        title="Jobs"
        actions={
          <Writes>
            <button type="button" onClick={() => startJob.mutate()} disabled={startJob.isPending}>
              Run a job
            </button>
          </Writes>
        }
      >
        <ErrorBox error={jobs.error ?? startJob.error} />
        <table className="list" aria-label="Jobs">
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Status</th>
              <th scope="col">Bytes ingested</th>
              <th scope="col">Errors</th>
              <th scope="col">Created</th>
              <th scope="col">Completed</th>
            </tr>
          </thead>
          <tbody>
            {jobs.data?.knowledge_base_jobs.map((j) => (
              <tr key={j.knowledge_base_job_id}>
                <td className="mono">{shortId(j.knowledge_base_job_id)}</td>
                <td>
                  <StatusBadge status={j.status} />
                </td>
                <td>{j.bytes_ingested ?? '—'}</td>
                <td>
                  {j.errors?.length ? (
                    <ul className="job-errors">
                      {j.errors.map((err, i) => (
                        <li key={i}>
                          <span className="mono">{err.path}</span> {err.type}: {err.message}
                        </li>
                      ))}
                    </ul>
                  ) : (
                    'none'
                  )}
                </td>
                <td>
                  <Time at={j.created_at} />
                </td>
                <td>
                  <Time at={j.completed_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Writes>
        <Section title="Query playground">
          <form onSubmit={ask} className="playground">
            <label htmlFor="kb-query">Query</label>
            <input id="kb-query" value={question} onChange={(e) => setQuestion(e.target.value)} required />
            <label htmlFor="kb-count">Results</label>
            <input
              id="kb-count"
              type="number"
              min={1}
              max={100}
              value={count}
              onChange={(e) => setCount(Number(e.target.value) || 5)}
            />
            <button type="submit" disabled={!question.trim() || query.isPending}>
              Query
            </button>
          </form>
          <ErrorBox error={query.error} />
          {query.data && (
            <>
              <p className="muted">
                {query.data.entries.length} chunks, retrieval <strong>{kb.data?.retrieval}</strong>
              </p>
              <table className="list" aria-label="Results">
                <thead>
                  <tr>
                    <th scope="col">Rank</th>
                    <th scope="col">Score</th>
                    <th scope="col">Asset</th>
                    <th scope="col">Chunk</th>
                  </tr>
                </thead>
                <tbody>
                  {query.data.entries.map((entry, i) => (
                    <tr key={entry.id}>
                      <td>{i + 1}</td>
                      <td className="mono">{entry.score.toFixed(4)}</td>
                      <td className="mono">
                        {entry.meta.asset_path}
                        {entry.meta.chunk_index !== undefined && ` #${entry.meta.chunk_index}`}
                      </td>
                      <td className="chunk">{entry.meta.content}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </Section>
      </Writes>
    </>
  );
}
