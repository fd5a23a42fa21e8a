// Assistants through their own routes: the list, one assistant, a new one, and a message that starts a
// streamed run of it (in a thread, or in a new one).
import { api, data } from './client';

export const listAssistants = (page: number) =>
  data(api.GET('/api/assistants', { params: { query: { page, page_size: 25 } } }));

export const getAssistant = (id: string) =>
  data(api.GET('/api/assistants/{assistant_id}', { params: { path: { assistant_id: id } } }));

/** A new assistant; blank instructions are left out. */
export const createAssistant = (name: string, instructions: string) =>
  data(api.POST('/api/assistants', { body: { name, ...(instructions.trim() ? { input: instructions } : {}) } }));

/** A streamed run (`stream: true`) with `input`, in `threadId` or a new thread; a blank model is the default. */
export const startChatRun = (assistantId: string, input: string, threadId: string | undefined, model: string) =>
  data(
    api.POST('/api/assistants/{assistant_id}/runs', {
      params: { path: { assistant_id: assistantId } },
      body: {
        input,
        stream: true,
        ...(threadId ? { thread_id: threadId } : { new_thread: true }),
        ...(model.trim() ? { model: model.trim() } : {}),
      },
    }),
  );
