// Threads: the organization's (newest first) and one thread's messages, the exchanges a chat shows.
import { api, data } from './client';

export const listThreads = () => data(api.GET('/api/threads', { params: { query: { page_size: 50 } } }));

export const listThreadMessages = (threadId: string) =>
  data(
    api.GET('/api/threads/{thread_id}/messages', {
      params: { path: { thread_id: threadId }, query: { page_size: 100 } },
    }),
  );
