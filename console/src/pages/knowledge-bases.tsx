// The organization's knowledge bases (GET /api/knowledge-bases, paged by the server).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { listKnowledgeBases } from '../api/knowledge-bases';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Time } from '../ui';

export function KnowledgeBasesPage() {
  const [page, setPage] = useState(1);
  const kbs = useQuery({
    queryKey: queryKeys.knowledgeBases(page),
    placeholderData: keepPreviousData,
    queryFn: () => listKnowledgeBases(page),
  });
  return (
    <>
      <h1>Knowledge bases</h1>
      <ErrorBox error={kbs.error} />
      <table className="list" aria-label="Knowledge bases">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Retrieval</th>
            <th scope="col">Assets</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {kbs.data?.knowledge_bases.map((kb) => (
            <tr key={kb.knowledge_base_id}>
              <td>
                <Link to="/knowledge-bases/$knowledgeBaseId" params={{ knowledgeBaseId: kb.knowledge_base_id }}>
                  {kb.name}
                </Link>
              </td>
              <td className="mono">{kb.type}</td>
              <td>{kb.retrieval}</td>
              <td className="mono">{kb.asset_paths.join(', ')}</td>
              <td>
                <Time at={kb.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {kbs.data && kbs.data.knowledge_bases.length === 0 && <p className="muted">No knowledge base yet.</p>}
      {kbs.data && <Pager page={page} totalPages={kbs.data.pagination.total_pages} onPage={setPage} />}
    </>
  );
}
