// One assistant: its threads (the organization's, newest first) and a chat in the chosen one, or in a new
// thread that the first message creates; its schedules; its runs are the Runs page, filtered.
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { getAssistant } from '../api/assistants';
import { queryKeys } from '../api/query-keys';
import { listThreads } from '../api/threads';
import { Chat } from '../components/chat';
import { Schedules } from '../components/schedules';
import { ErrorBox, Section } from '../ui';
import { Writes } from '../role';

export function AssistantPage() {
  const { assistantId } = useParams({ from: '/assistants/$assistantId' });
  const [threadId, setThreadId] = useState<string | undefined>();
  const assistant = useQuery({
    queryKey: queryKeys.assistant(assistantId),
    queryFn: () => getAssistant(assistantId),
  });
  const threads = useQuery({
    queryKey: queryKeys.threads,
    queryFn: listThreads,
  });
  return (
    <>
      <header className="page-header">
        <h1>{assistant.data?.name ?? 'Assistant'}</h1>
        <Link to="/runs" search={{ kind: 'assistant', resource_id: assistantId }}>
          Its runs
        </Link>
      </header>
      <ErrorBox error={assistant.error ?? threads.error} />
      <div className="chat-layout">
        <Section title="Threads">
          <ul className="thread-list">
            <li>
              <button type="button" aria-pressed={!threadId} onClick={() => setThreadId(undefined)}>
                New thread
              </button>
            </li>
            {threads.data?.threads.map((t) => (
              <li key={t.thread_id}>
                <button type="button" aria-pressed={threadId === t.thread_id} onClick={() => setThreadId(t.thread_id)}>
                  {t.name || t.alias || t.thread_id.slice(0, 8)}{' '}
                  <span className="muted">({t.message_count} messages)</span>
                </button>
              </li>
            ))}
          </ul>
        </Section>
        <Writes>
          <Chat assistantId={assistantId} threadId={threadId} onThread={setThreadId} />
        </Writes>
      </div>
      <Schedules kind="assistant" resourceId={assistantId} />
    </>
  );
}
