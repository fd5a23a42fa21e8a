// Knowledge bases: the list, one knowledge base, its jobs, a new job, and a query of its chunks.
import { api, data } from './client';

const ofKnowledgeBase = (id: string) => ({ path: { knowledge_base_id: id } });

export const listKnowledgeBases = (page: number) =>
  data(api.GET('/api/knowledge-bases', { params: { query: { page, page_size: 25 } } }));

export const getKnowledgeBase = (id: string) =>
  data(api.GET('/api/knowledge-bases/{knowledge_base_id}', { params: ofKnowledgeBase(id) }));

export const listKnowledgeBaseJobs = (id: string) =>
  data(
    api.GET('/api/knowledge-bases/{knowledge_base_id}/knowledge-base-jobs', {
      params: { ...ofKnowledgeBase(id), query: { page_size: 10 } },
    }),
  );

export const startKnowledgeBaseJob = (id: string) =>
  data(api.POST('/api/knowledge-bases/{knowledge_base_id}/knowledge-base-jobs', { params: ofKnowledgeBase(id) }));

/** The `count` best chunks for `query`, ranked by the knowledge base's retrieval mode. */
export const queryKnowledgeBase = (id: string, query: string, count: number) =>
  data(
    api.POST('/api/knowledge-bases/{knowledge_base_id}/query', {
      params: ofKnowledgeBase(id),
      body: { query, query_args: { count } },
    }),
  );
