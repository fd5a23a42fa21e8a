// A chat with an assistant in one thread: the thread's exchanges, and a form whose message starts a streamed
// assistant run (in the thread, or in a new one); its answer grows as the run's TextChunkEvent events arrive
// over the run's SSE stream, and joins the thread once the run has ended.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useCallback, useState, type FormEvent } from 'react';
import { startChatRun } from '../api/assistants';
import { queryKeys } from '../api/query-keys';
import type { RunEvent } from '../api/runs';
import { listThreadMessages } from '../api/threads';
import { useRunEvents } from '../live/use-run-events';
import { ErrorBox, Section, StatusBadge } from '../ui';
// The same reading of a stored exchange as the assistant's prompt (griptape stores artifact JSON).
import { messageText } from '../api/message-text';

const answerOf = (events: RunEvent[]) =>
  events
    .filter((e) => e.type === 'TextChunkEvent')
    .map((e) => (e.payload as { token?: string }).token ?? '')
    .join('');

const ENDINGS = ['StructureRunCompleted', 'StructureRunError', 'StructureRunCancelled'];

function StreamingAnswer(props: { runId: string; input: string; onEnded: () => void }) {
  const [ending, setEnding] = useState<string | undefined>();
  const { onEnded } = props;
  const onEvent = useCallback(
    (e: RunEvent) => {
      if (e.origin !== 'SYSTEM' || !ENDINGS.includes(e.type)) return;
      setEnding(e.type);
      onEnded();
    },
    [onEnded],
  );
  const stream = useRunEvents('assistant', props.runId, true, onEvent);
  const answer = answerOf(stream.events);
  const status = ending === 'StructureRunCompleted' ? 'SUCCEEDED' : ending ? 'FAILED' : 'RUNNING';
  return (
    <li className="exchange" data-run-id={props.runId}>
      <p className="said user">{props.input}</p>
      <p className="said assistant" aria-live="polite" aria-label="Answer">
        {answer || <span className="muted">…</span>}
      </p>
      <p className="muted">
        <StatusBadge status={status} />{' '}
        <Link to="/runs/$kind/$runId" params={{ kind: 'assistant', runId: props.runId }}>
          its run
        </Link>
      </p>
    </li>
  );
}

export function Chat(props: { assistantId: string; threadId?: string; onThread: (id: string) => void }) {
  const queries = useQueryClient();
  const [input, setInput] = useState('');
  const [model, setModel] = useState('');
  const [pending, setPending] = useState<
    { runId: string; input: string; index: number; threadId?: string | null } | undefined
  >();
  const messages = useQuery({
    queryKey: queryKeys.threadMessages.of(props.threadId),
    enabled: !!props.threadId,
    queryFn: () => listThreadMessages(props.threadId!),
  });
  const exchanges = props.threadId ? (messages.data?.messages ?? []) : [];
  // The streamed exchange shows until the thread has it.
  const shown = pending && pending.threadId === props.threadId && exchanges.length <= pending.index;
  const send = useMutation({
    mutationFn: (text: string) => startChatRun(props.assistantId, text, props.threadId, model),
    onSuccess: (run, text) => {
      setPending({ runId: run.assistant_run_id, input: text, index: exchanges.length, threadId: run.thread_id });
      setInput('');
      if (run.thread_id && run.thread_id !== props.threadId) props.onThread(run.thread_id);
    },
  });
  const onEnded = useCallback(() => {
    void queries.invalidateQueries({ queryKey: queryKeys.threadMessages.all });
    void queries.invalidateQueries({ queryKey: queryKeys.threads });
  }, [queries]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send.mutate(input);
  };
  return (
    <Section title={props.threadId ? 'Chat' : 'Chat (new thread)'}>
      <ErrorBox error={messages.error} />
      <ol className="conversation" aria-label="Conversation">
        {exchanges.map((m) => (
          <li key={m.message_id} className="exchange">
            <p className="said user">{messageText(m.input)}</p>
            <p className="said assistant">{messageText(m.output)}</p>
          </li>
        ))}
        {pending && shown && (
          <StreamingAnswer key={pending.runId} runId={pending.runId} input={pending.input} onEnded={onEnded} />
        )}
      </ol>
      <form onSubmit={submit} className="run-form">
        <label htmlFor="chat-input">Message</label>
        <textarea id="chat-input" rows={2} value={input} onChange={(e) => setInput(e.target.value)} required />
        <label htmlFor="chat-model">Model (provider/model; empty for the default)</label>
        <input id="chat-model" value={model} onChange={(e) => setModel(e.target.value)} maxLength={200} />
        <button type="submit" disabled={!input.trim() || send.isPending}>
          Send
        </button>
      </form>
      <ErrorBox error={send.error} />
    </Section>
  );
}
